from buf.validate import validate_pb2 as _validate_pb2
from google.protobuf import struct_pb2 as _struct_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Iterable as _Iterable, Mapping as _Mapping, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Attempt(_message.Message):
    __slots__ = ["id", "number", "unknown_fields"]
    ID_FIELD_NUMBER: _ClassVar[int]
    NUMBER_FIELD_NUMBER: _ClassVar[int]
    UNKNOWN_FIELDS_FIELD_NUMBER: _ClassVar[int]
    id: str
    number: int
    unknown_fields: _struct_pb2.Struct
    def __init__(self, id: _Optional[str] = ..., number: _Optional[int] = ..., unknown_fields: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class Catalogue(_message.Message):
    __slots__ = ["attempt", "error", "execution", "gaps", "items", "model", "outcome", "parent_event_id", "path", "synthesized", "trigger", "turn", "usage"]
    ATTEMPT_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    EXECUTION_FIELD_NUMBER: _ClassVar[int]
    GAPS_FIELD_NUMBER: _ClassVar[int]
    ITEMS_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    OUTCOME_FIELD_NUMBER: _ClassVar[int]
    PARENT_EVENT_ID_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    SYNTHESIZED_FIELD_NUMBER: _ClassVar[int]
    TRIGGER_FIELD_NUMBER: _ClassVar[int]
    TURN_FIELD_NUMBER: _ClassVar[int]
    USAGE_FIELD_NUMBER: _ClassVar[int]
    attempt: Attempt
    error: EventError
    execution: Execution
    gaps: _containers.RepeatedCompositeFieldContainer[Gap]
    items: _struct_pb2.ListValue
    model: ModelRef
    outcome: str
    parent_event_id: str
    path: str
    synthesized: bool
    trigger: str
    turn: TurnRef
    usage: Usage
    def __init__(self, path: _Optional[str] = ..., execution: _Optional[_Union[Execution, _Mapping]] = ..., outcome: _Optional[str] = ..., error: _Optional[_Union[EventError, _Mapping]] = ..., model: _Optional[_Union[ModelRef, _Mapping]] = ..., attempt: _Optional[_Union[Attempt, _Mapping]] = ..., usage: _Optional[_Union[Usage, _Mapping]] = ..., turn: _Optional[_Union[TurnRef, _Mapping]] = ..., parent_event_id: _Optional[str] = ..., gaps: _Optional[_Iterable[_Union[Gap, _Mapping]]] = ..., synthesized: bool = ..., trigger: _Optional[str] = ..., items: _Optional[_Union[_struct_pb2.ListValue, _Mapping]] = ...) -> None: ...

class EventError(_message.Message):
    __slots__ = ["code", "message", "native", "status", "unknown_fields"]
    CLASS_FIELD_NUMBER: _ClassVar[int]
    CODE_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    NATIVE_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    UNKNOWN_FIELDS_FIELD_NUMBER: _ClassVar[int]
    code: _struct_pb2.Value
    message: str
    native: _struct_pb2.Value
    status: _struct_pb2.Value
    unknown_fields: _struct_pb2.Struct
    def __init__(self, message: _Optional[str] = ..., code: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ..., status: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ..., native: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ..., unknown_fields: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., **kwargs) -> None: ...

class Execution(_message.Message):
    __slots__ = ["detail", "reason", "status", "unknown_fields"]
    DETAIL_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    UNKNOWN_FIELDS_FIELD_NUMBER: _ClassVar[int]
    detail: str
    reason: str
    status: str
    unknown_fields: _struct_pb2.Struct
    def __init__(self, status: _Optional[str] = ..., reason: _Optional[str] = ..., detail: _Optional[str] = ..., unknown_fields: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class Gap(_message.Message):
    __slots__ = ["path", "reason"]
    PATH_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    path: str
    reason: str
    def __init__(self, path: _Optional[str] = ..., reason: _Optional[str] = ...) -> None: ...

class ModelRef(_message.Message):
    __slots__ = ["id", "provider", "unknown_fields"]
    ID_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_FIELD_NUMBER: _ClassVar[int]
    UNKNOWN_FIELDS_FIELD_NUMBER: _ClassVar[int]
    id: str
    provider: str
    unknown_fields: _struct_pb2.Struct
    def __init__(self, id: _Optional[str] = ..., provider: _Optional[str] = ..., unknown_fields: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class TurnRef(_message.Message):
    __slots__ = ["id", "synthesized", "unknown_fields"]
    ID_FIELD_NUMBER: _ClassVar[int]
    SYNTHESIZED_FIELD_NUMBER: _ClassVar[int]
    UNKNOWN_FIELDS_FIELD_NUMBER: _ClassVar[int]
    id: str
    synthesized: bool
    unknown_fields: _struct_pb2.Struct
    def __init__(self, id: _Optional[str] = ..., synthesized: bool = ..., unknown_fields: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class Usage(_message.Message):
    __slots__ = ["cache_read_tokens", "cache_write_tokens", "completeness", "cost", "input_tokens", "kind", "output_tokens", "provenance", "scope", "unknown_fields"]
    CACHE_READ_TOKENS_FIELD_NUMBER: _ClassVar[int]
    CACHE_WRITE_TOKENS_FIELD_NUMBER: _ClassVar[int]
    COMPLETENESS_FIELD_NUMBER: _ClassVar[int]
    COST_FIELD_NUMBER: _ClassVar[int]
    INPUT_TOKENS_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_TOKENS_FIELD_NUMBER: _ClassVar[int]
    PROVENANCE_FIELD_NUMBER: _ClassVar[int]
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    UNKNOWN_FIELDS_FIELD_NUMBER: _ClassVar[int]
    cache_read_tokens: int
    cache_write_tokens: int
    completeness: str
    cost: _struct_pb2.Struct
    input_tokens: int
    kind: str
    output_tokens: int
    provenance: str
    scope: str
    unknown_fields: _struct_pb2.Struct
    def __init__(self, kind: _Optional[str] = ..., scope: _Optional[str] = ..., completeness: _Optional[str] = ..., provenance: _Optional[str] = ..., input_tokens: _Optional[int] = ..., output_tokens: _Optional[int] = ..., cache_read_tokens: _Optional[int] = ..., cache_write_tokens: _Optional[int] = ..., cost: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., unknown_fields: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...
