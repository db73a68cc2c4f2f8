import type { TraceEvent as _recovery_v1_TraceEvent, TraceEvent__Output as _recovery_v1_TraceEvent__Output } from '../../recovery/v1/TraceEvent';
import type { TurnSummary as _recovery_v1_TurnSummary, TurnSummary__Output as _recovery_v1_TurnSummary__Output } from '../../recovery/v1/TurnSummary';
export interface GetTurnTraceResponse {
    'turn_id'?: (string);
    'events'?: (_recovery_v1_TraceEvent)[];
    'summary'?: (_recovery_v1_TurnSummary | null);
}
export interface GetTurnTraceResponse__Output {
    'turn_id': (string);
    'events': (_recovery_v1_TraceEvent__Output)[];
    'summary': (_recovery_v1_TurnSummary__Output | null);
}
