from google.protobuf import struct_pb2 as _struct_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Iterable as _Iterable, Mapping as _Mapping, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class EventContext(_message.Message):
    __slots__ = ["capabilities", "current_task", "memory_summary", "recent_facts", "session_stats"]
    CAPABILITIES_FIELD_NUMBER: _ClassVar[int]
    CURRENT_TASK_FIELD_NUMBER: _ClassVar[int]
    MEMORY_SUMMARY_FIELD_NUMBER: _ClassVar[int]
    RECENT_FACTS_FIELD_NUMBER: _ClassVar[int]
    SESSION_STATS_FIELD_NUMBER: _ClassVar[int]
    capabilities: _struct_pb2.Struct
    current_task: str
    memory_summary: MemorySummary
    recent_facts: FactList
    session_stats: SessionStats
    def __init__(self, recent_facts: _Optional[_Union[FactList, _Mapping]] = ..., memory_summary: _Optional[_Union[MemorySummary, _Mapping]] = ..., session_stats: _Optional[_Union[SessionStats, _Mapping]] = ..., current_task: _Optional[str] = ..., capabilities: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class Fact(_message.Message):
    __slots__ = ["confidence", "content", "source"]
    CONFIDENCE_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    confidence: float
    content: str
    source: str
    def __init__(self, content: _Optional[str] = ..., source: _Optional[str] = ..., confidence: _Optional[float] = ...) -> None: ...

class FactList(_message.Message):
    __slots__ = ["values"]
    VALUES_FIELD_NUMBER: _ClassVar[int]
    values: _containers.RepeatedCompositeFieldContainer[Fact]
    def __init__(self, values: _Optional[_Iterable[_Union[Fact, _Mapping]]] = ...) -> None: ...

class MemorySummary(_message.Message):
    __slots__ = ["memory_type", "recent_topics", "total_items"]
    MEMORY_TYPE_FIELD_NUMBER: _ClassVar[int]
    RECENT_TOPICS_FIELD_NUMBER: _ClassVar[int]
    TOTAL_ITEMS_FIELD_NUMBER: _ClassVar[int]
    memory_type: str
    recent_topics: _containers.RepeatedScalarFieldContainer[str]
    total_items: int
    def __init__(self, memory_type: _Optional[str] = ..., total_items: _Optional[int] = ..., recent_topics: _Optional[_Iterable[str]] = ...) -> None: ...

class SessionStats(_message.Message):
    __slots__ = ["duration_ms", "error_count", "total_actions", "total_tokens"]
    DURATION_MS_FIELD_NUMBER: _ClassVar[int]
    ERROR_COUNT_FIELD_NUMBER: _ClassVar[int]
    TOTAL_ACTIONS_FIELD_NUMBER: _ClassVar[int]
    TOTAL_TOKENS_FIELD_NUMBER: _ClassVar[int]
    duration_ms: int
    error_count: int
    total_actions: int
    total_tokens: int
    def __init__(self, total_actions: _Optional[int] = ..., total_tokens: _Optional[int] = ..., duration_ms: _Optional[int] = ..., error_count: _Optional[int] = ...) -> None: ...

class StringList(_message.Message):
    __slots__ = ["values"]
    VALUES_FIELD_NUMBER: _ClassVar[int]
    values: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, values: _Optional[_Iterable[str]] = ...) -> None: ...
