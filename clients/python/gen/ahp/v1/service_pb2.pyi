from ahp.v1 import decision_pb2 as _decision_pb2
from ahp.v1 import event_pb2 as _event_pb2
from ahp.v1 import harness_pb2 as _harness_pb2
from buf.validate import validate_pb2 as _validate_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Iterable as _Iterable, Mapping as _Mapping, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class ConfirmRequest(_message.Message):
    __slots__ = ["event"]
    EVENT_FIELD_NUMBER: _ClassVar[int]
    event: _event_pb2.Event
    def __init__(self, event: _Optional[_Union[_event_pb2.Event, _Mapping]] = ...) -> None: ...

class ConfirmResponse(_message.Message):
    __slots__ = ["decision"]
    DECISION_FIELD_NUMBER: _ClassVar[int]
    decision: _decision_pb2.Decision
    def __init__(self, decision: _Optional[_Union[_decision_pb2.Decision, _Mapping]] = ...) -> None: ...

class DetectIntentRequest(_message.Message):
    __slots__ = ["event"]
    EVENT_FIELD_NUMBER: _ClassVar[int]
    event: _event_pb2.Event
    def __init__(self, event: _Optional[_Union[_event_pb2.Event, _Mapping]] = ...) -> None: ...

class DetectIntentResponse(_message.Message):
    __slots__ = ["decision"]
    DECISION_FIELD_NUMBER: _ClassVar[int]
    decision: _decision_pb2.Decision
    def __init__(self, decision: _Optional[_Union[_decision_pb2.Decision, _Mapping]] = ...) -> None: ...

class GetCapabilitiesRequest(_message.Message):
    __slots__ = []
    def __init__(self) -> None: ...

class GetCapabilitiesResponse(_message.Message):
    __slots__ = ["effects", "harness_config", "harness_protocol_version", "hooks_protocol_versions", "interceptable_event_types", "observable_event_types", "server_version"]
    EFFECTS_FIELD_NUMBER: _ClassVar[int]
    HARNESS_CONFIG_FIELD_NUMBER: _ClassVar[int]
    HARNESS_PROTOCOL_VERSION_FIELD_NUMBER: _ClassVar[int]
    HOOKS_PROTOCOL_VERSIONS_FIELD_NUMBER: _ClassVar[int]
    INTERCEPTABLE_EVENT_TYPES_FIELD_NUMBER: _ClassVar[int]
    OBSERVABLE_EVENT_TYPES_FIELD_NUMBER: _ClassVar[int]
    SERVER_VERSION_FIELD_NUMBER: _ClassVar[int]
    effects: _containers.RepeatedScalarFieldContainer[_decision_pb2.EffectKind]
    harness_config: _harness_pb2.HarnessConfig
    harness_protocol_version: str
    hooks_protocol_versions: _containers.RepeatedScalarFieldContainer[str]
    interceptable_event_types: _containers.RepeatedScalarFieldContainer[_event_pb2.EventType]
    observable_event_types: _containers.RepeatedScalarFieldContainer[_event_pb2.EventType]
    server_version: str
    def __init__(self, server_version: _Optional[str] = ..., hooks_protocol_versions: _Optional[_Iterable[str]] = ..., harness_protocol_version: _Optional[str] = ..., interceptable_event_types: _Optional[_Iterable[_Union[_event_pb2.EventType, str]]] = ..., observable_event_types: _Optional[_Iterable[_Union[_event_pb2.EventType, str]]] = ..., effects: _Optional[_Iterable[_Union[_decision_pb2.EffectKind, str]]] = ..., harness_config: _Optional[_Union[_harness_pb2.HarnessConfig, _Mapping]] = ...) -> None: ...

class HandleRateLimitRequest(_message.Message):
    __slots__ = ["event"]
    EVENT_FIELD_NUMBER: _ClassVar[int]
    event: _event_pb2.Event
    def __init__(self, event: _Optional[_Union[_event_pb2.Event, _Mapping]] = ...) -> None: ...

class HandleRateLimitResponse(_message.Message):
    __slots__ = ["decision"]
    DECISION_FIELD_NUMBER: _ClassVar[int]
    decision: _decision_pb2.Decision
    def __init__(self, decision: _Optional[_Union[_decision_pb2.Decision, _Mapping]] = ...) -> None: ...

class IdleRequest(_message.Message):
    __slots__ = ["event"]
    EVENT_FIELD_NUMBER: _ClassVar[int]
    event: _event_pb2.Event
    def __init__(self, event: _Optional[_Union[_event_pb2.Event, _Mapping]] = ...) -> None: ...

