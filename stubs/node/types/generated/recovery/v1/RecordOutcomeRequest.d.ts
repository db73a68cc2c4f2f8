import type { ToolError as _recovery_v1_ToolError, ToolError__Output as _recovery_v1_ToolError__Output } from '../../recovery/v1/ToolError';
import type { ScopeLabel as _recovery_v1_ScopeLabel, ScopeLabel__Output as _recovery_v1_ScopeLabel__Output } from '../../recovery/v1/ScopeLabel';
import type { Long } from '@grpc/proto-loader';
export interface RecordOutcomeRequest {
    'tool_id'?: (string);
    'success'?: (boolean);
    'error'?: (_recovery_v1_ToolError | null);
    'latency_ms'?: (number | string | Long);
    'attempt'?: (number);
    'turn_id'?: (string);
    'outcome_id'?: (string);
    'permit_id'?: (string);
    'executor_id'?: (string);
    'scope'?: (_recovery_v1_ScopeLabel)[];
}
export interface RecordOutcomeRequest__Output {
    'tool_id': (string);
    'success': (boolean);
    'error': (_recovery_v1_ToolError__Output | null);
    'latency_ms': (number);
    'attempt': (number);
    'turn_id': (string);
    'outcome_id': (string);
    'permit_id': (string);
    'executor_id': (string);
    'scope': (_recovery_v1_ScopeLabel__Output)[];
}
