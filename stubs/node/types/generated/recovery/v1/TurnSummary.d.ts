export interface TurnSummary {
    'completed'?: (string)[];
    'failed'?: (string)[];
    'timed_out'?: (string)[];
    'skipped'?: (string)[];
    'partial_result'?: (string);
    'turn_failed'?: (boolean);
}
export interface TurnSummary__Output {
    'completed': (string)[];
    'failed': (string)[];
    'timed_out': (string)[];
    'skipped': (string)[];
    'partial_result': (string);
    'turn_failed': (boolean);
}
