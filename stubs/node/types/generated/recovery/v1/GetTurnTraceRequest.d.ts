export interface GetTurnTraceRequest {
    'turn_id'?: (string);
}
export interface GetTurnTraceRequest__Output {
    'turn_id': (string);
}
