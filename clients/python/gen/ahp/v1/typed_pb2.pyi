from ahp.v1 import context_pb2 as _context_pb2
from google.protobuf import struct_pb2 as _struct_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Iterable as _Iterable, Mapping as _Mapping, Optional as _Optional, Union as _Union

CONFIRMATION_KIND_COST_CONFIRM: ConfirmationKind
CONFIRMATION_KIND_SAFETY_CONFIRM: ConfirmationKind
CONFIRMATION_KIND_UNSPECIFIED: ConfirmationKind
CONFIRMATION_KIND_USER_CONFIRM: ConfirmationKind
DESCRIPTOR: _descriptor.FileDescriptor
PERCEPTION_DOMAIN_CODING: PerceptionDomain
PERCEPTION_DOMAIN_CONVERSATION: PerceptionDomain
PERCEPTION_DOMAIN_DATA_ANALYSIS: PerceptionDomain
PERCEPTION_DOMAIN_GENERAL: PerceptionDomain
PERCEPTION_DOMAIN_OPERATIONS: PerceptionDomain
PERCEPTION_DOMAIN_PROJECT_MANAGEMENT: PerceptionDomain
PERCEPTION_DOMAIN_RESEARCH: PerceptionDomain
PERCEPTION_DOMAIN_SECURITY: PerceptionDomain
PERCEPTION_DOMAIN_UNSPECIFIED: PerceptionDomain
PERCEPTION_DOMAIN_WRITING: PerceptionDomain
PERCEPTION_FRESHNESS_REALTIME: PerceptionFreshness
PERCEPTION_FRESHNESS_RECENT: PerceptionFreshness
PERCEPTION_FRESHNESS_STATIC: PerceptionFreshness
PERCEPTION_FRESHNESS_UNSPECIFIED: PerceptionFreshness
PERCEPTION_INTENT_COMPARE: PerceptionIntent
PERCEPTION_INTENT_EXPLORE: PerceptionIntent
PERCEPTION_INTENT_LOCATE: PerceptionIntent
PERCEPTION_INTENT_REASON: PerceptionIntent
PERCEPTION_INTENT_RECOGNIZE: PerceptionIntent
PERCEPTION_INTENT_RETRIEVE: PerceptionIntent
PERCEPTION_INTENT_TRACK: PerceptionIntent
PERCEPTION_INTENT_UNDERSTAND: PerceptionIntent
PERCEPTION_INTENT_UNSPECIFIED: PerceptionIntent
PERCEPTION_INTENT_VALIDATE: PerceptionIntent
PERCEPTION_MODALITY_ANY: PerceptionModality
PERCEPTION_MODALITY_AUDIO: PerceptionModality
PERCEPTION_MODALITY_CHART: PerceptionModality
PERCEPTION_MODALITY_CODE: PerceptionModality
PERCEPTION_MODALITY_IMAGE: PerceptionModality
PERCEPTION_MODALITY_STRUCTURED_DATA: PerceptionModality
PERCEPTION_MODALITY_TABLE: PerceptionModality
PERCEPTION_MODALITY_TEXT: PerceptionModality
PERCEPTION_MODALITY_UNSPECIFIED: PerceptionModality
PERCEPTION_MODALITY_VIDEO: PerceptionModality
PERCEPTION_URGENCY_CRITICAL: PerceptionUrgency
PERCEPTION_URGENCY_HIGH: PerceptionUrgency
PERCEPTION_URGENCY_LOW: PerceptionUrgency
PERCEPTION_URGENCY_NORMAL: PerceptionUrgency
PERCEPTION_URGENCY_UNSPECIFIED: PerceptionUrgency
PLANNING_STRATEGY_KIND_GRAPH_PLANNING: PlanningStrategyKind
PLANNING_STRATEGY_KIND_NONE: PlanningStrategyKind
PLANNING_STRATEGY_KIND_STEP_BY_STEP: PlanningStrategyKind
PLANNING_STRATEGY_KIND_TREE_OF_THOUGHTS: PlanningStrategyKind
PLANNING_STRATEGY_KIND_UNSPECIFIED: PlanningStrategyKind
RATE_LIMIT_KIND_API_REQUEST_LIMIT: RateLimitKind
RATE_LIMIT_KIND_LLM_REQUEST_LIMIT: RateLimitKind
RATE_LIMIT_KIND_LLM_TOKEN_LIMIT: RateLimitKind
RATE_LIMIT_KIND_TOOL_EXECUTION_LIMIT: RateLimitKind
RATE_LIMIT_KIND_UNSPECIFIED: RateLimitKind
REASONING_KIND_CHAIN_OF_THOUGHT: ReasoningKind
REASONING_KIND_REFLEXION: ReasoningKind
REASONING_KIND_RE_ACT: ReasoningKind
REASONING_KIND_TREE_OF_THOUGHTS: ReasoningKind
REASONING_KIND_UNSPECIFIED: ReasoningKind

