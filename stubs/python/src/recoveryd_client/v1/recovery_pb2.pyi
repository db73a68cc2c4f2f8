from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Iterable as _Iterable, Mapping as _Mapping, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class ErrorKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    ERROR_KIND_UNSPECIFIED: _ClassVar[ErrorKind]
    ERROR_KIND_UNKNOWN_TOOL: _ClassVar[ErrorKind]
    ERROR_KIND_NOT_PERMITTED: _ClassVar[ErrorKind]
    ERROR_KIND_INVALID_PARAMETERS: _ClassVar[ErrorKind]
    ERROR_KIND_LIMIT_EXCEEDED: _ClassVar[ErrorKind]
    ERROR_KIND_CANCELED: _ClassVar[ErrorKind]
    ERROR_KIND_TIMEOUT: _ClassVar[ErrorKind]
    ERROR_KIND_TRANSPORT_ERROR: _ClassVar[ErrorKind]
    ERROR_KIND_EXECUTION_ERROR: _ClassVar[ErrorKind]
    ERROR_KIND_INTERNAL_ERROR: _ClassVar[ErrorKind]

class ErrorSource(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    ERROR_SOURCE_UNSPECIFIED: _ClassVar[ErrorSource]
    ERROR_SOURCE_TOOL: _ClassVar[ErrorSource]
    ERROR_SOURCE_LLM: _ClassVar[ErrorSource]
    ERROR_SOURCE_MCP: _ClassVar[ErrorSource]

class Retryability(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    RETRYABILITY_UNSPECIFIED: _ClassVar[Retryability]
    RETRYABILITY_TRANSIENT: _ClassVar[Retryability]
    RETRYABILITY_PERMANENT: _ClassVar[Retryability]

class Category(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    CATEGORY_UNSPECIFIED: _ClassVar[Category]
    CATEGORY_TRANSIENT: _ClassVar[Category]
    CATEGORY_INPUT_VALIDATION: _ClassVar[Category]
    CATEGORY_EXTERNAL_SERVICE: _ClassVar[Category]
    CATEGORY_PERMISSION: _ClassVar[Category]
    CATEGORY_LOGIC: _ClassVar[Category]
    CATEGORY_RESOURCE: _ClassVar[Category]
    CATEGORY_UNKNOWN: _ClassVar[Category]

class Hint(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    HINT_UNSPECIFIED: _ClassVar[Hint]
    HINT_TRUE: _ClassVar[Hint]
    HINT_FALSE: _ClassVar[Hint]

class ToolEffects(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    TOOL_EFFECTS_UNSPECIFIED: _ClassVar[ToolEffects]
    TOOL_EFFECTS_NONE: _ClassVar[ToolEffects]
    TOOL_EFFECTS_IDEMPOTENT: _ClassVar[ToolEffects]
    TOOL_EFFECTS_NON_IDEMPOTENT: _ClassVar[ToolEffects]

class EffectSafety(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    EFFECT_SAFETY_UNSPECIFIED: _ClassVar[EffectSafety]
    EFFECT_SAFETY_DECLARED_SAFE: _ClassVar[EffectSafety]
    EFFECT_SAFETY_NOT_EXECUTED: _ClassVar[EffectSafety]
    EFFECT_SAFETY_IDEMPOTENCY_KEY: _ClassVar[EffectSafety]
    EFFECT_SAFETY_UNKNOWN: _ClassVar[EffectSafety]

class ClassificationTier(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    CLASSIFICATION_TIER_UNSPECIFIED: _ClassVar[ClassificationTier]
    CLASSIFICATION_TIER_STRUCTURED: _ClassVar[ClassificationTier]
    CLASSIFICATION_TIER_EXCEPTION: _ClassVar[ClassificationTier]
    CLASSIFICATION_TIER_MESSAGE: _ClassVar[ClassificationTier]
    CLASSIFICATION_TIER_GENERIC: _ClassVar[ClassificationTier]
    CLASSIFICATION_TIER_LEARNED: _ClassVar[ClassificationTier]
    CLASSIFICATION_TIER_DEFAULT: _ClassVar[ClassificationTier]
    CLASSIFICATION_TIER_WORDS: _ClassVar[ClassificationTier]

class Action(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    ACTION_UNSPECIFIED: _ClassVar[Action]
    ACTION_PROCEED: _ClassVar[Action]
    ACTION_RETRY: _ClassVar[Action]
    ACTION_USE_ALTERNATIVE: _ClassVar[Action]
    ACTION_FAIL_FAST: _ClassVar[Action]
    ACTION_ESCALATE: _ClassVar[Action]
    ACTION_GIVE_UP: _ClassVar[Action]
    ACTION_PARTIAL: _ClassVar[Action]
    ACTION_VERIFY: _ClassVar[Action]

class BreakerStatus(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    BREAKER_STATUS_UNSPECIFIED: _ClassVar[BreakerStatus]
    BREAKER_STATUS_CLOSED: _ClassVar[BreakerStatus]
    BREAKER_STATUS_OPEN: _ClassVar[BreakerStatus]
    BREAKER_STATUS_HALF_OPEN: _ClassVar[BreakerStatus]

class CascadeAction(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    CASCADE_ACTION_UNSPECIFIED: _ClassVar[CascadeAction]
    CASCADE_ACTION_SKIP: _ClassVar[CascadeAction]
    CASCADE_ACTION_USE_DEFAULT: _ClassVar[CascadeAction]
    CASCADE_ACTION_ESCALATE: _ClassVar[CascadeAction]
ERROR_KIND_UNSPECIFIED: ErrorKind
ERROR_KIND_UNKNOWN_TOOL: ErrorKind
ERROR_KIND_NOT_PERMITTED: ErrorKind
ERROR_KIND_INVALID_PARAMETERS: ErrorKind
ERROR_KIND_LIMIT_EXCEEDED: ErrorKind
ERROR_KIND_CANCELED: ErrorKind
ERROR_KIND_TIMEOUT: ErrorKind
ERROR_KIND_TRANSPORT_ERROR: ErrorKind
ERROR_KIND_EXECUTION_ERROR: ErrorKind
ERROR_KIND_INTERNAL_ERROR: ErrorKind
ERROR_SOURCE_UNSPECIFIED: ErrorSource
ERROR_SOURCE_TOOL: ErrorSource
ERROR_SOURCE_LLM: ErrorSource
ERROR_SOURCE_MCP: ErrorSource
RETRYABILITY_UNSPECIFIED: Retryability
RETRYABILITY_TRANSIENT: Retryability
RETRYABILITY_PERMANENT: Retryability
CATEGORY_UNSPECIFIED: Category
CATEGORY_TRANSIENT: Category
CATEGORY_INPUT_VALIDATION: Category
CATEGORY_EXTERNAL_SERVICE: Category
CATEGORY_PERMISSION: Category
CATEGORY_LOGIC: Category
CATEGORY_RESOURCE: Category
CATEGORY_UNKNOWN: Category
HINT_UNSPECIFIED: Hint
HINT_TRUE: Hint
HINT_FALSE: Hint
TOOL_EFFECTS_UNSPECIFIED: ToolEffects
TOOL_EFFECTS_NONE: ToolEffects
TOOL_EFFECTS_IDEMPOTENT: ToolEffects
TOOL_EFFECTS_NON_IDEMPOTENT: ToolEffects
EFFECT_SAFETY_UNSPECIFIED: EffectSafety
EFFECT_SAFETY_DECLARED_SAFE: EffectSafety
EFFECT_SAFETY_NOT_EXECUTED: EffectSafety
EFFECT_SAFETY_IDEMPOTENCY_KEY: EffectSafety
EFFECT_SAFETY_UNKNOWN: EffectSafety
CLASSIFICATION_TIER_UNSPECIFIED: ClassificationTier
CLASSIFICATION_TIER_STRUCTURED: ClassificationTier
CLASSIFICATION_TIER_EXCEPTION: ClassificationTier
CLASSIFICATION_TIER_MESSAGE: ClassificationTier
CLASSIFICATION_TIER_GENERIC: ClassificationTier
CLASSIFICATION_TIER_LEARNED: ClassificationTier
CLASSIFICATION_TIER_DEFAULT: ClassificationTier
CLASSIFICATION_TIER_WORDS: ClassificationTier
ACTION_UNSPECIFIED: Action
ACTION_PROCEED: Action
ACTION_RETRY: Action
ACTION_USE_ALTERNATIVE: Action
ACTION_FAIL_FAST: Action
ACTION_ESCALATE: Action
ACTION_GIVE_UP: Action
ACTION_PARTIAL: Action
ACTION_VERIFY: Action
BREAKER_STATUS_UNSPECIFIED: BreakerStatus
BREAKER_STATUS_CLOSED: BreakerStatus
BREAKER_STATUS_OPEN: BreakerStatus
BREAKER_STATUS_HALF_OPEN: BreakerStatus
CASCADE_ACTION_UNSPECIFIED: CascadeAction
CASCADE_ACTION_SKIP: CascadeAction
CASCADE_ACTION_USE_DEFAULT: CascadeAction
CASCADE_ACTION_ESCALATE: CascadeAction

class ToolError(_message.Message):
    __slots__ = ("message", "http_status", "grpc_code", "code", "exception_type", "kind", "source", "retry_after_ms", "read_only_hint", "destructive_hint", "idempotent_hint")
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    HTTP_STATUS_FIELD_NUMBER: _ClassVar[int]
    GRPC_CODE_FIELD_NUMBER: _ClassVar[int]
    CODE_FIELD_NUMBER: _ClassVar[int]
    EXCEPTION_TYPE_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    RETRY_AFTER_MS_FIELD_NUMBER: _ClassVar[int]
    READ_ONLY_HINT_FIELD_NUMBER: _ClassVar[int]
    DESTRUCTIVE_HINT_FIELD_NUMBER: _ClassVar[int]
    IDEMPOTENT_HINT_FIELD_NUMBER: _ClassVar[int]
    message: str
    http_status: int
    grpc_code: int
    code: str
    exception_type: str
    kind: ErrorKind
    source: ErrorSource
    retry_after_ms: int
    read_only_hint: Hint
    destructive_hint: Hint
    idempotent_hint: Hint
    def __init__(self, message: _Optional[str] = ..., http_status: _Optional[int] = ..., grpc_code: _Optional[int] = ..., code: _Optional[str] = ..., exception_type: _Optional[str] = ..., kind: _Optional[_Union[ErrorKind, str]] = ..., source: _Optional[_Union[ErrorSource, str]] = ..., retry_after_ms: _Optional[int] = ..., read_only_hint: _Optional[_Union[Hint, str]] = ..., destructive_hint: _Optional[_Union[Hint, str]] = ..., idempotent_hint: _Optional[_Union[Hint, str]] = ...) -> None: ...

class Classification(_message.Message):
    __slots__ = ("retryability", "category", "kind", "executed", "retry_after_ms", "suggestion", "rule_id", "overridden", "llm_message", "decided_by", "effects", "effect_safety", "effect_reason")
    RETRYABILITY_FIELD_NUMBER: _ClassVar[int]
    CATEGORY_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    EXECUTED_FIELD_NUMBER: _ClassVar[int]
    RETRY_AFTER_MS_FIELD_NUMBER: _ClassVar[int]
    SUGGESTION_FIELD_NUMBER: _ClassVar[int]
    RULE_ID_FIELD_NUMBER: _ClassVar[int]
    OVERRIDDEN_FIELD_NUMBER: _ClassVar[int]
    LLM_MESSAGE_FIELD_NUMBER: _ClassVar[int]
    DECIDED_BY_FIELD_NUMBER: _ClassVar[int]
    EFFECTS_FIELD_NUMBER: _ClassVar[int]
    EFFECT_SAFETY_FIELD_NUMBER: _ClassVar[int]
    EFFECT_REASON_FIELD_NUMBER: _ClassVar[int]
    retryability: Retryability
    category: Category
    kind: ErrorKind
    executed: bool
    retry_after_ms: int
    suggestion: str
    rule_id: str
    overridden: bool
    llm_message: str
    decided_by: ClassificationTier
    effects: ToolEffects
    effect_safety: EffectSafety
    effect_reason: str
    def __init__(self, retryability: _Optional[_Union[Retryability, str]] = ..., category: _Optional[_Union[Category, str]] = ..., kind: _Optional[_Union[ErrorKind, str]] = ..., executed: bool = ..., retry_after_ms: _Optional[int] = ..., suggestion: _Optional[str] = ..., rule_id: _Optional[str] = ..., overridden: bool = ..., llm_message: _Optional[str] = ..., decided_by: _Optional[_Union[ClassificationTier, str]] = ..., effects: _Optional[_Union[ToolEffects, str]] = ..., effect_safety: _Optional[_Union[EffectSafety, str]] = ..., effect_reason: _Optional[str] = ...) -> None: ...

class ClassifyRequest(_message.Message):
    __slots__ = ("tool_id", "error")
    TOOL_ID_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    tool_id: str
    error: ToolError
    def __init__(self, tool_id: _Optional[str] = ..., error: _Optional[_Union[ToolError, _Mapping]] = ...) -> None: ...

class ClassifyResponse(_message.Message):
    __slots__ = ("classification",)
    CLASSIFICATION_FIELD_NUMBER: _ClassVar[int]
    classification: Classification
    def __init__(self, classification: _Optional[_Union[Classification, _Mapping]] = ...) -> None: ...

class PlanStep(_message.Message):
    __slots__ = ("tool_id", "depends_on", "optional", "default_value")
    TOOL_ID_FIELD_NUMBER: _ClassVar[int]
    DEPENDS_ON_FIELD_NUMBER: _ClassVar[int]
    OPTIONAL_FIELD_NUMBER: _ClassVar[int]
    DEFAULT_VALUE_FIELD_NUMBER: _ClassVar[int]
    tool_id: str
    depends_on: _containers.RepeatedScalarFieldContainer[str]
    optional: bool
    default_value: str
    def __init__(self, tool_id: _Optional[str] = ..., depends_on: _Optional[_Iterable[str]] = ..., optional: bool = ..., default_value: _Optional[str] = ...) -> None: ...

class DecideRequest(_message.Message):
    __slots__ = ("tool_id", "error", "attempt", "elapsed_ms", "turn_id", "turn_remaining_ms", "plan", "executor_id", "outcome_id", "permit_id", "idempotency_key", "scope")
    TOOL_ID_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    ATTEMPT_FIELD_NUMBER: _ClassVar[int]
    ELAPSED_MS_FIELD_NUMBER: _ClassVar[int]
    TURN_ID_FIELD_NUMBER: _ClassVar[int]
    TURN_REMAINING_MS_FIELD_NUMBER: _ClassVar[int]
    PLAN_FIELD_NUMBER: _ClassVar[int]
    EXECUTOR_ID_FIELD_NUMBER: _ClassVar[int]
    OUTCOME_ID_FIELD_NUMBER: _ClassVar[int]
    PERMIT_ID_FIELD_NUMBER: _ClassVar[int]
    IDEMPOTENCY_KEY_FIELD_NUMBER: _ClassVar[int]
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    tool_id: str
    error: ToolError
    attempt: int
    elapsed_ms: int
    turn_id: str
    turn_remaining_ms: int
    plan: _containers.RepeatedCompositeFieldContainer[PlanStep]
    executor_id: str
    outcome_id: str
    permit_id: str
    idempotency_key: str
    scope: _containers.RepeatedCompositeFieldContainer[ScopeLabel]
    def __init__(self, tool_id: _Optional[str] = ..., error: _Optional[_Union[ToolError, _Mapping]] = ..., attempt: _Optional[int] = ..., elapsed_ms: _Optional[int] = ..., turn_id: _Optional[str] = ..., turn_remaining_ms: _Optional[int] = ..., plan: _Optional[_Iterable[_Union[PlanStep, _Mapping]]] = ..., executor_id: _Optional[str] = ..., outcome_id: _Optional[str] = ..., permit_id: _Optional[str] = ..., idempotency_key: _Optional[str] = ..., scope: _Optional[_Iterable[_Union[ScopeLabel, _Mapping]]] = ...) -> None: ...

class ScopeLabel(_message.Message):
    __slots__ = ("dimension", "value")
    DIMENSION_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    dimension: str
    value: str
    def __init__(self, dimension: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...

class BreakerState(_message.Message):
    __slots__ = ("tool_id", "state", "consecutive_failures", "failure_threshold", "opened_at_ms", "open_until_ms", "probe_in_flight", "opens_total", "generation", "success_threshold", "consecutive_successes", "forced", "forced_until_ms", "scope_level", "latency_samples", "latency_p50_ms", "latency_p90_ms", "latency_p99_ms")
    TOOL_ID_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    CONSECUTIVE_FAILURES_FIELD_NUMBER: _ClassVar[int]
    FAILURE_THRESHOLD_FIELD_NUMBER: _ClassVar[int]
    OPENED_AT_MS_FIELD_NUMBER: _ClassVar[int]
    OPEN_UNTIL_MS_FIELD_NUMBER: _ClassVar[int]
    PROBE_IN_FLIGHT_FIELD_NUMBER: _ClassVar[int]
    OPENS_TOTAL_FIELD_NUMBER: _ClassVar[int]
    GENERATION_FIELD_NUMBER: _ClassVar[int]
    SUCCESS_THRESHOLD_FIELD_NUMBER: _ClassVar[int]
    CONSECUTIVE_SUCCESSES_FIELD_NUMBER: _ClassVar[int]
    FORCED_FIELD_NUMBER: _ClassVar[int]
    FORCED_UNTIL_MS_FIELD_NUMBER: _ClassVar[int]
    SCOPE_LEVEL_FIELD_NUMBER: _ClassVar[int]
    LATENCY_SAMPLES_FIELD_NUMBER: _ClassVar[int]
    LATENCY_P50_MS_FIELD_NUMBER: _ClassVar[int]
    LATENCY_P90_MS_FIELD_NUMBER: _ClassVar[int]
    LATENCY_P99_MS_FIELD_NUMBER: _ClassVar[int]
    tool_id: str
    state: BreakerStatus
    consecutive_failures: int
    failure_threshold: int
    opened_at_ms: int
    open_until_ms: int
    probe_in_flight: bool
    opens_total: int
    generation: int
    success_threshold: int
    consecutive_successes: int
    forced: BreakerStatus
    forced_until_ms: int
    scope_level: str
    latency_samples: int
    latency_p50_ms: int
    latency_p90_ms: int
    latency_p99_ms: int
    def __init__(self, tool_id: _Optional[str] = ..., state: _Optional[_Union[BreakerStatus, str]] = ..., consecutive_failures: _Optional[int] = ..., failure_threshold: _Optional[int] = ..., opened_at_ms: _Optional[int] = ..., open_until_ms: _Optional[int] = ..., probe_in_flight: bool = ..., opens_total: _Optional[int] = ..., generation: _Optional[int] = ..., success_threshold: _Optional[int] = ..., consecutive_successes: _Optional[int] = ..., forced: _Optional[_Union[BreakerStatus, str]] = ..., forced_until_ms: _Optional[int] = ..., scope_level: _Optional[str] = ..., latency_samples: _Optional[int] = ..., latency_p50_ms: _Optional[int] = ..., latency_p90_ms: _Optional[int] = ..., latency_p99_ms: _Optional[int] = ...) -> None: ...

class CascadeStep(_message.Message):
    __slots__ = ("tool_id", "action", "default_value", "reason")
    TOOL_ID_FIELD_NUMBER: _ClassVar[int]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    DEFAULT_VALUE_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    tool_id: str
    action: CascadeAction
    default_value: str
    reason: str
    def __init__(self, tool_id: _Optional[str] = ..., action: _Optional[_Union[CascadeAction, str]] = ..., default_value: _Optional[str] = ..., reason: _Optional[str] = ...) -> None: ...

class TraceEvent(_message.Message):
    __slots__ = ("event_type", "tool_id", "turn_id", "error", "classification", "circuit_breaker_state", "retry_count", "decision", "timestamp", "detail", "timeout_ms", "sequence", "trace_id", "span_id")
    EVENT_TYPE_FIELD_NUMBER: _ClassVar[int]
    TOOL_ID_FIELD_NUMBER: _ClassVar[int]
    TURN_ID_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    CLASSIFICATION_FIELD_NUMBER: _ClassVar[int]
    CIRCUIT_BREAKER_STATE_FIELD_NUMBER: _ClassVar[int]
    RETRY_COUNT_FIELD_NUMBER: _ClassVar[int]
    DECISION_FIELD_NUMBER: _ClassVar[int]
    TIMESTAMP_FIELD_NUMBER: _ClassVar[int]
    DETAIL_FIELD_NUMBER: _ClassVar[int]
    TIMEOUT_MS_FIELD_NUMBER: _ClassVar[int]
    SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    TRACE_ID_FIELD_NUMBER: _ClassVar[int]
    SPAN_ID_FIELD_NUMBER: _ClassVar[int]
    event_type: str
    tool_id: str
    turn_id: str
    error: str
    classification: str
    circuit_breaker_state: str
    retry_count: int
    decision: str
    timestamp: str
    detail: str
    timeout_ms: int
    sequence: int
    trace_id: str
    span_id: str
    def __init__(self, event_type: _Optional[str] = ..., tool_id: _Optional[str] = ..., turn_id: _Optional[str] = ..., error: _Optional[str] = ..., classification: _Optional[str] = ..., circuit_breaker_state: _Optional[str] = ..., retry_count: _Optional[int] = ..., decision: _Optional[str] = ..., timestamp: _Optional[str] = ..., detail: _Optional[str] = ..., timeout_ms: _Optional[int] = ..., sequence: _Optional[int] = ..., trace_id: _Optional[str] = ..., span_id: _Optional[str] = ...) -> None: ...

class DecideResponse(_message.Message):
    __slots__ = ("action", "delay_ms", "alternative_tool_id", "timeout_ms", "permit_id", "classification", "breaker", "reason", "cascade", "trace", "duplicate", "delay_us", "verify_tool_id", "idempotency_key", "shadow_action", "shadow_reason")
    ACTION_FIELD_NUMBER: _ClassVar[int]
    DELAY_MS_FIELD_NUMBER: _ClassVar[int]
    ALTERNATIVE_TOOL_ID_FIELD_NUMBER: _ClassVar[int]
    TIMEOUT_MS_FIELD_NUMBER: _ClassVar[int]
    PERMIT_ID_FIELD_NUMBER: _ClassVar[int]
    CLASSIFICATION_FIELD_NUMBER: _ClassVar[int]
    BREAKER_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    CASCADE_FIELD_NUMBER: _ClassVar[int]
    TRACE_FIELD_NUMBER: _ClassVar[int]
    DUPLICATE_FIELD_NUMBER: _ClassVar[int]
    DELAY_US_FIELD_NUMBER: _ClassVar[int]
    VERIFY_TOOL_ID_FIELD_NUMBER: _ClassVar[int]
    IDEMPOTENCY_KEY_FIELD_NUMBER: _ClassVar[int]
    SHADOW_ACTION_FIELD_NUMBER: _ClassVar[int]
    SHADOW_REASON_FIELD_NUMBER: _ClassVar[int]
    action: Action
    delay_ms: int
    alternative_tool_id: str
    timeout_ms: int
    permit_id: str
    classification: Classification
    breaker: BreakerState
    reason: str
    cascade: _containers.RepeatedCompositeFieldContainer[CascadeStep]
    trace: _containers.RepeatedCompositeFieldContainer[TraceEvent]
    duplicate: bool
    delay_us: int
    verify_tool_id: str
    idempotency_key: str
    shadow_action: Action
    shadow_reason: str
    def __init__(self, action: _Optional[_Union[Action, str]] = ..., delay_ms: _Optional[int] = ..., alternative_tool_id: _Optional[str] = ..., timeout_ms: _Optional[int] = ..., permit_id: _Optional[str] = ..., classification: _Optional[_Union[Classification, _Mapping]] = ..., breaker: _Optional[_Union[BreakerState, _Mapping]] = ..., reason: _Optional[str] = ..., cascade: _Optional[_Iterable[_Union[CascadeStep, _Mapping]]] = ..., trace: _Optional[_Iterable[_Union[TraceEvent, _Mapping]]] = ..., duplicate: bool = ..., delay_us: _Optional[int] = ..., verify_tool_id: _Optional[str] = ..., idempotency_key: _Optional[str] = ..., shadow_action: _Optional[_Union[Action, str]] = ..., shadow_reason: _Optional[str] = ...) -> None: ...

class RecordOutcomeRequest(_message.Message):
    __slots__ = ("tool_id", "success", "error", "latency_ms", "attempt", "turn_id", "outcome_id", "permit_id", "executor_id", "scope")
    TOOL_ID_FIELD_NUMBER: _ClassVar[int]
    SUCCESS_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    LATENCY_MS_FIELD_NUMBER: _ClassVar[int]
    ATTEMPT_FIELD_NUMBER: _ClassVar[int]
    TURN_ID_FIELD_NUMBER: _ClassVar[int]
    OUTCOME_ID_FIELD_NUMBER: _ClassVar[int]
    PERMIT_ID_FIELD_NUMBER: _ClassVar[int]
    EXECUTOR_ID_FIELD_NUMBER: _ClassVar[int]
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    tool_id: str
    success: bool
    error: ToolError
    latency_ms: int
    attempt: int
    turn_id: str
    outcome_id: str
    permit_id: str
    executor_id: str
    scope: _containers.RepeatedCompositeFieldContainer[ScopeLabel]
    def __init__(self, tool_id: _Optional[str] = ..., success: bool = ..., error: _Optional[_Union[ToolError, _Mapping]] = ..., latency_ms: _Optional[int] = ..., attempt: _Optional[int] = ..., turn_id: _Optional[str] = ..., outcome_id: _Optional[str] = ..., permit_id: _Optional[str] = ..., executor_id: _Optional[str] = ..., scope: _Optional[_Iterable[_Union[ScopeLabel, _Mapping]]] = ...) -> None: ...

class RecordOutcomeResponse(_message.Message):
    __slots__ = ("breaker", "duplicate")
    BREAKER_FIELD_NUMBER: _ClassVar[int]
    DUPLICATE_FIELD_NUMBER: _ClassVar[int]
    breaker: BreakerState
    duplicate: bool
    def __init__(self, breaker: _Optional[_Union[BreakerState, _Mapping]] = ..., duplicate: bool = ...) -> None: ...

class GetBreakerStateRequest(_message.Message):
    __slots__ = ("tool_ids",)
    TOOL_IDS_FIELD_NUMBER: _ClassVar[int]
    tool_ids: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, tool_ids: _Optional[_Iterable[str]] = ...) -> None: ...

class GetBreakerStateResponse(_message.Message):
    __slots__ = ("breakers",)
    BREAKERS_FIELD_NUMBER: _ClassVar[int]
    breakers: _containers.RepeatedCompositeFieldContainer[BreakerState]
    def __init__(self, breakers: _Optional[_Iterable[_Union[BreakerState, _Mapping]]] = ...) -> None: ...

class GetTurnTraceRequest(_message.Message):
    __slots__ = ("turn_id",)
    TURN_ID_FIELD_NUMBER: _ClassVar[int]
    turn_id: str
    def __init__(self, turn_id: _Optional[str] = ...) -> None: ...

class TurnSummary(_message.Message):
    __slots__ = ("completed", "failed", "timed_out", "skipped", "partial_result", "turn_failed")
    COMPLETED_FIELD_NUMBER: _ClassVar[int]
    FAILED_FIELD_NUMBER: _ClassVar[int]
    TIMED_OUT_FIELD_NUMBER: _ClassVar[int]
    SKIPPED_FIELD_NUMBER: _ClassVar[int]
    PARTIAL_RESULT_FIELD_NUMBER: _ClassVar[int]
    TURN_FAILED_FIELD_NUMBER: _ClassVar[int]
    completed: _containers.RepeatedScalarFieldContainer[str]
    failed: _containers.RepeatedScalarFieldContainer[str]
    timed_out: _containers.RepeatedScalarFieldContainer[str]
    skipped: _containers.RepeatedScalarFieldContainer[str]
    partial_result: str
    turn_failed: bool
    def __init__(self, completed: _Optional[_Iterable[str]] = ..., failed: _Optional[_Iterable[str]] = ..., timed_out: _Optional[_Iterable[str]] = ..., skipped: _Optional[_Iterable[str]] = ..., partial_result: _Optional[str] = ..., turn_failed: bool = ...) -> None: ...

class GetTurnTraceResponse(_message.Message):
    __slots__ = ("turn_id", "events", "summary")
    TURN_ID_FIELD_NUMBER: _ClassVar[int]
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    SUMMARY_FIELD_NUMBER: _ClassVar[int]
    turn_id: str
    events: _containers.RepeatedCompositeFieldContainer[TraceEvent]
    summary: TurnSummary
    def __init__(self, turn_id: _Optional[str] = ..., events: _Optional[_Iterable[_Union[TraceEvent, _Mapping]]] = ..., summary: _Optional[_Union[TurnSummary, _Mapping]] = ...) -> None: ...

class WatchBreakersRequest(_message.Message):
    __slots__ = ("tool_ids",)
    TOOL_IDS_FIELD_NUMBER: _ClassVar[int]
    tool_ids: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, tool_ids: _Optional[_Iterable[str]] = ...) -> None: ...

class BreakerChange(_message.Message):
    __slots__ = ("breaker", "cause", "timestamp")
    BREAKER_FIELD_NUMBER: _ClassVar[int]
    CAUSE_FIELD_NUMBER: _ClassVar[int]
    TIMESTAMP_FIELD_NUMBER: _ClassVar[int]
    breaker: BreakerState
    cause: str
    timestamp: str
    def __init__(self, breaker: _Optional[_Union[BreakerState, _Mapping]] = ..., cause: _Optional[str] = ..., timestamp: _Optional[str] = ...) -> None: ...
