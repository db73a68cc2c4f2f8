import type { BreakerStatus as _recovery_v1_BreakerStatus, BreakerStatus__Output as _recovery_v1_BreakerStatus__Output } from '../../recovery/v1/BreakerStatus';
import type { Long } from '@grpc/proto-loader';
export interface BreakerState {
    'tool_id'?: (string);
    'state'?: (_recovery_v1_BreakerStatus);
    'consecutive_failures'?: (number);
    'failure_threshold'?: (number);
    'opened_at_ms'?: (number | string | Long);
    'open_until_ms'?: (number | string | Long);
    'probe_in_flight'?: (boolean);
    'opens_total'?: (number | string | Long);
    'generation'?: (number | string | Long);
    'success_threshold'?: (number);
    'consecutive_successes'?: (number);
    'forced'?: (_recovery_v1_BreakerStatus);
    'forced_until_ms'?: (number | string | Long);
    'scope_level'?: (string);
    'latency_samples'?: (number | string | Long);
    'latency_p50_ms'?: (number | string | Long);
    'latency_p90_ms'?: (number | string | Long);
    'latency_p99_ms'?: (number | string | Long);
}
export interface BreakerState__Output {
    'tool_id': (string);
    'state': (_recovery_v1_BreakerStatus__Output);
    'consecutive_failures': (number);
    'failure_threshold': (number);
    'opened_at_ms': (number);
    'open_until_ms': (number);
    'probe_in_flight': (boolean);
    'opens_total': (number);
    'generation': (number);
    'success_threshold': (number);
    'consecutive_successes': (number);
    'forced': (_recovery_v1_BreakerStatus__Output);
    'forced_until_ms': (number);
    'scope_level': (string);
    'latency_samples': (number);
    'latency_p50_ms': (number);
    'latency_p90_ms': (number);
    'latency_p99_ms': (number);
}
