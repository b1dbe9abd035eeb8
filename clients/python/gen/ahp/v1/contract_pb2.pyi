from buf.validate import validate_pb2 as _validate_pb2
from google.protobuf import struct_pb2 as _struct_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Iterable as _Iterable, Mapping as _Mapping, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor
RUN_STATUS_CANCELLED: RunStatus
RUN_STATUS_COMPLETED: RunStatus
RUN_STATUS_CREATED: RunStatus
RUN_STATUS_EXECUTING: RunStatus
RUN_STATUS_FAILED: RunStatus
RUN_STATUS_PLANNING: RunStatus
RUN_STATUS_UNSPECIFIED: RunStatus
RUN_STATUS_VERIFYING: RunStatus
TASK_STATUS_CANCELLED: TaskStatus
TASK_STATUS_COMPLETED: TaskStatus
TASK_STATUS_FAILED: TaskStatus
TASK_STATUS_IN_PROGRESS: TaskStatus
TASK_STATUS_PENDING: TaskStatus
TASK_STATUS_SKIPPED: TaskStatus
TASK_STATUS_UNSPECIFIED: TaskStatus
VERIFICATION_STATUS_FAILED: VerificationStatus
VERIFICATION_STATUS_NEEDS_REVIEW: VerificationStatus
VERIFICATION_STATUS_PASSED: VerificationStatus
VERIFICATION_STATUS_PENDING: VerificationStatus
VERIFICATION_STATUS_RUNNING: VerificationStatus
VERIFICATION_STATUS_SKIPPED: VerificationStatus
VERIFICATION_STATUS_UNSPECIFIED: VerificationStatus

class ArtifactRef(_message.Message):
    __slots__ = ["id", "kind", "mime_type", "path", "sha256", "size_bytes", "summary", "uri"]
    ID_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    MIME_TYPE_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    SHA256_FIELD_NUMBER: _ClassVar[int]
    SIZE_BYTES_FIELD_NUMBER: _ClassVar[int]
    SUMMARY_FIELD_NUMBER: _ClassVar[int]
    URI_FIELD_NUMBER: _ClassVar[int]
    id: str
    kind: str
    mime_type: str
    path: str
    sha256: str
    size_bytes: int
    summary: str
    uri: str
    def __init__(self, id: _Optional[str] = ..., kind: _Optional[str] = ..., uri: _Optional[str] = ..., path: _Optional[str] = ..., mime_type: _Optional[str] = ..., sha256: _Optional[str] = ..., size_bytes: _Optional[int] = ..., summary: _Optional[str] = ...) -> None: ...