class IdleResponse(_message.Message):
    __slots__ = ["decision"]
    DECISION_FIELD_NUMBER: _ClassVar[int]
    decision: _decision_pb2.Decision
    def __init__(self, decision: _Optional[_Union[_decision_pb2.Decision, _Mapping]] = ...) -> None: ...

class InterceptBatchRequest(_message.Message):
    __slots__ = ["capabilities", "events"]
    CAPABILITIES_FIELD_NUMBER: _ClassVar[int]
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    capabilities: _decision_pb2.Capabilities
    events: _containers.RepeatedCompositeFieldContainer[_event_pb2.Event]
    def __init__(self, events: _Optional[_Iterable[_Union[_event_pb2.Event, _Mapping]]] = ..., capabilities: _Optional[_Union[_decision_pb2.Capabilities, _Mapping]] = ...) -> None: ...

class InterceptBatchResponse(_message.Message):
    __slots__ = ["decisions"]
    DECISIONS_FIELD_NUMBER: _ClassVar[int]
    decisions: _containers.RepeatedCompositeFieldContainer[_decision_pb2.Decision]
    def __init__(self, decisions: _Optional[_Iterable[_Union[_decision_pb2.Decision, _Mapping]]] = ...) -> None: ...

class InterceptRequest(_message.Message):
    __slots__ = ["capabilities", "event"]
    CAPABILITIES_FIELD_NUMBER: _ClassVar[int]
    EVENT_FIELD_NUMBER: _ClassVar[int]
    capabilities: _decision_pb2.Capabilities
    event: _event_pb2.Event
    def __init__(self, event: _Optional[_Union[_event_pb2.Event, _Mapping]] = ..., capabilities: _Optional[_Union[_decision_pb2.Capabilities, _Mapping]] = ...) -> None: ...

class InterceptResponse(_message.Message):
    __slots__ = ["decision"]
    DECISION_FIELD_NUMBER: _ClassVar[int]
    decision: _decision_pb2.Decision
    def __init__(self, decision: _Optional[_Union[_decision_pb2.Decision, _Mapping]] = ...) -> None: ...

class InterceptStreamRequest(_message.Message):
    __slots__ = ["capabilities", "event", "request_id", "timeout_ms"]
    CAPABILITIES_FIELD_NUMBER: _ClassVar[int]
    EVENT_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    TIMEOUT_MS_FIELD_NUMBER: _ClassVar[int]
    capabilities: _decision_pb2.Capabilities
    event: _event_pb2.Event
    request_id: str
    timeout_ms: int
    def __init__(self, event: _Optional[_Union[_event_pb2.Event, _Mapping]] = ..., capabilities: _Optional[_Union[_decision_pb2.Capabilities, _Mapping]] = ..., request_id: _Optional[str] = ..., timeout_ms: _Optional[int] = ...) -> None: ...

class InterceptStreamResponse(_message.Message):
    __slots__ = ["decision", "error", "event_id", "request_id"]
    DECISION_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    EVENT_ID_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    decision: _decision_pb2.Decision
    error: StreamError
    event_id: str
    request_id: str
    def __init__(self, event_id: _Optional[str] = ..., decision: _Optional[_Union[_decision_pb2.Decision, _Mapping]] = ..., error: _Optional[_Union[StreamError, _Mapping]] = ..., request_id: _Optional[str] = ...) -> None: ...

class ObserveRequest(_message.Message):
    __slots__ = ["event"]
    EVENT_FIELD_NUMBER: _ClassVar[int]
    event: _event_pb2.Event
    def __init__(self, event: _Optional[_Union[_event_pb2.Event, _Mapping]] = ...) -> None: ...

class ObserveResponse(_message.Message):
    __slots__ = ["duplicate"]
    DUPLICATE_FIELD_NUMBER: _ClassVar[int]
    duplicate: bool
    def __init__(self, duplicate: bool = ...) -> None: ...

class ObserveStreamRequest(_message.Message):
    __slots__ = ["event", "events"]
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    EVENT_FIELD_NUMBER: _ClassVar[int]
    event: _event_pb2.Event
    events: _containers.RepeatedCompositeFieldContainer[_event_pb2.Event]
    def __init__(self, event: _Optional[_Union[_event_pb2.Event, _Mapping]] = ..., events: _Optional[_Iterable[_Union[_event_pb2.Event, _Mapping]]] = ...) -> None: ...

