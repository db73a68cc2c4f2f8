export interface PlanStep {
    'tool_id'?: (string);
    'depends_on'?: (string)[];
    'optional'?: (boolean);
    'default_value'?: (string);
    'has_default'?: "default_value";
}
export interface PlanStep__Output {
    'tool_id': (string);
    'depends_on': (string)[];
    'optional': (boolean);
    'default_value'?: (string);
    'has_default'?: "default_value";
}
