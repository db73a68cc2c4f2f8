import type { BreakerState as _recovery_v1_BreakerState, BreakerState__Output as _recovery_v1_BreakerState__Output } from '../../recovery/v1/BreakerState';
export interface BreakerChange {
    'breaker'?: (_recovery_v1_BreakerState | null);
    'cause'?: (string);
    'timestamp'?: (string);
}
export interface BreakerChange__Output {
    'breaker': (_recovery_v1_BreakerState__Output | null);
    'cause': (string);
    'timestamp': (string);
}
