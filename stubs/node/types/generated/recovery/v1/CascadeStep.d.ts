import type { CascadeAction as _recovery_v1_CascadeAction, CascadeAction__Output as _recovery_v1_CascadeAction__Output } from '../../recovery/v1/CascadeAction';
export interface CascadeStep {
    'tool_id'?: (string);
    'action'?: (_recovery_v1_CascadeAction);
    'default_value'?: (string);
    'reason'?: (string);
}
export interface CascadeStep__Output {
    'tool_id': (string);
    'action': (_recovery_v1_CascadeAction__Output);
    'default_value': (string);
    'reason': (string);
}
