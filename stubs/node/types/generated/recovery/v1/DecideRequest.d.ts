import type { ToolError as _recovery_v1_ToolError, ToolError__Output as _recovery_v1_ToolError__Output } from '../../recovery/v1/ToolError';
import type { PlanStep as _recovery_v1_PlanStep, PlanStep__Output as _recovery_v1_PlanStep__Output } from '../../recovery/v1/PlanStep';
import type { ScopeLabel as _recovery_v1_ScopeLabel, ScopeLabel__Output as _recovery_v1_ScopeLabel__Output } from '../../recovery/v1/ScopeLabel';
import type { Long } from '@grpc/proto-loader';
export interface DecideRequest {
    'tool_id'?: (string);
    'error'?: (_recovery_v1_ToolError | null);
    'attempt'?: (number);
    'elapsed_ms'?: (number | string | Long);
    'turn_id'?: (string);
    'turn_remaining_ms'?: (number | string | Long);
    'plan'?: (_recovery_v1_PlanStep)[];
    'executor_id'?: (string);
    'outcome_id'?: (string);
    'permit_id'?: (string);
    'idempotency_key'?: (string);
    'scope'?: (_recovery_v1_ScopeLabel)[];
    'turn_budget'?: "turn_remaining_ms";
}
export interface DecideRequest__Output {
    'tool_id': (string);
    'error': (_recovery_v1_ToolError__Output | null);
    'attempt': (number);
    'elapsed_ms': (number);
    'turn_id': (string);
    'turn_remaining_ms'?: (number);
    'plan': (_recovery_v1_PlanStep__Output)[];
    'executor_id': (string);
    'outcome_id': (string);
    'permit_id': (string);
    'idempotency_key': (string);
    'scope': (_recovery_v1_ScopeLabel__Output)[];
    'turn_budget'?: "turn_remaining_ms";
}
