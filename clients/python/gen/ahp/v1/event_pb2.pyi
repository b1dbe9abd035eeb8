from ahp.v1 import catalogue_pb2 as _catalogue_pb2
from ahp.v1 import context_pb2 as _context_pb2
from ahp.v1 import contract_pb2 as _contract_pb2
from ahp.v1 import options_pb2 as _options_pb2
from ahp.v1 import typed_pb2 as _typed_pb2
from buf.validate import validate_pb2 as _validate_pb2
from google.protobuf import struct_pb2 as _struct_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Iterable as _Iterable, Mapping as _Mapping, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor
DIALECT_HARNESS: Dialect
DIALECT_HOOKS: Dialect
DIALECT_NATIVE: Dialect
DIALECT_UNSPECIFIED: Dialect
EVENT_TYPE_CONFIG_CHANGE_AFTER: EventType
EVENT_TYPE_CONFIG_CHANGE_BEFORE: EventType
EVENT_TYPE_CONFIRMATION: EventType
EVENT_TYPE_CONTEXT_COMPACT_AFTER: EventType
EVENT_TYPE_CONTEXT_COMPACT_BEFORE: EventType
EVENT_TYPE_CONTEXT_PERCEPTION: EventType
EVENT_TYPE_ERROR: EventType
EVENT_TYPE_FILE_CHANGED: EventType
EVENT_TYPE_HANDSHAKE: EventType
EVENT_TYPE_HEARTBEAT: EventType
EVENT_TYPE_HOOK_FAILURE: EventType
EVENT_TYPE_IDLE: EventType
EVENT_TYPE_INTENT_DETECTION: EventType
EVENT_TYPE_MEMORY_RECALL: EventType
EVENT_TYPE_MODEL_ERROR: EventType
EVENT_TYPE_MODEL_REQUEST_BEFORE: EventType
EVENT_TYPE_MODEL_RESPONSE_AFTER: EventType
EVENT_TYPE_MODEL_SWITCH_AFTER: EventType
EVENT_TYPE_MODEL_SWITCH_BEFORE: EventType
EVENT_TYPE_PLANNING: EventType
EVENT_TYPE_QUERY: EventType
EVENT_TYPE_RATE_LIMIT: EventType
EVENT_TYPE_REASONING: EventType
EVENT_TYPE_RUN_LIFECYCLE: EventType
EVENT_TYPE_SESSION_END: EventType
EVENT_TYPE_SESSION_START: EventType
EVENT_TYPE_SUCCESS: EventType
EVENT_TYPE_TASK_CHANGE_AFTER: EventType
EVENT_TYPE_TASK_CHANGE_BEFORE: EventType
EVENT_TYPE_TASK_LIST: EventType
EVENT_TYPE_TOOL_AFTER: EventType
EVENT_TYPE_TOOL_BATCH_AFTER: EventType
EVENT_TYPE_TOOL_BEFORE: EventType
EVENT_TYPE_TOOL_ERROR: EventType
EVENT_TYPE_TOOL_PERMISSION_REQUEST: EventType
EVENT_TYPE_TOOL_PERMISSION_RESOLVED: EventType
EVENT_TYPE_TOOL_PROGRESS: EventType
EVENT_TYPE_TURN_END: EventType
EVENT_TYPE_TURN_FINISH_BEFORE: EventType
EVENT_TYPE_TURN_PROGRESS: EventType
EVENT_TYPE_TURN_START: EventType
EVENT_TYPE_UNSPECIFIED: EventType
EVENT_TYPE_USER_ATTENTION: EventType
EVENT_TYPE_USER_ELICITATION_REQUEST: EventType
EVENT_TYPE_USER_ELICITATION_RESULT: EventType
EVENT_TYPE_USER_MESSAGE_INBOUND: EventType
EVENT_TYPE_USER_MESSAGE_OUTBOUND: EventType
EVENT_TYPE_VERIFICATION: EventType
EVENT_TYPE_WORKSPACE_CHANGE_AFTER: EventType
EVENT_TYPE_WORKSPACE_CHANGE_BEFORE: EventType
SESSION_OUTCOME_CANCELLED: SessionOutcome
SESSION_OUTCOME_COMPLETED: SessionOutcome
SESSION_OUTCOME_ERROR: SessionOutcome
SESSION_OUTCOME_UNKNOWN: SessionOutcome
SESSION_OUTCOME_UNSPECIFIED: SessionOutcome
TOOL_KIND_FETCH: ToolKind
TOOL_KIND_FILE_EDIT: ToolKind
TOOL_KIND_FILE_READ: ToolKind
TOOL_KIND_FILE_WRITE: ToolKind
TOOL_KIND_MCP: ToolKind
TOOL_KIND_OTHER: ToolKind
TOOL_KIND_SEARCH: ToolKind
TOOL_KIND_SHELL: ToolKind
TOOL_KIND_TASK: ToolKind
TOOL_KIND_UNSPECIFIED: ToolKind