class ConfirmationDecision(_message.Message):
    __slots__ = ["approve", "escalate", "reject"]
    class Approve(_message.Message):
        __slots__ = []
        def __init__(self) -> None: ...
    class Escalate(_message.Message):
        __slots__ = []
        def __init__(self) -> None: ...
    class Reject(_message.Message):
        __slots__ = ["reason"]
        REASON_FIELD_NUMBER: _ClassVar[int]
        reason: str
        def __init__(self, reason: _Optional[str] = ...) -> None: ...
    APPROVE_FIELD_NUMBER: _ClassVar[int]
    ESCALATE_FIELD_NUMBER: _ClassVar[int]
    REJECT_FIELD_NUMBER: _ClassVar[int]
    approve: ConfirmationDecision.Approve
    escalate: ConfirmationDecision.Escalate
    reject: ConfirmationDecision.Reject
    def __init__(self, escalate: _Optional[_Union[ConfirmationDecision.Escalate, _Mapping]] = ..., approve: _Optional[_Union[ConfirmationDecision.Approve, _Mapping]] = ..., reject: _Optional[_Union[ConfirmationDecision.Reject, _Mapping]] = ...) -> None: ...

class ConfirmationPayload(_message.Message):
    __slots__ = ["confirmation_type", "message", "options", "session_id"]
    CONFIRMATION_TYPE_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    OPTIONS_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    confirmation_type: ConfirmationType
    message: str
    options: _context_pb2.StringList
    session_id: str
    def __init__(self, session_id: _Optional[str] = ..., confirmation_type: _Optional[_Union[ConfirmationType, _Mapping]] = ..., message: _Optional[str] = ..., options: _Optional[_Union[_context_pb2.StringList, _Mapping]] = ...) -> None: ...

class ConfirmationType(_message.Message):
    __slots__ = ["custom", "known"]
    CUSTOM_FIELD_NUMBER: _ClassVar[int]
    KNOWN_FIELD_NUMBER: _ClassVar[int]
    custom: str
    known: ConfirmationKind
    def __init__(self, known: _Optional[_Union[ConfirmationKind, str]] = ..., custom: _Optional[str] = ...) -> None: ...

class ContextPerceptionDecision(_message.Message):
    __slots__ = ["allow", "block", "refine"]
    class Allow(_message.Message):
        __slots__ = ["injected_context", "metadata"]
        INJECTED_CONTEXT_FIELD_NUMBER: _ClassVar[int]
        METADATA_FIELD_NUMBER: _ClassVar[int]
        injected_context: InjectedContext
        metadata: _struct_pb2.Struct
        def __init__(self, injected_context: _Optional[_Union[InjectedContext, _Mapping]] = ..., metadata: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...
    class Refine(_message.Message):
        __slots__ = ["refined_intent", "refined_target", "scope_hints"]
        REFINED_INTENT_FIELD_NUMBER: _ClassVar[int]
        REFINED_TARGET_FIELD_NUMBER: _ClassVar[int]
        SCOPE_HINTS_FIELD_NUMBER: _ClassVar[int]
        refined_intent: PerceptionIntent
        refined_target: PerceptionTarget
        scope_hints: _containers.RepeatedScalarFieldContainer[str]
        def __init__(self, refined_intent: _Optional[_Union[PerceptionIntent, str]] = ..., refined_target: _Optional[_Union[PerceptionTarget, _Mapping]] = ..., scope_hints: _Optional[_Iterable[str]] = ...) -> None: ...
    ALLOW_FIELD_NUMBER: _ClassVar[int]
    BLOCK_FIELD_NUMBER: _ClassVar[int]
    REFINE_FIELD_NUMBER: _ClassVar[int]
    allow: ContextPerceptionDecision.Allow
    block: TypedBlock
    refine: ContextPerceptionDecision.Refine
    def __init__(self, allow: _Optional[_Union[ContextPerceptionDecision.Allow, _Mapping]] = ..., block: _Optional[_Union[TypedBlock, _Mapping]] = ..., refine: _Optional[_Union[ContextPerceptionDecision.Refine, _Mapping]] = ...) -> None: ...

class ContextPerceptionPayload(_message.Message):
    __slots__ = ["constraints", "context", "domain", "freshness", "intent", "metadata", "preferred_modality", "session_id", "target", "urgency"]
    CONSTRAINTS_FIELD_NUMBER: _ClassVar[int]
    CONTEXT_FIELD_NUMBER: _ClassVar[int]
    DOMAIN_FIELD_NUMBER: _ClassVar[int]
    FRESHNESS_FIELD_NUMBER: _ClassVar[int]
    INTENT_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    PREFERRED_MODALITY_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    TARGET_FIELD_NUMBER: _ClassVar[int]
    URGENCY_FIELD_NUMBER: _ClassVar[int]
    constraints: PerceptionConstraints
    context: PerceptionContext
    domain: PerceptionDomain
    freshness: PerceptionFreshness
    intent: PerceptionIntent
    metadata: _struct_pb2.Struct
    preferred_modality: PerceptionModality
    session_id: str
    target: PerceptionTarget
    urgency: PerceptionUrgency
    def __init__(self, session_id: _Optional[str] = ..., intent: _Optional[_Union[PerceptionIntent, str]] = ..., target: _Optional[_Union[PerceptionTarget, _Mapping]] = ..., domain: _Optional[_Union[PerceptionDomain, str]] = ..., preferred_modality: _Optional[_Union[PerceptionModality, str]] = ..., urgency: _Optional[_Union[PerceptionUrgency, str]] = ..., freshness: _Optional[_Union[PerceptionFreshness, str]] = ..., context: _Optional[_Union[PerceptionContext, _Mapping]] = ..., constraints: _Optional[_Union[PerceptionConstraints, _Mapping]] = ..., metadata: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class EntityTarget(_message.Message):
    __slots__ = ["entity_type", "identifier", "name"]
    ENTITY_TYPE_FIELD_NUMBER: _ClassVar[int]
    IDENTIFIER_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    entity_type: str
    identifier: str
    name: str
    def __init__(self, name: _Optional[str] = ..., entity_type: _Optional[str] = ..., identifier: _Optional[str] = ...) -> None: ...

class EventTarget(_message.Message):
    __slots__ = ["description", "event_type", "time_range"]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    EVENT_TYPE_FIELD_NUMBER: _ClassVar[int]
    TIME_RANGE_FIELD_NUMBER: _ClassVar[int]
    description: str
    event_type: str
    time_range: TimeRange
    def __init__(self, description: _Optional[str] = ..., event_type: _Optional[str] = ..., time_range: _Optional[_Union[TimeRange, _Mapping]] = ...) -> None: ...

class FileContentSnippet(_message.Message):
    __slots__ = ["path", "relevance_score", "snippet"]
    PATH_FIELD_NUMBER: _ClassVar[int]
    RELEVANCE_SCORE_FIELD_NUMBER: _ClassVar[int]
    SNIPPET_FIELD_NUMBER: _ClassVar[int]
    path: str
    relevance_score: float
    snippet: str
    def __init__(self, path: _Optional[str] = ..., snippet: _Optional[str] = ..., relevance_score: _Optional[float] = ...) -> None: ...

class FileContentSnippetList(_message.Message):
    __slots__ = ["values"]
    VALUES_FIELD_NUMBER: _ClassVar[int]
    values: _containers.RepeatedCompositeFieldContainer[FileContentSnippet]
    def __init__(self, values: _Optional[_Iterable[_Union[FileContentSnippet, _Mapping]]] = ...) -> None: ...

class HistoryItem(_message.Message):
    __slots__ = ["content", "item_type", "timestamp"]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    ITEM_TYPE_FIELD_NUMBER: _ClassVar[int]
    TIMESTAMP_FIELD_NUMBER: _ClassVar[int]
    content: str
    item_type: str
    timestamp: int
    def __init__(self, item_type: _Optional[str] = ..., content: _Optional[str] = ..., timestamp: _Optional[int] = ...) -> None: ...

class HistoryItemList(_message.Message):
    __slots__ = ["values"]
    VALUES_FIELD_NUMBER: _ClassVar[int]
    values: _containers.RepeatedCompositeFieldContainer[HistoryItem]
    def __init__(self, values: _Optional[_Iterable[_Union[HistoryItem, _Mapping]]] = ...) -> None: ...

class IdleDecision(_message.Message):
    __slots__ = ["allow", "defer"]
    class Allow(_message.Message):
        __slots__ = []
        def __init__(self) -> None: ...
    class Defer(_message.Message):
        __slots__ = ["reason"]
        REASON_FIELD_NUMBER: _ClassVar[int]
        reason: str
        def __init__(self, reason: _Optional[str] = ...) -> None: ...
    ALLOW_FIELD_NUMBER: _ClassVar[int]
    DEFER_FIELD_NUMBER: _ClassVar[int]
    allow: IdleDecision.Allow
    defer: IdleDecision.Defer
    def __init__(self, allow: _Optional[_Union[IdleDecision.Allow, _Mapping]] = ..., defer: _Optional[_Union[IdleDecision.Defer, _Mapping]] = ...) -> None: ...

class IdlePayload(_message.Message):
    __slots__ = ["idle_duration_ms", "idle_reason", "last_event_type", "suggested_action"]
    IDLE_DURATION_MS_FIELD_NUMBER: _ClassVar[int]
    IDLE_REASON_FIELD_NUMBER: _ClassVar[int]
    LAST_EVENT_TYPE_FIELD_NUMBER: _ClassVar[int]
    SUGGESTED_ACTION_FIELD_NUMBER: _ClassVar[int]
    idle_duration_ms: int
    idle_reason: str
    last_event_type: str
    suggested_action: str
    def __init__(self, idle_duration_ms: _Optional[int] = ..., idle_reason: _Optional[str] = ..., last_event_type: _Optional[str] = ..., suggested_action: _Optional[str] = ...) -> None: ...

class InjectedContext(_message.Message):
    __slots__ = ["facts", "file_contents", "knowledge", "project_summary", "suggestions"]
    FACTS_FIELD_NUMBER: _ClassVar[int]
    FILE_CONTENTS_FIELD_NUMBER: _ClassVar[int]
    KNOWLEDGE_FIELD_NUMBER: _ClassVar[int]
    PROJECT_SUMMARY_FIELD_NUMBER: _ClassVar[int]
    SUGGESTIONS_FIELD_NUMBER: _ClassVar[int]
    facts: _containers.RepeatedCompositeFieldContainer[_context_pb2.Fact]
    file_contents: FileContentSnippetList
    knowledge: _context_pb2.StringList
    project_summary: ProjectSummary
    suggestions: _context_pb2.StringList
    def __init__(self, facts: _Optional[_Iterable[_Union[_context_pb2.Fact, _Mapping]]] = ..., file_contents: _Optional[_Union[FileContentSnippetList, _Mapping]] = ..., project_summary: _Optional[_Union[ProjectSummary, _Mapping]] = ..., knowledge: _Optional[_Union[_context_pb2.StringList, _Mapping]] = ..., suggestions: _Optional[_Union[_context_pb2.StringList, _Mapping]] = ...) -> None: ...

class IntentDetectionDecision(_message.Message):
    __slots__ = ["allow", "block"]
    class Allow(_message.Message):
        __slots__ = ["confidence", "detected_intent", "target_hints"]
        CONFIDENCE_FIELD_NUMBER: _ClassVar[int]
        DETECTED_INTENT_FIELD_NUMBER: _ClassVar[int]
        TARGET_HINTS_FIELD_NUMBER: _ClassVar[int]
        confidence: float
        detected_intent: str
        target_hints: TargetHints
        def __init__(self, detected_intent: _Optional[str] = ..., confidence: _Optional[float] = ..., target_hints: _Optional[_Union[TargetHints, _Mapping]] = ...) -> None: ...
    ALLOW_FIELD_NUMBER: _ClassVar[int]
    BLOCK_FIELD_NUMBER: _ClassVar[int]
    allow: IntentDetectionDecision.Allow
    block: TypedBlock
    def __init__(self, allow: _Optional[_Union[IntentDetectionDecision.Allow, _Mapping]] = ..., block: _Optional[_Union[TypedBlock, _Mapping]] = ...) -> None: ...

class IntentDetectionPayload(_message.Message):
    __slots__ = ["language_hint", "prompt", "session_id", "workspace"]
    LANGUAGE_HINT_FIELD_NUMBER: _ClassVar[int]
    PROMPT_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    WORKSPACE_FIELD_NUMBER: _ClassVar[int]
    language_hint: str
    prompt: str
    session_id: str
    workspace: str
    def __init__(self, session_id: _Optional[str] = ..., prompt: _Optional[str] = ..., workspace: _Optional[str] = ..., language_hint: _Optional[str] = ...) -> None: ...

class LocationTarget(_message.Message):
    __slots__ = ["location_type", "path"]
    LOCATION_TYPE_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    location_type: str
    path: str
    def __init__(self, path: _Optional[str] = ..., location_type: _Optional[str] = ...) -> None: ...

class MemoryRecallDecision(_message.Message):
    __slots__ = ["allow", "block"]
    class Allow(_message.Message):
        __slots__ = ["injected_facts", "metadata"]
        INJECTED_FACTS_FIELD_NUMBER: _ClassVar[int]
        METADATA_FIELD_NUMBER: _ClassVar[int]
        injected_facts: _containers.RepeatedCompositeFieldContainer[_context_pb2.Fact]
        metadata: _struct_pb2.Struct
        def __init__(self, injected_facts: _Optional[_Iterable[_Union[_context_pb2.Fact, _Mapping]]] = ..., metadata: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...
    ALLOW_FIELD_NUMBER: _ClassVar[int]
    BLOCK_FIELD_NUMBER: _ClassVar[int]
    allow: MemoryRecallDecision.Allow
    block: TypedBlock
    def __init__(self, allow: _Optional[_Union[MemoryRecallDecision.Allow, _Mapping]] = ..., block: _Optional[_Union[TypedBlock, _Mapping]] = ...) -> None: ...

class MemoryRecallPayload(_message.Message):
    __slots__ = ["max_results", "memory_type", "query", "session_id", "working_directory"]
    MAX_RESULTS_FIELD_NUMBER: _ClassVar[int]
    MEMORY_TYPE_FIELD_NUMBER: _ClassVar[int]
    QUERY_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    WORKING_DIRECTORY_FIELD_NUMBER: _ClassVar[int]
    max_results: int
    memory_type: str
    query: str
    session_id: str
    working_directory: str
    def __init__(self, session_id: _Optional[str] = ..., query: _Optional[str] = ..., memory_type: _Optional[str] = ..., max_results: _Optional[int] = ..., working_directory: _Optional[str] = ...) -> None: ...

class PatternTarget(_message.Message):
    __slots__ = ["pattern", "pattern_type"]
    PATTERN_FIELD_NUMBER: _ClassVar[int]
    PATTERN_TYPE_FIELD_NUMBER: _ClassVar[int]
    pattern: str
    pattern_type: str
    def __init__(self, pattern: _Optional[str] = ..., pattern_type: _Optional[str] = ...) -> None: ...

class PerceptionConstraints(_message.Message):
    __slots__ = ["include_sources", "max_context_length", "max_results"]
    INCLUDE_SOURCES_FIELD_NUMBER: _ClassVar[int]
    MAX_CONTEXT_LENGTH_FIELD_NUMBER: _ClassVar[int]
    MAX_RESULTS_FIELD_NUMBER: _ClassVar[int]
    include_sources: bool
    max_context_length: int
    max_results: int
    def __init__(self, max_results: _Optional[int] = ..., max_context_length: _Optional[int] = ..., include_sources: bool = ...) -> None: ...

class PerceptionContext(_message.Message):
    __slots__ = ["current_task", "query", "relevant_history", "workspace"]
    CURRENT_TASK_FIELD_NUMBER: _ClassVar[int]
    QUERY_FIELD_NUMBER: _ClassVar[int]
    RELEVANT_HISTORY_FIELD_NUMBER: _ClassVar[int]
    WORKSPACE_FIELD_NUMBER: _ClassVar[int]
    current_task: str
    query: str
    relevant_history: HistoryItemList
    workspace: str
    def __init__(self, workspace: _Optional[str] = ..., current_task: _Optional[str] = ..., query: _Optional[str] = ..., relevant_history: _Optional[_Union[HistoryItemList, _Mapping]] = ...) -> None: ...

class PerceptionTarget(_message.Message):
    __slots__ = ["entity", "event", "location", "pattern", "relation", "resource", "rule", "state"]
    ENTITY_FIELD_NUMBER: _ClassVar[int]
    EVENT_FIELD_NUMBER: _ClassVar[int]
    LOCATION_FIELD_NUMBER: _ClassVar[int]
    PATTERN_FIELD_NUMBER: _ClassVar[int]
    RELATION_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_FIELD_NUMBER: _ClassVar[int]
    RULE_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    entity: EntityTarget
    event: EventTarget
    location: LocationTarget
    pattern: PatternTarget
    relation: RelationTarget
    resource: ResourceTarget
    rule: RuleTarget
    state: StateTarget
    def __init__(self, entity: _Optional[_Union[EntityTarget, _Mapping]] = ..., location: _Optional[_Union[LocationTarget, _Mapping]] = ..., event: _Optional[_Union[EventTarget, _Mapping]] = ..., relation: _Optional[_Union[RelationTarget, _Mapping]] = ..., rule: _Optional[_Union[RuleTarget, _Mapping]] = ..., state: _Optional[_Union[StateTarget, _Mapping]] = ..., resource: _Optional[_Union[ResourceTarget, _Mapping]] = ..., pattern: _Optional[_Union[PatternTarget, _Mapping]] = ...) -> None: ...

class PlanningDecision(_message.Message):
    __slots__ = ["allow", "block", "modify"]
    class Allow(_message.Message):
        __slots__ = ["metadata", "planning_template", "selected_strategy"]
        METADATA_FIELD_NUMBER: _ClassVar[int]
        PLANNING_TEMPLATE_FIELD_NUMBER: _ClassVar[int]
        SELECTED_STRATEGY_FIELD_NUMBER: _ClassVar[int]
        metadata: _struct_pb2.Struct
        planning_template: _struct_pb2.Value
        selected_strategy: PlanningStrategy
        def __init__(self, selected_strategy: _Optional[_Union[PlanningStrategy, _Mapping]] = ..., planning_template: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ..., metadata: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...
    class Modify(_message.Message):
        __slots__ = ["hints", "modified_task"]
        HINTS_FIELD_NUMBER: _ClassVar[int]
        MODIFIED_TASK_FIELD_NUMBER: _ClassVar[int]
        hints: _context_pb2.StringList
        modified_task: str
        def __init__(self, modified_task: _Optional[str] = ..., hints: _Optional[_Union[_context_pb2.StringList, _Mapping]] = ...) -> None: ...
    ALLOW_FIELD_NUMBER: _ClassVar[int]
    BLOCK_FIELD_NUMBER: _ClassVar[int]
    MODIFY_FIELD_NUMBER: _ClassVar[int]
    allow: PlanningDecision.Allow
    block: TypedBlock
    modify: PlanningDecision.Modify
    def __init__(self, allow: _Optional[_Union[PlanningDecision.Allow, _Mapping]] = ..., block: _Optional[_Union[TypedBlock, _Mapping]] = ..., modify: _Optional[_Union[PlanningDecision.Modify, _Mapping]] = ...) -> None: ...

class PlanningPayload(_message.Message):
    __slots__ = ["available_strategies", "constraints", "session_id", "task_description"]
    AVAILABLE_STRATEGIES_FIELD_NUMBER: _ClassVar[int]
    CONSTRAINTS_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    TASK_DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    available_strategies: _containers.RepeatedCompositeFieldContainer[PlanningStrategy]
    constraints: _struct_pb2.Value
    session_id: str
    task_description: str
    def __init__(self, session_id: _Optional[str] = ..., task_description: _Optional[str] = ..., available_strategies: _Optional[_Iterable[_Union[PlanningStrategy, _Mapping]]] = ..., constraints: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ...) -> None: ...

class PlanningStrategy(_message.Message):
    __slots__ = ["custom", "known"]
    CUSTOM_FIELD_NUMBER: _ClassVar[int]
    KNOWN_FIELD_NUMBER: _ClassVar[int]
    custom: str
    known: PlanningStrategyKind
    def __init__(self, known: _Optional[_Union[PlanningStrategyKind, str]] = ..., custom: _Optional[str] = ...) -> None: ...

class ProjectSummary(_message.Message):
    __slots__ = ["key_files", "language", "project_name", "structure_description"]
    KEY_FILES_FIELD_NUMBER: _ClassVar[int]
    LANGUAGE_FIELD_NUMBER: _ClassVar[int]
    PROJECT_NAME_FIELD_NUMBER: _ClassVar[int]
    STRUCTURE_DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    key_files: _context_pb2.StringList
    language: str
    project_name: str
    structure_description: str
    def __init__(self, project_name: _Optional[str] = ..., language: _Optional[str] = ..., key_files: _Optional[_Union[_context_pb2.StringList, _Mapping]] = ..., structure_description: _Optional[str] = ...) -> None: ...

class RateLimitDecision(_message.Message):
    __slots__ = ["queue", "retry", "skip"]
    class Queue(_message.Message):
        __slots__ = []
        def __init__(self) -> None: ...
    class Retry(_message.Message):
        __slots__ = ["metadata", "retry_after_ms"]
        METADATA_FIELD_NUMBER: _ClassVar[int]
        RETRY_AFTER_MS_FIELD_NUMBER: _ClassVar[int]
        metadata: _struct_pb2.Struct
        retry_after_ms: int
        def __init__(self, retry_after_ms: _Optional[int] = ..., metadata: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...
    class Skip(_message.Message):
        __slots__ = ["reason"]
        REASON_FIELD_NUMBER: _ClassVar[int]
        reason: str
        def __init__(self, reason: _Optional[str] = ...) -> None: ...
    QUEUE_FIELD_NUMBER: _ClassVar[int]
    RETRY_FIELD_NUMBER: _ClassVar[int]
    SKIP_FIELD_NUMBER: _ClassVar[int]
    queue: RateLimitDecision.Queue
    retry: RateLimitDecision.Retry
    skip: RateLimitDecision.Skip
    def __init__(self, retry: _Optional[_Union[RateLimitDecision.Retry, _Mapping]] = ..., queue: _Optional[_Union[RateLimitDecision.Queue, _Mapping]] = ..., skip: _Optional[_Union[RateLimitDecision.Skip, _Mapping]] = ...) -> None: ...

class RateLimitPayload(_message.Message):
    __slots__ = ["current_usage", "limit_type", "retry_after_ms", "session_id"]
    CURRENT_USAGE_FIELD_NUMBER: _ClassVar[int]
    LIMIT_TYPE_FIELD_NUMBER: _ClassVar[int]
    RETRY_AFTER_MS_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    current_usage: str
    limit_type: RateLimitType
    retry_after_ms: int
    session_id: str
    def __init__(self, session_id: _Optional[str] = ..., limit_type: _Optional[_Union[RateLimitType, _Mapping]] = ..., retry_after_ms: _Optional[int] = ..., current_usage: _Optional[str] = ...) -> None: ...

class RateLimitType(_message.Message):
    __slots__ = ["custom", "known"]
    CUSTOM_FIELD_NUMBER: _ClassVar[int]
    KNOWN_FIELD_NUMBER: _ClassVar[int]
    custom: str
    known: RateLimitKind
    def __init__(self, known: _Optional[_Union[RateLimitKind, str]] = ..., custom: _Optional[str] = ...) -> None: ...

class ReasoningDecision(_message.Message):
    __slots__ = ["allow", "block"]
    class Allow(_message.Message):
        __slots__ = ["hints", "metadata"]
        HINTS_FIELD_NUMBER: _ClassVar[int]
        METADATA_FIELD_NUMBER: _ClassVar[int]
        hints: _context_pb2.StringList
        metadata: _struct_pb2.Struct
        def __init__(self, hints: _Optional[_Union[_context_pb2.StringList, _Mapping]] = ..., metadata: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...
    ALLOW_FIELD_NUMBER: _ClassVar[int]
    BLOCK_FIELD_NUMBER: _ClassVar[int]
    allow: ReasoningDecision.Allow
    block: TypedBlock
    def __init__(self, allow: _Optional[_Union[ReasoningDecision.Allow, _Mapping]] = ..., block: _Optional[_Union[TypedBlock, _Mapping]] = ...) -> None: ...

class ReasoningPayload(_message.Message):
    __slots__ = ["hints", "problem_statement", "reasoning_type", "session_id"]
    HINTS_FIELD_NUMBER: _ClassVar[int]
    PROBLEM_STATEMENT_FIELD_NUMBER: _ClassVar[int]
    REASONING_TYPE_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    hints: _context_pb2.StringList
    problem_statement: str
    reasoning_type: ReasoningType
    session_id: str
    def __init__(self, session_id: _Optional[str] = ..., reasoning_type: _Optional[_Union[ReasoningType, _Mapping]] = ..., problem_statement: _Optional[str] = ..., hints: _Optional[_Union[_context_pb2.StringList, _Mapping]] = ...) -> None: ...

class ReasoningType(_message.Message):
    __slots__ = ["known", "other"]
    KNOWN_FIELD_NUMBER: _ClassVar[int]
    OTHER_FIELD_NUMBER: _ClassVar[int]
    known: ReasoningKind
    other: str
    def __init__(self, known: _Optional[_Union[ReasoningKind, str]] = ..., other: _Optional[str] = ...) -> None: ...

class RelationTarget(_message.Message):
    __slots__ = ["entities", "relation_type"]
    ENTITIES_FIELD_NUMBER: _ClassVar[int]
    RELATION_TYPE_FIELD_NUMBER: _ClassVar[int]
    entities: _containers.RepeatedScalarFieldContainer[str]
    relation_type: str
    def __init__(self, entities: _Optional[_Iterable[str]] = ..., relation_type: _Optional[str] = ...) -> None: ...

class ResourceTarget(_message.Message):
    __slots__ = ["constraints", "name", "resource_type"]
    CONSTRAINTS_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_TYPE_FIELD_NUMBER: _ClassVar[int]
    constraints: _struct_pb2.Value
    name: str
    resource_type: str
    def __init__(self, name: _Optional[str] = ..., resource_type: _Optional[str] = ..., constraints: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ...) -> None: ...

class RuleTarget(_message.Message):
    __slots__ = ["name", "rule_type", "scope"]
    NAME_FIELD_NUMBER: _ClassVar[int]
    RULE_TYPE_FIELD_NUMBER: _ClassVar[int]
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    name: str
    rule_type: str
    scope: str
    def __init__(self, name: _Optional[str] = ..., rule_type: _Optional[str] = ..., scope: _Optional[str] = ...) -> None: ...

class StateTarget(_message.Message):
    __slots__ = ["aspect", "include_history", "target"]
    ASPECT_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_HISTORY_FIELD_NUMBER: _ClassVar[int]
    TARGET_FIELD_NUMBER: _ClassVar[int]
    aspect: str
    include_history: bool
    target: str
    def __init__(self, target: _Optional[str] = ..., aspect: _Optional[str] = ..., include_history: bool = ...) -> None: ...

class TargetHints(_message.Message):
    __slots__ = ["domain", "target_name", "target_type"]
    DOMAIN_FIELD_NUMBER: _ClassVar[int]
    TARGET_NAME_FIELD_NUMBER: _ClassVar[int]
    TARGET_TYPE_FIELD_NUMBER: _ClassVar[int]
    domain: str
    target_name: str
    target_type: str
    def __init__(self, target_type: _Optional[str] = ..., target_name: _Optional[str] = ..., domain: _Optional[str] = ...) -> None: ...

class TimeRange(_message.Message):
    __slots__ = ["relative", "to"]
    FROM_FIELD_NUMBER: _ClassVar[int]
    RELATIVE_FIELD_NUMBER: _ClassVar[int]
    TO_FIELD_NUMBER: _ClassVar[int]
    relative: str
    to: int
    def __init__(self, to: _Optional[int] = ..., relative: _Optional[str] = ..., **kwargs) -> None: ...

class TypedBlock(_message.Message):
    __slots__ = ["metadata", "reason"]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    metadata: _struct_pb2.Struct
    reason: str
    def __init__(self, reason: _Optional[str] = ..., metadata: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class PerceptionIntent(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []

class PerceptionDomain(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []

class PerceptionModality(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []

class PerceptionUrgency(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []

class PerceptionFreshness(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []

class PlanningStrategyKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []

class ReasoningKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []

class RateLimitKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []

class ConfirmationKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []
