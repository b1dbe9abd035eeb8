from ahp.v1 import typed_pb2 as _typed_pb2
from buf.validate import validate_pb2 as _validate_pb2
from google.protobuf import struct_pb2 as _struct_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Iterable as _Iterable, Mapping as _Mapping, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor
EFFECT_KIND_ALLOW: EffectKind
EFFECT_KIND_ASK: EffectKind
EFFECT_KIND_DEFER: EffectKind
EFFECT_KIND_DENY: EffectKind
EFFECT_KIND_ESCALATE: EffectKind
EFFECT_KIND_FLOW: EffectKind
EFFECT_KIND_INJECT: EffectKind
EFFECT_KIND_MESSAGE: EffectKind
EFFECT_KIND_MODIFY: EffectKind
EFFECT_KIND_RETURN: EffectKind
EFFECT_KIND_UNSPECIFIED: EffectKind
MODIFY_OPERATION_MERGE: ModifyOperation
MODIFY_OPERATION_REPLACE: ModifyOperation
MODIFY_OPERATION_UNSPECIFIED: ModifyOperation
MODIFY_TARGET_CONTENT: ModifyTarget
MODIFY_TARGET_INPUT: ModifyTarget
MODIFY_TARGET_INSTRUCTIONS: ModifyTarget
MODIFY_TARGET_OUTPUT: ModifyTarget
MODIFY_TARGET_PROMPT: ModifyTarget
MODIFY_TARGET_REQUEST: ModifyTarget
MODIFY_TARGET_RESPONSE: ModifyTarget
MODIFY_TARGET_SUMMARY: ModifyTarget
MODIFY_TARGET_UNSPECIFIED: ModifyTarget
MODIFY_TARGET_WORKSPACE: ModifyTarget
VERDICT_ALLOW: Verdict
VERDICT_ASK: Verdict
VERDICT_DEFER: Verdict
VERDICT_DENY: Verdict
VERDICT_ESCALATE: Verdict
VERDICT_MODIFY: Verdict
VERDICT_UNSPECIFIED: Verdict

class AllowEffect(_message.Message):
    __slots__ = ["reason"]
    REASON_FIELD_NUMBER: _ClassVar[int]
    reason: str
    def __init__(self, reason: _Optional[str] = ...) -> None: ...

class AskEffect(_message.Message):
    __slots__ = ["reason"]
    REASON_FIELD_NUMBER: _ClassVar[int]
    reason: str
    def __init__(self, reason: _Optional[str] = ...) -> None: ...

class Capabilities(_message.Message):
    __slots__ = ["effects", "extension_effects"]
    EFFECTS_FIELD_NUMBER: _ClassVar[int]
    EXTENSION_EFFECTS_FIELD_NUMBER: _ClassVar[int]
    effects: _containers.RepeatedScalarFieldContainer[EffectKind]
    extension_effects: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, effects: _Optional[_Iterable[_Union[EffectKind, str]]] = ..., extension_effects: _Optional[_Iterable[str]] = ...) -> None: ...

class Decision(_message.Message):
    __slots__ = ["approval_id", "confirmation", "context_perception", "decision_id", "dry_runs", "effects", "fallbacks", "idle", "intent_detection", "latency_us", "matched_rule_ids", "memory_recall", "planning", "policy_digest", "policy_revision", "rate_limit", "reasoning", "replayed", "synthetic", "verdict"]
    APPROVAL_ID_FIELD_NUMBER: _ClassVar[int]
    CONFIRMATION_FIELD_NUMBER: _ClassVar[int]
    CONTEXT_PERCEPTION_FIELD_NUMBER: _ClassVar[int]
    DECISION_ID_FIELD_NUMBER: _ClassVar[int]
    DRY_RUNS_FIELD_NUMBER: _ClassVar[int]
    EFFECTS_FIELD_NUMBER: _ClassVar[int]
    FALLBACKS_FIELD_NUMBER: _ClassVar[int]
    IDLE_FIELD_NUMBER: _ClassVar[int]
    INTENT_DETECTION_FIELD_NUMBER: _ClassVar[int]
    LATENCY_US_FIELD_NUMBER: _ClassVar[int]
    MATCHED_RULE_IDS_FIELD_NUMBER: _ClassVar[int]
    MEMORY_RECALL_FIELD_NUMBER: _ClassVar[int]
    PLANNING_FIELD_NUMBER: _ClassVar[int]
    POLICY_DIGEST_FIELD_NUMBER: _ClassVar[int]
    POLICY_REVISION_FIELD_NUMBER: _ClassVar[int]
    RATE_LIMIT_FIELD_NUMBER: _ClassVar[int]
    REASONING_FIELD_NUMBER: _ClassVar[int]
    REPLAYED_FIELD_NUMBER: _ClassVar[int]
    SYNTHETIC_FIELD_NUMBER: _ClassVar[int]
    VERDICT_FIELD_NUMBER: _ClassVar[int]
    approval_id: str
    confirmation: _typed_pb2.ConfirmationDecision
    context_perception: _typed_pb2.ContextPerceptionDecision
    decision_id: str
    dry_runs: _containers.RepeatedCompositeFieldContainer[DryRun]
    effects: _containers.RepeatedCompositeFieldContainer[Effect]
    fallbacks: _containers.RepeatedCompositeFieldContainer[Fallback]
    idle: _typed_pb2.IdleDecision
    intent_detection: _typed_pb2.IntentDetectionDecision
    latency_us: int
    matched_rule_ids: _containers.RepeatedScalarFieldContainer[str]
    memory_recall: _typed_pb2.MemoryRecallDecision
    planning: _typed_pb2.PlanningDecision
    policy_digest: str
    policy_revision: int
    rate_limit: _typed_pb2.RateLimitDecision
    reasoning: _typed_pb2.ReasoningDecision
    replayed: bool
    synthetic: bool
    verdict: Verdict
    def __init__(self, decision_id: _Optional[str] = ..., verdict: _Optional[_Union[Verdict, str]] = ..., effects: _Optional[_Iterable[_Union[Effect, _Mapping]]] = ..., matched_rule_ids: _Optional[_Iterable[str]] = ..., synthetic: bool = ..., fallbacks: _Optional[_Iterable[_Union[Fallback, _Mapping]]] = ..., dry_runs: _Optional[_Iterable[_Union[DryRun, _Mapping]]] = ..., replayed: bool = ..., latency_us: _Optional[int] = ..., policy_digest: _Optional[str] = ..., policy_revision: _Optional[int] = ..., approval_id: _Optional[str] = ..., idle: _Optional[_Union[_typed_pb2.IdleDecision, _Mapping]] = ..., intent_detection: _Optional[_Union[_typed_pb2.IntentDetectionDecision, _Mapping]] = ..., context_perception: _Optional[_Union[_typed_pb2.ContextPerceptionDecision, _Mapping]] = ..., memory_recall: _Optional[_Union[_typed_pb2.MemoryRecallDecision, _Mapping]] = ..., planning: _Optional[_Union[_typed_pb2.PlanningDecision, _Mapping]] = ..., reasoning: _Optional[_Union[_typed_pb2.ReasoningDecision, _Mapping]] = ..., rate_limit: _Optional[_Union[_typed_pb2.RateLimitDecision, _Mapping]] = ..., confirmation: _Optional[_Union[_typed_pb2.ConfirmationDecision, _Mapping]] = ...) -> None: ...

class DeferEffect(_message.Message):
    __slots__ = ["reason", "retry_after_ms"]
    REASON_FIELD_NUMBER: _ClassVar[int]
    RETRY_AFTER_MS_FIELD_NUMBER: _ClassVar[int]
    reason: str
    retry_after_ms: int
    def __init__(self, retry_after_ms: _Optional[int] = ..., reason: _Optional[str] = ...) -> None: ...

class DenyEffect(_message.Message):
    __slots__ = ["code", "extensions", "reason"]
    CODE_FIELD_NUMBER: _ClassVar[int]
    EXTENSIONS_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    code: str
    extensions: _struct_pb2.Struct
    reason: str
    def __init__(self, reason: _Optional[str] = ..., code: _Optional[str] = ..., extensions: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class DryRun(_message.Message):
    __slots__ = ["rule_id", "would_be"]
    RULE_ID_FIELD_NUMBER: _ClassVar[int]
    WOULD_BE_FIELD_NUMBER: _ClassVar[int]
    rule_id: str
    would_be: Effect
    def __init__(self, rule_id: _Optional[str] = ..., would_be: _Optional[_Union[Effect, _Mapping]] = ...) -> None: ...

class Effect(_message.Message):
    __slots__ = ["allow", "ask", "defer", "deny", "escalate", "flow", "inject", "message", "modify", "rule_id"]
    ALLOW_FIELD_NUMBER: _ClassVar[int]
    ASK_FIELD_NUMBER: _ClassVar[int]
    DEFER_FIELD_NUMBER: _ClassVar[int]
    DENY_FIELD_NUMBER: _ClassVar[int]
    ESCALATE_FIELD_NUMBER: _ClassVar[int]
    FLOW_FIELD_NUMBER: _ClassVar[int]
    INJECT_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    MODIFY_FIELD_NUMBER: _ClassVar[int]
    RETURN_FIELD_NUMBER: _ClassVar[int]
    RULE_ID_FIELD_NUMBER: _ClassVar[int]
    allow: AllowEffect
    ask: AskEffect
    defer: DeferEffect
    deny: DenyEffect
    escalate: EscalateEffect
    flow: FlowEffect
    inject: InjectEffect
    message: MessageEffect
    modify: ModifyEffect
    rule_id: str
    def __init__(self, deny: _Optional[_Union[DenyEffect, _Mapping]] = ..., allow: _Optional[_Union[AllowEffect, _Mapping]] = ..., ask: _Optional[_Union[AskEffect, _Mapping]] = ..., modify: _Optional[_Union[ModifyEffect, _Mapping]] = ..., defer: _Optional[_Union[DeferEffect, _Mapping]] = ..., escalate: _Optional[_Union[EscalateEffect, _Mapping]] = ..., message: _Optional[_Union[MessageEffect, _Mapping]] = ..., flow: _Optional[_Union[FlowEffect, _Mapping]] = ..., inject: _Optional[_Union[InjectEffect, _Mapping]] = ..., rule_id: _Optional[str] = ..., **kwargs) -> None: ...

class EscalateEffect(_message.Message):
    __slots__ = ["reason", "target"]
    REASON_FIELD_NUMBER: _ClassVar[int]
    TARGET_FIELD_NUMBER: _ClassVar[int]
    reason: str
    target: str
    def __init__(self, reason: _Optional[str] = ..., target: _Optional[str] = ...) -> None: ...

class Fallback(_message.Message):
    __slots__ = ["reason", "rule_id", "sent", "wanted"]
    REASON_FIELD_NUMBER: _ClassVar[int]
    RULE_ID_FIELD_NUMBER: _ClassVar[int]
    SENT_FIELD_NUMBER: _ClassVar[int]
    WANTED_FIELD_NUMBER: _ClassVar[int]
    reason: str
    rule_id: str
    sent: Effect
    wanted: Effect
    def __init__(self, rule_id: _Optional[str] = ..., wanted: _Optional[_Union[Effect, _Mapping]] = ..., sent: _Optional[_Union[Effect, _Mapping]] = ..., reason: _Optional[str] = ...) -> None: ...

class FlowEffect(_message.Message):
    __slots__ = ["instruction", "operation", "reason"]
    INSTRUCTION_FIELD_NUMBER: _ClassVar[int]
    OPERATION_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    instruction: str
    operation: str
    reason: str
    def __init__(self, operation: _Optional[str] = ..., reason: _Optional[str] = ..., instruction: _Optional[str] = ...) -> None: ...

class HarnessDecision(_message.Message):
    __slots__ = ["allow", "block", "defer", "escalate", "modify"]
    class Allow(_message.Message):
        __slots__ = ["metadata", "modified_payload"]
        METADATA_FIELD_NUMBER: _ClassVar[int]
        MODIFIED_PAYLOAD_FIELD_NUMBER: _ClassVar[int]
        metadata: _struct_pb2.Struct
        modified_payload: _struct_pb2.Value
        def __init__(self, modified_payload: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ..., metadata: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...
    class Block(_message.Message):
        __slots__ = ["metadata", "reason"]
        METADATA_FIELD_NUMBER: _ClassVar[int]
        REASON_FIELD_NUMBER: _ClassVar[int]
        metadata: _struct_pb2.Struct
        reason: str
        def __init__(self, reason: _Optional[str] = ..., metadata: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...
    class Defer(_message.Message):
        __slots__ = ["reason", "retry_after_ms"]
        REASON_FIELD_NUMBER: _ClassVar[int]
        RETRY_AFTER_MS_FIELD_NUMBER: _ClassVar[int]
        reason: str
        retry_after_ms: int
        def __init__(self, retry_after_ms: _Optional[int] = ..., reason: _Optional[str] = ...) -> None: ...
    class Escalate(_message.Message):
        __slots__ = ["escalation_target", "reason"]
        ESCALATION_TARGET_FIELD_NUMBER: _ClassVar[int]
        REASON_FIELD_NUMBER: _ClassVar[int]
        escalation_target: str
        reason: str
        def __init__(self, reason: _Optional[str] = ..., escalation_target: _Optional[str] = ...) -> None: ...
    class Modify(_message.Message):
        __slots__ = ["metadata", "modified_payload"]
        METADATA_FIELD_NUMBER: _ClassVar[int]
        MODIFIED_PAYLOAD_FIELD_NUMBER: _ClassVar[int]
        metadata: _struct_pb2.Struct
        modified_payload: _struct_pb2.Value
        def __init__(self, modified_payload: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ..., metadata: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...
    ALLOW_FIELD_NUMBER: _ClassVar[int]
    BLOCK_FIELD_NUMBER: _ClassVar[int]
    DEFER_FIELD_NUMBER: _ClassVar[int]
    ESCALATE_FIELD_NUMBER: _ClassVar[int]
    MODIFY_FIELD_NUMBER: _ClassVar[int]
    allow: HarnessDecision.Allow
    block: HarnessDecision.Block
    defer: HarnessDecision.Defer
    escalate: HarnessDecision.Escalate
    modify: HarnessDecision.Modify
    def __init__(self, allow: _Optional[_Union[HarnessDecision.Allow, _Mapping]] = ..., block: _Optional[_Union[HarnessDecision.Block, _Mapping]] = ..., modify: _Optional[_Union[HarnessDecision.Modify, _Mapping]] = ..., defer: _Optional[_Union[HarnessDecision.Defer, _Mapping]] = ..., escalate: _Optional[_Union[HarnessDecision.Escalate, _Mapping]] = ...) -> None: ...

class InjectEffect(_message.Message):
    __slots__ = ["deliver_at", "operation", "target", "value"]
    DELIVER_AT_FIELD_NUMBER: _ClassVar[int]
    OPERATION_FIELD_NUMBER: _ClassVar[int]
    TARGET_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    deliver_at: str
    operation: str
    target: str
    value: _struct_pb2.ListValue
    def __init__(self, target: _Optional[str] = ..., operation: _Optional[str] = ..., deliver_at: _Optional[str] = ..., value: _Optional[_Union[_struct_pb2.ListValue, _Mapping]] = ...) -> None: ...

class MessageEffect(_message.Message):
    __slots__ = ["text"]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    text: str
    def __init__(self, text: _Optional[str] = ...) -> None: ...

class ModifyEffect(_message.Message):
    __slots__ = ["operation", "reason", "target", "value"]
    OPERATION_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    TARGET_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    operation: ModifyOperation
    reason: str
    target: ModifyTarget
    value: _struct_pb2.Value
    def __init__(self, target: _Optional[_Union[ModifyTarget, str]] = ..., operation: _Optional[_Union[ModifyOperation, str]] = ..., value: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ..., reason: _Optional[str] = ...) -> None: ...

class ReturnEffect(_message.Message):
    __slots__ = ["value"]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    value: _struct_pb2.Value
    def __init__(self, value: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ...) -> None: ...

class EffectKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []

class Verdict(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []

class ModifyTarget(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []

class ModifyOperation(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []
