import type { BreakerState as _recovery_v1_BreakerState, BreakerState__Output as _recovery_v1_BreakerState__Output } from '../../recovery/v1/BreakerState';
export interface GetBreakerStateResponse {
    'breakers'?: (_recovery_v1_BreakerState)[];
}
export interface GetBreakerStateResponse__Output {
    'breakers': (_recovery_v1_BreakerState__Output)[];
}
