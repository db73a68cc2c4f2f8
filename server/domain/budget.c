/* Retry budget arithmetic (see budget.h). */
#include "domain/budget.h"

uint64_t rd_budget_allowance(const rd_retry_budget_policy *p, uint64_t requests)
{
    double share = p->budget_percent > 0 ? p->budget_percent / 100.0 * (double)requests : 0;
    uint64_t by_share = share >= 1.8e19 ? UINT64_MAX : (uint64_t)share;
    return by_share > p->min_retries_per_window ? by_share : p->min_retries_per_window;
}

bool rd_budget_allows(const rd_retry_budget_policy *p, uint64_t requests, uint64_t retries)
{
    return retries < rd_budget_allowance(p, requests);
}

double rd_throttle_probability(uint64_t requests, uint64_t accepts, double k)
{
    double p = ((double)requests - k * (double)accepts) / ((double)requests + 1.0);
    return p > 0 ? p : 0;
}
