export interface WatchBreakersRequest {
    'tool_ids'?: (string)[];
}
export interface WatchBreakersRequest__Output {
    'tool_ids': (string)[];
}
