export declare const Hint: {
    readonly HINT_UNSPECIFIED: "HINT_UNSPECIFIED";
    readonly HINT_TRUE: "HINT_TRUE";
    readonly HINT_FALSE: "HINT_FALSE";
};
export type Hint = 'HINT_UNSPECIFIED' | 0 | 'HINT_TRUE' | 1 | 'HINT_FALSE' | 2;
export type Hint__Output = typeof Hint[keyof typeof Hint];
