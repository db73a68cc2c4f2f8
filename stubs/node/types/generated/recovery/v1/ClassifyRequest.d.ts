import type { ToolError as _recovery_v1_ToolError, ToolError__Output as _recovery_v1_ToolError__Output } from '../../recovery/v1/ToolError';
export interface ClassifyRequest {
    'tool_id'?: (string);
    'error'?: (_recovery_v1_ToolError | null);
}
export interface ClassifyRequest__Output {
    'tool_id': (string);
    'error': (_recovery_v1_ToolError__Output | null);
}
