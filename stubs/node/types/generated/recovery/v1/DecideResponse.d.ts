import type { Action as _recovery_v1_Action, Action__Output as _recovery_v1_Action__Output } from '../../recovery/v1/Action';
import type { Classification as _recovery_v1_Classification, Classification__Output as _recovery_v1_Classification__Output } from '../../recovery/v1/Classification';
import type { BreakerState as _recovery_v1_BreakerState, BreakerState__Output as _recovery_v1_BreakerState__Output } from '../../recovery/v1/BreakerState';
import type { CascadeStep as _recovery_v1_CascadeStep, CascadeStep__Output as _recovery_v1_CascadeStep__Output } from '../../recovery/v1/CascadeStep';
import type { TraceEvent as _recovery_v1_TraceEvent, TraceEvent__Output as _recovery_v1_TraceEvent__Output } from '../../recovery/v1/TraceEvent';
import type { Long } from '@grpc/proto-loader';
export interface DecideResponse {
    'action'?: (_recovery_v1_Action);
    'delay_ms'?: (number | string | Long);
    'alternative_tool_id'?: (string);
    'timeout_ms'?: (number | string | Long);
    'permit_id'?: (string);
    'classification'?: (_recovery_v1_Classification | null);
    'breaker'?: (_recovery_v1_BreakerState | null);
    'reason'?: (string);
    'cascade'?: (_recovery_v1_CascadeStep)[];
    'trace'?: (_recovery_v1_TraceEvent)[];
    'duplicate'?: (boolean);
    'delay_us'?: (number | string | Long);
    'verify_tool_id'?: (string);
    'idempotency_key'?: (string);
    'shadow_action'?: (_recovery_v1_Action);
    'shadow_reason'?: (string);
}
export interface DecideResponse__Output {
    'action': (_recovery_v1_Action__Output);
    'delay_ms': (number);
    'alternative_tool_id': (string);
    'timeout_ms': (number);
    'permit_id': (string);
    'classification': (_recovery_v1_Classification__Output | null);
    'breaker': (_recovery_v1_BreakerState__Output | null);
    'reason': (string);
    'cascade': (_recovery_v1_CascadeStep__Output)[];
    'trace': (_recovery_v1_TraceEvent__Output)[];
    'duplicate': (boolean);
    'delay_us': (number);
    'verify_tool_id': (string);
    'idempotency_key': (string);
    'shadow_action': (_recovery_v1_Action__Output);
    'shadow_reason': (string);
}
