export declare const ErrorSource: {
    readonly ERROR_SOURCE_UNSPECIFIED: "ERROR_SOURCE_UNSPECIFIED";
    readonly ERROR_SOURCE_TOOL: "ERROR_SOURCE_TOOL";
    readonly ERROR_SOURCE_LLM: "ERROR_SOURCE_LLM";
    readonly ERROR_SOURCE_MCP: "ERROR_SOURCE_MCP";
};
export type ErrorSource = 'ERROR_SOURCE_UNSPECIFIED' | 0 | 'ERROR_SOURCE_TOOL' | 1 | 'ERROR_SOURCE_LLM' | 2 | 'ERROR_SOURCE_MCP' | 3;
export type ErrorSource__Output = typeof ErrorSource[keyof typeof ErrorSource];
