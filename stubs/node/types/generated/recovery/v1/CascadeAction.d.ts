export declare const CascadeAction: {
    readonly CASCADE_ACTION_UNSPECIFIED: "CASCADE_ACTION_UNSPECIFIED";
    readonly CASCADE_ACTION_SKIP: "CASCADE_ACTION_SKIP";
    readonly CASCADE_ACTION_USE_DEFAULT: "CASCADE_ACTION_USE_DEFAULT";
    readonly CASCADE_ACTION_ESCALATE: "CASCADE_ACTION_ESCALATE";
};
export type CascadeAction = 'CASCADE_ACTION_UNSPECIFIED' | 0 | 'CASCADE_ACTION_SKIP' | 1 | 'CASCADE_ACTION_USE_DEFAULT' | 2 | 'CASCADE_ACTION_ESCALATE' | 3;
export type CascadeAction__Output = typeof CascadeAction[keyof typeof CascadeAction];
