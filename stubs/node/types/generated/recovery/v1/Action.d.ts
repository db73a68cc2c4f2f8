export declare const Action: {
    readonly ACTION_UNSPECIFIED: "ACTION_UNSPECIFIED";
    readonly ACTION_PROCEED: "ACTION_PROCEED";
    readonly ACTION_RETRY: "ACTION_RETRY";
    readonly ACTION_USE_ALTERNATIVE: "ACTION_USE_ALTERNATIVE";
    readonly ACTION_FAIL_FAST: "ACTION_FAIL_FAST";
    readonly ACTION_ESCALATE: "ACTION_ESCALATE";
    readonly ACTION_GIVE_UP: "ACTION_GIVE_UP";
    readonly ACTION_PARTIAL: "ACTION_PARTIAL";
};
export type Action = 'ACTION_UNSPECIFIED' | 0 | 'ACTION_PROCEED' | 1 | 'ACTION_RETRY' | 2 | 'ACTION_USE_ALTERNATIVE' | 3 | 'ACTION_FAIL_FAST' | 4 | 'ACTION_ESCALATE' | 5 | 'ACTION_GIVE_UP' | 6 | 'ACTION_PARTIAL' | 7;
export type Action__Output = typeof Action[keyof typeof Action];
