export declare const Retryability: {
    readonly RETRYABILITY_UNSPECIFIED: "RETRYABILITY_UNSPECIFIED";
    readonly RETRYABILITY_TRANSIENT: "RETRYABILITY_TRANSIENT";
    readonly RETRYABILITY_PERMANENT: "RETRYABILITY_PERMANENT";
};
export type Retryability = 'RETRYABILITY_UNSPECIFIED' | 0 | 'RETRYABILITY_TRANSIENT' | 1 | 'RETRYABILITY_PERMANENT' | 2;
export type Retryability__Output = typeof Retryability[keyof typeof Retryability];
