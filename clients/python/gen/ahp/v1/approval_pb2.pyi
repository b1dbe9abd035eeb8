from buf.validate import validate_pb2 as _validate_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Iterable as _Iterable, Mapping as _Mapping, Optional as _Optional, Union as _Union

APPROVAL_CHANGE_ABANDONED: ApprovalChange
APPROVAL_CHANGE_CONSUMED: ApprovalChange
APPROVAL_CHANGE_DECIDED: ApprovalChange
APPROVAL_CHANGE_EXPIRED: ApprovalChange
APPROVAL_CHANGE_REQUESTED: ApprovalChange
APPROVAL_CHANGE_UNSPECIFIED: ApprovalChange
APPROVAL_STATE_APPROVED: ApprovalState
APPROVAL_STATE_DENIED: ApprovalState
APPROVAL_STATE_EXPIRED: ApprovalState
APPROVAL_STATE_PENDING: ApprovalState
APPROVAL_STATE_UNSPECIFIED: ApprovalState
DESCRIPTOR: _descriptor.FileDescriptor

class Approval(_message.Message):
    __slots__ = ["abandoned", "agent_id", "approvers", "comment", "consumed_at", "created_at", "decided_at", "decided_by", "event_id", "event_type", "grant_expires_at", "hold_until", "id", "input_summary", "kind", "latency_ms", "notifiers", "on_timeout_deny", "principal", "reason", "revision", "rule_ids", "session_id", "source", "state", "target", "tool"]
    ABANDONED_FIELD_NUMBER: _ClassVar[int]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    APPROVERS_FIELD_NUMBER: _ClassVar[int]
    COMMENT_FIELD_NUMBER: _ClassVar[int]
    CONSUMED_AT_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    DECIDED_AT_FIELD_NUMBER: _ClassVar[int]
    DECIDED_BY_FIELD_NUMBER: _ClassVar[int]
    EVENT_ID_FIELD_NUMBER: _ClassVar[int]
    EVENT_TYPE_FIELD_NUMBER: _ClassVar[int]
    GRANT_EXPIRES_AT_FIELD_NUMBER: _ClassVar[int]
    HOLD_UNTIL_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    INPUT_SUMMARY_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    LATENCY_MS_FIELD_NUMBER: _ClassVar[int]
    NOTIFIERS_FIELD_NUMBER: _ClassVar[int]
    ON_TIMEOUT_DENY_FIELD_NUMBER: _ClassVar[int]
    PRINCIPAL_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    REVISION_FIELD_NUMBER: _ClassVar[int]
    RULE_IDS_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    TARGET_FIELD_NUMBER: _ClassVar[int]
    TOOL_FIELD_NUMBER: _ClassVar[int]
    abandoned: bool
    agent_id: str
    approvers: _containers.RepeatedCompositeFieldContainer[ApproverList]
    comment: str
    consumed_at: str
    created_at: str
    decided_at: str
    decided_by: str
    event_id: str
    event_type: str
    grant_expires_at: str
    hold_until: str
    id: str
    input_summary: str
    kind: str
    latency_ms: int
    notifiers: _containers.RepeatedScalarFieldContainer[str]
    on_timeout_deny: bool
    principal: str
    reason: str
    revision: int
    rule_ids: _containers.RepeatedScalarFieldContainer[str]
    session_id: str
    source: str
    state: ApprovalState
    target: str
    tool: str
    def __init__(self, id: _Optional[str] = ..., state: _Optional[_Union[ApprovalState, str]] = ..., rule_ids: _Optional[_Iterable[str]] = ..., kind: _Optional[str] = ..., reason: _Optional[str] = ..., target: _Optional[str] = ..., principal: _Optional[str] = ..., source: _Optional[str] = ..., agent_id: _Optional[str] = ..., session_id: _Optional[str] = ..., event_id: _Optional[str] = ..., event_type: _Optional[str] = ..., tool: _Optional[str] = ..., input_summary: _Optional[str] = ..., approvers: _Optional[_Iterable[_Union[ApproverList, _Mapping]]] = ..., created_at: _Optional[str] = ..., hold_until: _Optional[str] = ..., decided_at: _Optional[str] = ..., decided_by: _Optional[str] = ..., comment: _Optional[str] = ..., latency_ms: _Optional[int] = ..., grant_expires_at: _Optional[str] = ..., consumed_at: _Optional[str] = ..., abandoned: bool = ..., on_timeout_deny: bool = ..., notifiers: _Optional[_Iterable[str]] = ..., revision: _Optional[int] = ...) -> None: ...

class ApprovalServiceDecideRequest(_message.Message):
    __slots__ = ["approve", "comment", "id"]
    APPROVE_FIELD_NUMBER: _ClassVar[int]
    COMMENT_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    approve: bool
    comment: str
    id: str
    def __init__(self, id: _Optional[str] = ..., approve: bool = ..., comment: _Optional[str] = ...) -> None: ...

class ApprovalServiceDecideResponse(_message.Message):
    __slots__ = ["approval"]
    APPROVAL_FIELD_NUMBER: _ClassVar[int]
    approval: Approval
    def __init__(self, approval: _Optional[_Union[Approval, _Mapping]] = ...) -> None: ...

class ApprovalServiceGetRequest(_message.Message):
    __slots__ = ["id"]
    ID_FIELD_NUMBER: _ClassVar[int]
    id: str
    def __init__(self, id: _Optional[str] = ...) -> None: ...

class ApprovalServiceGetResponse(_message.Message):
    __slots__ = ["approval"]
    APPROVAL_FIELD_NUMBER: _ClassVar[int]
    approval: Approval
    def __init__(self, approval: _Optional[_Union[Approval, _Mapping]] = ...) -> None: ...

class ApprovalServiceListRequest(_message.Message):
    __slots__ = ["agent_id", "limit", "rule_id", "session_id", "state"]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    RULE_ID_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    limit: int
    rule_id: str
    session_id: str
    state: ApprovalState
    def __init__(self, state: _Optional[_Union[ApprovalState, str]] = ..., agent_id: _Optional[str] = ..., session_id: _Optional[str] = ..., rule_id: _Optional[str] = ..., limit: _Optional[int] = ...) -> None: ...

class ApprovalServiceListResponse(_message.Message):
    __slots__ = ["approvals"]
    APPROVALS_FIELD_NUMBER: _ClassVar[int]
    approvals: _containers.RepeatedCompositeFieldContainer[Approval]
    def __init__(self, approvals: _Optional[_Iterable[_Union[Approval, _Mapping]]] = ...) -> None: ...

class ApprovalServiceWatchRequest(_message.Message):
    __slots__ = ["agent_id", "rule_id", "session_id"]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    RULE_ID_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    rule_id: str
    session_id: str
    def __init__(self, agent_id: _Optional[str] = ..., session_id: _Optional[str] = ..., rule_id: _Optional[str] = ...) -> None: ...

class ApprovalServiceWatchResponse(_message.Message):
    __slots__ = ["approval", "change"]
    APPROVAL_FIELD_NUMBER: _ClassVar[int]
    CHANGE_FIELD_NUMBER: _ClassVar[int]
    approval: Approval
    change: ApprovalChange
    def __init__(self, change: _Optional[_Union[ApprovalChange, str]] = ..., approval: _Optional[_Union[Approval, _Mapping]] = ...) -> None: ...

class ApproverList(_message.Message):
    __slots__ = ["approvers"]
    APPROVERS_FIELD_NUMBER: _ClassVar[int]
    approvers: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, approvers: _Optional[_Iterable[str]] = ...) -> None: ...

class ApprovalState(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []

class ApprovalChange(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []
