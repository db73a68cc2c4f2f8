export interface GetBreakerStateRequest {
    'tool_ids'?: (string)[];
}
export interface GetBreakerStateRequest__Output {
    'tool_ids': (string)[];
}