class Agent(_message.Message):
    __slots__ = ["id", "type", "unknown_fields"]
    ID_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    UNKNOWN_FIELDS_FIELD_NUMBER: _ClassVar[int]
    id: str
    type: str
    unknown_fields: _struct_pb2.Struct
    def __init__(self, id: _Optional[str] = ..., type: _Optional[str] = ..., unknown_fields: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class Event(_message.Message):
    __slots__ = ["catalogue", "confirmation", "context_perception", "extensions", "harness", "id", "idle", "intent_detection", "memory_recall", "native", "origin", "outcome", "payload", "planning", "rate_limit", "reasoning", "run_lifecycle", "session", "source", "task_list", "time", "tool", "type", "unknown_fields", "verification"]
    CATALOGUE_FIELD_NUMBER: _ClassVar[int]
    CONFIRMATION_FIELD_NUMBER: _ClassVar[int]
    CONTEXT_PERCEPTION_FIELD_NUMBER: _ClassVar[int]
    EXTENSIONS_FIELD_NUMBER: _ClassVar[int]
    HARNESS_FIELD_NUMBER: _ClassVar[int]
    IDLE_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    INTENT_DETECTION_FIELD_NUMBER: _ClassVar[int]
    MEMORY_RECALL_FIELD_NUMBER: _ClassVar[int]
    NATIVE_FIELD_NUMBER: _ClassVar[int]
    ORIGIN_FIELD_NUMBER: _ClassVar[int]
    OUTCOME_FIELD_NUMBER: _ClassVar[int]
    PAYLOAD_FIELD_NUMBER: _ClassVar[int]
    PLANNING_FIELD_NUMBER: _ClassVar[int]
    RATE_LIMIT_FIELD_NUMBER: _ClassVar[int]
    REASONING_FIELD_NUMBER: _ClassVar[int]
    RUN_LIFECYCLE_FIELD_NUMBER: _ClassVar[int]
    SESSION_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    TASK_LIST_FIELD_NUMBER: _ClassVar[int]
    TIME_FIELD_NUMBER: _ClassVar[int]
    TOOL_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    UNKNOWN_FIELDS_FIELD_NUMBER: _ClassVar[int]
    VERIFICATION_FIELD_NUMBER: _ClassVar[int]
    catalogue: _catalogue_pb2.Catalogue
    confirmation: _typed_pb2.ConfirmationPayload
    context_perception: _typed_pb2.ContextPerceptionPayload
    extensions: _struct_pb2.Struct
    harness: HarnessEnvelope
    id: str
    idle: _typed_pb2.IdlePayload
    intent_detection: _typed_pb2.IntentDetectionPayload
    memory_recall: _typed_pb2.MemoryRecallPayload
    native: Native
    origin: Origin
    outcome: SessionOutcome
    payload: _struct_pb2.Value
    planning: _typed_pb2.PlanningPayload
    rate_limit: _typed_pb2.RateLimitPayload
    reasoning: _typed_pb2.ReasoningPayload
    run_lifecycle: _contract_pb2.RunLifecycle
    session: Session
    source: str
    task_list: _contract_pb2.TaskList
    time: str
    tool: Tool
    type: EventType
    unknown_fields: _struct_pb2.Struct
    verification: _contract_pb2.Verification
    def __init__(self, id: _Optional[str] = ..., source: _Optional[str] = ..., type: _Optional[_Union[EventType, str]] = ..., time: _Optional[str] = ..., session: _Optional[_Union[Session, _Mapping]] = ..., tool: _Optional[_Union[Tool, _Mapping]] = ..., native: _Optional[_Union[Native, _Mapping]] = ..., extensions: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., origin: _Optional[_Union[Origin, _Mapping]] = ..., outcome: _Optional[_Union[SessionOutcome, str]] = ..., harness: _Optional[_Union[HarnessEnvelope, _Mapping]] = ..., payload: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ..., unknown_fields: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., catalogue: _Optional[_Union[_catalogue_pb2.Catalogue, _Mapping]] = ..., idle: _Optional[_Union[_typed_pb2.IdlePayload, _Mapping]] = ..., intent_detection: _Optional[_Union[_typed_pb2.IntentDetectionPayload, _Mapping]] = ..., context_perception: _Optional[_Union[_typed_pb2.ContextPerceptionPayload, _Mapping]] = ..., memory_recall: _Optional[_Union[_typed_pb2.MemoryRecallPayload, _Mapping]] = ..., planning: _Optional[_Union[_typed_pb2.PlanningPayload, _Mapping]] = ..., reasoning: _Optional[_Union[_typed_pb2.ReasoningPayload, _Mapping]] = ..., rate_limit: _Optional[_Union[_typed_pb2.RateLimitPayload, _Mapping]] = ..., confirmation: _Optional[_Union[_typed_pb2.ConfirmationPayload, _Mapping]] = ..., run_lifecycle: _Optional[_Union[_contract_pb2.RunLifecycle, _Mapping]] = ..., task_list: _Optional[_Union[_contract_pb2.TaskList, _Mapping]] = ..., verification: _Optional[_Union[_contract_pb2.Verification, _Mapping]] = ...) -> None: ...

class HarnessEnvelope(_message.Message):
    __slots__ = ["agent_id", "context", "depth", "metadata"]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    CONTEXT_FIELD_NUMBER: _ClassVar[int]
    DEPTH_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    context: _context_pb2.EventContext
    depth: int
    metadata: _struct_pb2.Struct
    def __init__(self, agent_id: _Optional[str] = ..., depth: _Optional[int] = ..., context: _Optional[_Union[_context_pb2.EventContext, _Mapping]] = ..., metadata: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class McpTool(_message.Message):
    __slots__ = ["connection", "provenance", "server", "server_name", "tool", "unknown_fields"]
    CONNECTION_FIELD_NUMBER: _ClassVar[int]
    PROVENANCE_FIELD_NUMBER: _ClassVar[int]
    SERVER_FIELD_NUMBER: _ClassVar[int]
    SERVER_NAME_FIELD_NUMBER: _ClassVar[int]
    TOOL_FIELD_NUMBER: _ClassVar[int]
    UNKNOWN_FIELDS_FIELD_NUMBER: _ClassVar[int]
    connection: _struct_pb2.Struct
    provenance: str
    server: str
    server_name: str
    tool: str
    unknown_fields: _struct_pb2.Struct
    def __init__(self, server: _Optional[str] = ..., tool: _Optional[str] = ..., server_name: _Optional[str] = ..., provenance: _Optional[str] = ..., connection: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., unknown_fields: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class Native(_message.Message):
    __slots__ = ["event_name", "payload", "provider", "unknown_fields"]
    EVENT_NAME_FIELD_NUMBER: _ClassVar[int]
    PAYLOAD_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_FIELD_NUMBER: _ClassVar[int]
    UNKNOWN_FIELDS_FIELD_NUMBER: _ClassVar[int]
    event_name: str
    payload: _struct_pb2.Struct
    provider: str
    unknown_fields: _struct_pb2.Struct
    def __init__(self, provider: _Optional[str] = ..., event_name: _Optional[str] = ..., payload: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., unknown_fields: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class Origin(_message.Message):
    __slots__ = ["dialect", "event_type", "protocol_version", "provider", "synthesized_call_id", "synthesized_id"]
    DIALECT_FIELD_NUMBER: _ClassVar[int]
    EVENT_TYPE_FIELD_NUMBER: _ClassVar[int]
    PROTOCOL_VERSION_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_FIELD_NUMBER: _ClassVar[int]
    SYNTHESIZED_CALL_ID_FIELD_NUMBER: _ClassVar[int]
    SYNTHESIZED_ID_FIELD_NUMBER: _ClassVar[int]
    dialect: Dialect
    event_type: str
    protocol_version: str
    provider: str
    synthesized_call_id: bool
    synthesized_id: bool
    def __init__(self, dialect: _Optional[_Union[Dialect, str]] = ..., protocol_version: _Optional[str] = ..., event_type: _Optional[str] = ..., synthesized_id: bool = ..., synthesized_call_id: bool = ..., provider: _Optional[str] = ...) -> None: ...

class Session(_message.Message):
    __slots__ = ["agent", "cwd", "id", "model", "unknown_fields", "workspace_roots"]
    AGENT_FIELD_NUMBER: _ClassVar[int]
    CWD_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    UNKNOWN_FIELDS_FIELD_NUMBER: _ClassVar[int]
    WORKSPACE_ROOTS_FIELD_NUMBER: _ClassVar[int]
    agent: Agent
    cwd: str
    id: str
    model: str
    unknown_fields: _struct_pb2.Struct
    workspace_roots: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, id: _Optional[str] = ..., cwd: _Optional[str] = ..., workspace_roots: _Optional[_Iterable[str]] = ..., model: _Optional[str] = ..., agent: _Optional[_Union[Agent, _Mapping]] = ..., unknown_fields: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class Tool(_message.Message):
    __slots__ = ["call_id", "error", "input", "kind", "mcp", "name", "origin", "output", "unknown_fields"]
    CALL_ID_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    INPUT_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    MCP_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    ORIGIN_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_FIELD_NUMBER: _ClassVar[int]
    UNKNOWN_FIELDS_FIELD_NUMBER: _ClassVar[int]
    call_id: str
    error: ToolError
    input: _struct_pb2.Struct
    kind: ToolKind
    mcp: McpTool
    name: str
    origin: str
    output: _struct_pb2.Value
    unknown_fields: _struct_pb2.Struct
    def __init__(self, call_id: _Optional[str] = ..., name: _Optional[str] = ..., kind: _Optional[_Union[ToolKind, str]] = ..., input: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., output: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ..., error: _Optional[_Union[ToolError, _Mapping]] = ..., mcp: _Optional[_Union[McpTool, _Mapping]] = ..., origin: _Optional[str] = ..., unknown_fields: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class ToolError(_message.Message):
    __slots__ = ["category", "code", "message", "unknown_fields"]
    CATEGORY_FIELD_NUMBER: _ClassVar[int]
    CODE_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    UNKNOWN_FIELDS_FIELD_NUMBER: _ClassVar[int]
    category: str
    code: _struct_pb2.Value
    message: str
    unknown_fields: _struct_pb2.Struct
    def __init__(self, message: _Optional[str] = ..., code: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ..., category: _Optional[str] = ..., unknown_fields: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class EventType(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []

class Dialect(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []

class ToolKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []

class SessionOutcome(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []
