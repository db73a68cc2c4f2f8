export declare const BreakerStatus: {
    readonly BREAKER_STATUS_UNSPECIFIED: "BREAKER_STATUS_UNSPECIFIED";
    readonly BREAKER_STATUS_CLOSED: "BREAKER_STATUS_CLOSED";
    readonly BREAKER_STATUS_OPEN: "BREAKER_STATUS_OPEN";
    readonly BREAKER_STATUS_HALF_OPEN: "BREAKER_STATUS_HALF_OPEN";
};
export type BreakerStatus = 'BREAKER_STATUS_UNSPECIFIED' | 0 | 'BREAKER_STATUS_CLOSED' | 1 | 'BREAKER_STATUS_OPEN' | 2 | 'BREAKER_STATUS_HALF_OPEN' | 3;
export type BreakerStatus__Output = typeof BreakerStatus[keyof typeof BreakerStatus];
