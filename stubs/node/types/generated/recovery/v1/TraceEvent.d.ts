import type { Long } from '@grpc/proto-loader';
export interface TraceEvent {
    'event_type'?: (string);
    'tool_id'?: (string);
    'turn_id'?: (string);
    'error'?: (string);
    'classification'?: (string);
    'circuit_breaker_state'?: (string);
    'retry_count'?: (number);
    'decision'?: (string);
    'timestamp'?: (string);
    'detail'?: (string);
    'timeout_ms'?: (number | string | Long);
    'sequence'?: (number | string | Long);
    'trace_id'?: (string);
    'span_id'?: (string);
}
export interface TraceEvent__Output {
    'event_type': (string);
    'tool_id': (string);
    'turn_id': (string);
    'error': (string);
    'classification': (string);
    'circuit_breaker_state': (string);
    'retry_count': (number);
    'decision': (string);
    'timestamp': (string);
    'detail': (string);
    'timeout_ms': (number);
    'sequence': (number);
    'trace_id': (string);
    'span_id': (string);
}
