from ahp.v1 import context_pb2 as _context_pb2
from ahp.v1 import decision_pb2 as _decision_pb2
from buf.validate import validate_pb2 as _validate_pb2
from google.protobuf import struct_pb2 as _struct_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Iterable as _Iterable, Mapping as _Mapping, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class AgentInfo(_message.Message):
    __slots__ = ["capabilities", "framework", "version"]
    CAPABILITIES_FIELD_NUMBER: _ClassVar[int]
    FRAMEWORK_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    capabilities: _containers.RepeatedScalarFieldContainer[str]
    framework: str
    version: str
    def __init__(self, framework: _Optional[str] = ..., version: _Optional[str] = ..., capabilities: _Optional[_Iterable[str]] = ...) -> None: ...

class HandshakeRequest(_message.Message):
    __slots__ = ["agent_id", "agent_info", "protocol_version", "session_id"]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    AGENT_INFO_FIELD_NUMBER: _ClassVar[int]
    PROTOCOL_VERSION_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    agent_info: AgentInfo
    protocol_version: str
    session_id: str
    def __init__(self, protocol_version: _Optional[str] = ..., agent_info: _Optional[_Union[AgentInfo, _Mapping]] = ..., session_id: _Optional[str] = ..., agent_id: _Optional[str] = ...) -> None: ...

class HandshakeResponse(_message.Message):
    __slots__ = ["config", "harness_info", "protocol_version", "session_token"]
    CONFIG_FIELD_NUMBER: _ClassVar[int]
    HARNESS_INFO_FIELD_NUMBER: _ClassVar[int]
    PROTOCOL_VERSION_FIELD_NUMBER: _ClassVar[int]
    SESSION_TOKEN_FIELD_NUMBER: _ClassVar[int]
    config: HarnessConfig
    harness_info: HarnessInfo
    protocol_version: str
    session_token: str
    def __init__(self, protocol_version: _Optional[str] = ..., harness_info: _Optional[_Union[HarnessInfo, _Mapping]] = ..., session_token: _Optional[str] = ..., config: _Optional[_Union[HarnessConfig, _Mapping]] = ...) -> None: ...

class HarnessConfig(_message.Message):
    __slots__ = ["batch_size", "max_depth", "timeout_ms"]
    BATCH_SIZE_FIELD_NUMBER: _ClassVar[int]
    MAX_DEPTH_FIELD_NUMBER: _ClassVar[int]
    TIMEOUT_MS_FIELD_NUMBER: _ClassVar[int]
    batch_size: int
    max_depth: int
    timeout_ms: int
    def __init__(self, timeout_ms: _Optional[int] = ..., batch_size: _Optional[int] = ..., max_depth: _Optional[int] = ...) -> None: ...

class HarnessInfo(_message.Message):
    __slots__ = ["capabilities", "name", "version"]
    CAPABILITIES_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    capabilities: _containers.RepeatedScalarFieldContainer[str]
    name: str
    version: str
    def __init__(self, name: _Optional[str] = ..., version: _Optional[str] = ..., capabilities: _Optional[_Iterable[str]] = ...) -> None: ...

class QueryRequest(_message.Message):
    __slots__ = ["agent_id", "payload", "query_type", "session_id", "source"]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    PAYLOAD_FIELD_NUMBER: _ClassVar[int]
    QUERY_TYPE_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    payload: _struct_pb2.Value
    query_type: str
    session_id: str
    source: str
    def __init__(self, session_id: _Optional[str] = ..., agent_id: _Optional[str] = ..., query_type: _Optional[str] = ..., payload: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ..., source: _Optional[str] = ...) -> None: ...

class QueryResponse(_message.Message):
    __slots__ = ["alternatives", "answer", "decision", "reason"]
    ALTERNATIVES_FIELD_NUMBER: _ClassVar[int]
    ANSWER_FIELD_NUMBER: _ClassVar[int]
    DECISION_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    alternatives: _context_pb2.StringList
    answer: _struct_pb2.Value
    decision: _decision_pb2.Decision
    reason: str
    def __init__(self, answer: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ..., reason: _Optional[str] = ..., alternatives: _Optional[_Union[_context_pb2.StringList, _Mapping]] = ..., decision: _Optional[_Union[_decision_pb2.Decision, _Mapping]] = ...) -> None: ...