class ObserveStreamResponse(_message.Message):
    __slots__ = ["accepted", "duplicates"]
    ACCEPTED_FIELD_NUMBER: _ClassVar[int]
    DUPLICATES_FIELD_NUMBER: _ClassVar[int]
    accepted: int
    duplicates: int
    def __init__(self, accepted: _Optional[int] = ..., duplicates: _Optional[int] = ...) -> None: ...

class PerceiveContextRequest(_message.Message):
    __slots__ = ["event"]
    EVENT_FIELD_NUMBER: _ClassVar[int]
    event: _event_pb2.Event
    def __init__(self, event: _Optional[_Union[_event_pb2.Event, _Mapping]] = ...) -> None: ...

class PerceiveContextResponse(_message.Message):
    __slots__ = ["decision"]
    DECISION_FIELD_NUMBER: _ClassVar[int]
    decision: _decision_pb2.Decision
    def __init__(self, decision: _Optional[_Union[_decision_pb2.Decision, _Mapping]] = ...) -> None: ...

class PlanRequest(_message.Message):
    __slots__ = ["event"]
    EVENT_FIELD_NUMBER: _ClassVar[int]
    event: _event_pb2.Event
    def __init__(self, event: _Optional[_Union[_event_pb2.Event, _Mapping]] = ...) -> None: ...

class PlanResponse(_message.Message):
    __slots__ = ["decision"]
    DECISION_FIELD_NUMBER: _ClassVar[int]
    decision: _decision_pb2.Decision
    def __init__(self, decision: _Optional[_Union[_decision_pb2.Decision, _Mapping]] = ...) -> None: ...

class ReasonRequest(_message.Message):
    __slots__ = ["event"]
    EVENT_FIELD_NUMBER: _ClassVar[int]
    event: _event_pb2.Event
    def __init__(self, event: _Optional[_Union[_event_pb2.Event, _Mapping]] = ...) -> None: ...

class ReasonResponse(_message.Message):
    __slots__ = ["decision"]
    DECISION_FIELD_NUMBER: _ClassVar[int]
    decision: _decision_pb2.Decision
    def __init__(self, decision: _Optional[_Union[_decision_pb2.Decision, _Mapping]] = ...) -> None: ...

class RecallMemoryRequest(_message.Message):
    __slots__ = ["event"]
    EVENT_FIELD_NUMBER: _ClassVar[int]
    event: _event_pb2.Event
    def __init__(self, event: _Optional[_Union[_event_pb2.Event, _Mapping]] = ...) -> None: ...

class RecallMemoryResponse(_message.Message):
    __slots__ = ["decision"]
    DECISION_FIELD_NUMBER: _ClassVar[int]
    decision: _decision_pb2.Decision
    def __init__(self, decision: _Optional[_Union[_decision_pb2.Decision, _Mapping]] = ...) -> None: ...

class StreamError(_message.Message):
    __slots__ = ["code", "message"]
    CODE_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    code: str
    message: str
    def __init__(self, code: _Optional[str] = ..., message: _Optional[str] = ...) -> None: ...

class WatchRequest(_message.Message):
    __slots__ = ["decisions_only", "event_types", "flush_interval_ms", "session_id", "tool_kinds"]
    DECISIONS_ONLY_FIELD_NUMBER: _ClassVar[int]
    EVENT_TYPES_FIELD_NUMBER: _ClassVar[int]
    FLUSH_INTERVAL_MS_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    TOOL_KINDS_FIELD_NUMBER: _ClassVar[int]
    decisions_only: bool
    event_types: _containers.RepeatedScalarFieldContainer[_event_pb2.EventType]
    flush_interval_ms: int
    session_id: str
    tool_kinds: _containers.RepeatedScalarFieldContainer[_event_pb2.ToolKind]
    def __init__(self, session_id: _Optional[str] = ..., event_types: _Optional[_Iterable[_Union[_event_pb2.EventType, str]]] = ..., tool_kinds: _Optional[_Iterable[_Union[_event_pb2.ToolKind, str]]] = ..., decisions_only: bool = ..., flush_interval_ms: _Optional[int] = ...) -> None: ...

class WatchResponse(_message.Message):
    __slots__ = ["decision", "event", "time"]
    DECISION_FIELD_NUMBER: _ClassVar[int]
    EVENT_FIELD_NUMBER: _ClassVar[int]
    TIME_FIELD_NUMBER: _ClassVar[int]
    decision: _decision_pb2.Decision
    event: _event_pb2.Event
    time: str
    def __init__(self, event: _Optional[_Union[_event_pb2.Event, _Mapping]] = ..., decision: _Optional[_Union[_decision_pb2.Decision, _Mapping]] = ..., time: _Optional[str] = ...) -> None: ...
