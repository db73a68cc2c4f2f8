export declare const ToolEffects: {
    readonly TOOL_EFFECTS_UNSPECIFIED: "TOOL_EFFECTS_UNSPECIFIED";
    readonly TOOL_EFFECTS_NONE: "TOOL_EFFECTS_NONE";
    readonly TOOL_EFFECTS_IDEMPOTENT: "TOOL_EFFECTS_IDEMPOTENT";
    readonly TOOL_EFFECTS_NON_IDEMPOTENT: "TOOL_EFFECTS_NON_IDEMPOTENT";
};
export type ToolEffects = 'TOOL_EFFECTS_UNSPECIFIED' | 0 | 'TOOL_EFFECTS_NONE' | 1 | 'TOOL_EFFECTS_IDEMPOTENT' | 2 | 'TOOL_EFFECTS_NON_IDEMPOTENT' | 3;
export type ToolEffects__Output = typeof ToolEffects[keyof typeof ToolEffects];
