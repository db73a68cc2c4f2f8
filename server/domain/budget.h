/* Retry budgets shared by the fleet (docs/FLEET.md), as Envoy's retry
 * budget and gRPC's retry throttling do per client, but counted in the
 * store so every replica and executor draws on one budget per tool.
 *
 * Over a sliding window (domain/window.h) the store counts requests
 * (admission checks answered PROCEED, and failed attempts reported to
 * Decide) and retries (RETRY decisions granted). A retry is granted only
 * while retries < max(min_retries_per_window,
 *                     floor(budget_percent / 100 * requests)).
 * The minimum lets a quiet tool retry at all; the percentage caps how much
 * extra load retries may add when many calls fail at once.
 *
 * Pure arithmetic; the store applies it atomically (check and count in one
 * step under its lock, or in one Lua script). */
#ifndef RD_DOMAIN_BUDGET_H
#define RD_DOMAIN_BUDGET_H

#include <stdbool.h>
#include <stdint.h>

typedef struct rd_retry_budget_policy {
    bool enabled;
    double budget_percent;           /* 0..1000: retries as a share of requests */
    uint32_t min_retries_per_window; /* always allowed, whatever the traffic */
    int64_t window_ms;
} rd_retry_budget_policy;

/* Fields of the budget's window (domain/window.h). */
enum { RD_BUDGET_FIELD_REQUESTS = 0, RD_BUDGET_FIELD_RETRIES = 1 };

/* What the store is asked to do with the budget. */
typedef enum {
    RD_BUDGET_COUNT_REQUEST = 1, /* one more request */
    RD_BUDGET_TAKE_RETRY = 2,    /* grant and count a retry if the budget allows */
    RD_BUDGET_PEEK = 3,          /* would a retry be granted? count nothing */
} rd_budget_op;

typedef struct rd_budget_result {
    bool granted;                /* TAKE_RETRY / PEEK: the budget allows a retry */
    uint64_t requests;           /* in the window, after the operation */
    uint64_t retries;
} rd_budget_result;

/* Retries the window allows for this many requests. */
uint64_t rd_budget_allowance(const rd_retry_budget_policy *p, uint64_t requests);

/* True when one more retry fits. */
bool rd_budget_allows(const rd_retry_budget_policy *p, uint64_t requests, uint64_t retries);

/* Client-side adaptive throttling (Site Reliability Engineering, "Handling
 * Overload"): the probability with which a client should reject a request
 * locally, max(0, (requests - k * accepts) / (requests + 1)). */
double rd_throttle_probability(uint64_t requests, uint64_t accepts, double k);

#endif