class EvidenceRef(_message.Message):
    __slots__ = ["artifact", "kind", "metadata", "summary"]
    ARTIFACT_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    SUMMARY_FIELD_NUMBER: _ClassVar[int]
    artifact: ArtifactRef
    kind: str
    metadata: _struct_pb2.Struct
    summary: str
    def __init__(self, kind: _Optional[str] = ..., summary: _Optional[str] = ..., artifact: _Optional[_Union[ArtifactRef, _Mapping]] = ..., metadata: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class HeartbeatPayload(_message.Message):
    __slots__ = ["active_tools", "cpu_percent", "current_state", "memory_bytes", "pending_actions", "queue_depth", "tokens_used", "total_events_processed", "uptime_ms"]
    ACTIVE_TOOLS_FIELD_NUMBER: _ClassVar[int]
    CPU_PERCENT_FIELD_NUMBER: _ClassVar[int]
    CURRENT_STATE_FIELD_NUMBER: _ClassVar[int]
    MEMORY_BYTES_FIELD_NUMBER: _ClassVar[int]
    PENDING_ACTIONS_FIELD_NUMBER: _ClassVar[int]
    QUEUE_DEPTH_FIELD_NUMBER: _ClassVar[int]
    TOKENS_USED_FIELD_NUMBER: _ClassVar[int]
    TOTAL_EVENTS_PROCESSED_FIELD_NUMBER: _ClassVar[int]
    UPTIME_MS_FIELD_NUMBER: _ClassVar[int]
    active_tools: int
    cpu_percent: float
    current_state: str
    memory_bytes: int
    pending_actions: int
    queue_depth: int
    tokens_used: int
    total_events_processed: int
    uptime_ms: int
    def __init__(self, uptime_ms: _Optional[int] = ..., total_events_processed: _Optional[int] = ..., current_state: _Optional[str] = ..., cpu_percent: _Optional[float] = ..., memory_bytes: _Optional[int] = ..., active_tools: _Optional[int] = ..., pending_actions: _Optional[int] = ..., queue_depth: _Optional[int] = ..., tokens_used: _Optional[int] = ...) -> None: ...

class RunLifecycle(_message.Message):
    __slots__ = ["error", "metadata", "prompt", "result_summary", "run_id", "session_id", "started_at", "status", "updated_at"]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    PROMPT_FIELD_NUMBER: _ClassVar[int]
    RESULT_SUMMARY_FIELD_NUMBER: _ClassVar[int]
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    STARTED_AT_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    UPDATED_AT_FIELD_NUMBER: _ClassVar[int]
    error: str
    metadata: _struct_pb2.Struct
    prompt: str
    result_summary: str
    run_id: str
    session_id: str
    started_at: str
    status: RunStatus
    updated_at: str
    def __init__(self, run_id: _Optional[str] = ..., session_id: _Optional[str] = ..., status: _Optional[_Union[RunStatus, str]] = ..., prompt: _Optional[str] = ..., result_summary: _Optional[str] = ..., error: _Optional[str] = ..., started_at: _Optional[str] = ..., updated_at: _Optional[str] = ..., metadata: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class SuccessPayload(_message.Message):
    __slots__ = ["action_summary", "action_type", "duration_ms", "session_id"]
    ACTION_SUMMARY_FIELD_NUMBER: _ClassVar[int]
    ACTION_TYPE_FIELD_NUMBER: _ClassVar[int]
    DURATION_MS_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    action_summary: str
    action_type: str
    duration_ms: int
    session_id: str
    def __init__(self, session_id: _Optional[str] = ..., action_type: _Optional[str] = ..., action_summary: _Optional[str] = ..., duration_ms: _Optional[int] = ...) -> None: ...

class TaskItem(_message.Message):
    __slots__ = ["artifacts", "depends_on", "error", "evidence", "id", "metadata", "status", "title", "updated_at"]
    ARTIFACTS_FIELD_NUMBER: _ClassVar[int]
    DEPENDS_ON_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    EVIDENCE_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    UPDATED_AT_FIELD_NUMBER: _ClassVar[int]
    artifacts: _containers.RepeatedCompositeFieldContainer[ArtifactRef]
    depends_on: _containers.RepeatedScalarFieldContainer[str]
    error: str
    evidence: _containers.RepeatedCompositeFieldContainer[EvidenceRef]
    id: str
    metadata: _struct_pb2.Struct
    status: TaskStatus
    title: str
    updated_at: str
    def __init__(self, id: _Optional[str] = ..., title: _Optional[str] = ..., status: _Optional[_Union[TaskStatus, str]] = ..., depends_on: _Optional[_Iterable[str]] = ..., evidence: _Optional[_Iterable[_Union[EvidenceRef, _Mapping]]] = ..., artifacts: _Optional[_Iterable[_Union[ArtifactRef, _Mapping]]] = ..., error: _Optional[str] = ..., updated_at: _Optional[str] = ..., metadata: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class TaskList(_message.Message):
    __slots__ = ["metadata", "run_id", "session_id", "tasks", "updated_at"]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    TASKS_FIELD_NUMBER: _ClassVar[int]
    UPDATED_AT_FIELD_NUMBER: _ClassVar[int]
    metadata: _struct_pb2.Struct
    run_id: str
    session_id: str
    tasks: _containers.RepeatedCompositeFieldContainer[TaskItem]
    updated_at: str
    def __init__(self, run_id: _Optional[str] = ..., session_id: _Optional[str] = ..., tasks: _Optional[_Iterable[_Union[TaskItem, _Mapping]]] = ..., updated_at: _Optional[str] = ..., metadata: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class Verification(_message.Message):
    __slots__ = ["checks", "metadata", "residual_risks", "run_id", "session_id", "status", "updated_at"]
    CHECKS_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    RESIDUAL_RISKS_FIELD_NUMBER: _ClassVar[int]
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    UPDATED_AT_FIELD_NUMBER: _ClassVar[int]
    checks: _containers.RepeatedCompositeFieldContainer[VerificationCheck]
    metadata: _struct_pb2.Struct
    residual_risks: _containers.RepeatedScalarFieldContainer[str]
    run_id: str
    session_id: str
    status: VerificationStatus
    updated_at: str
    def __init__(self, run_id: _Optional[str] = ..., session_id: _Optional[str] = ..., status: _Optional[_Union[VerificationStatus, str]] = ..., checks: _Optional[_Iterable[_Union[VerificationCheck, _Mapping]]] = ..., residual_risks: _Optional[_Iterable[str]] = ..., updated_at: _Optional[str] = ..., metadata: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class VerificationCheck(_message.Message):
    __slots__ = ["artifacts", "command", "evidence", "id", "message", "metadata", "status", "subject"]
    ARTIFACTS_FIELD_NUMBER: _ClassVar[int]
    COMMAND_FIELD_NUMBER: _ClassVar[int]
    EVIDENCE_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    SUBJECT_FIELD_NUMBER: _ClassVar[int]
    artifacts: _containers.RepeatedCompositeFieldContainer[ArtifactRef]
    command: str
    evidence: _containers.RepeatedCompositeFieldContainer[EvidenceRef]
    id: str
    message: str
    metadata: _struct_pb2.Struct
    status: VerificationStatus
    subject: str
    def __init__(self, id: _Optional[str] = ..., subject: _Optional[str] = ..., status: _Optional[_Union[VerificationStatus, str]] = ..., command: _Optional[str] = ..., message: _Optional[str] = ..., evidence: _Optional[_Iterable[_Union[EvidenceRef, _Mapping]]] = ..., artifacts: _Optional[_Iterable[_Union[ArtifactRef, _Mapping]]] = ..., metadata: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class RunStatus(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []

class TaskStatus(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []

class VerificationStatus(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []
