import type { BreakerState as _recovery_v1_BreakerState, BreakerState__Output as _recovery_v1_BreakerState__Output } from '../../recovery/v1/BreakerState';
export interface RecordOutcomeResponse {
    'breaker'?: (_recovery_v1_BreakerState | null);
    'duplicate'?: (boolean);
}
export interface RecordOutcomeResponse__Output {
    'breaker': (_recovery_v1_BreakerState__Output | null);
    'duplicate': (boolean);
}
