export interface ScopeLabel {
    'dimension'?: (string);
    'value'?: (string);
}
export interface ScopeLabel__Output {
    'dimension': (string);
    'value': (string);
}
