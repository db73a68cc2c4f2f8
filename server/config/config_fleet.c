/* Parsing of the fleet keys (see config_fleet.h). */
#include "config/config_fleet.h"

#include <string.h>

#include "domain/err.h"

#define DAY_MS 86400000LL
#define QUORUM_MAX_EXECUTORS 32 /* the memory store tracks this many per tool */

/* One of `names` (NULL-terminated) as its index into `values`. */
static int get_choice(const rd_yctx *c, const rd_ynode *map, const char *path, const char *key,
                      const char *const *names, const int *values, int *out)
{
    const rd_ynode *v = rd_ymap_get(map, key);
    if (!v)
        return RD_OK;
    char p[RD_YPATH_MAX];
    const char *text;
    int rc = rd_yscalar_str(c, v, rd_ypath(p, path, key), RD_ID_MAX, &text);
    if (rc != RD_OK)
        return rc;
    for (size_t i = 0; names[i]; i++) {
        if (strcmp(text, names[i]) == 0) {
            *out = values[i];
            return RD_OK;
        }
    }
    return rd_yerr(c, v->line, p, "unknown value \"%s\" (%s | %s)", text, names[0], names[1]);
}

static const char *const QUORUM_KEYS[] = {"min_executors", "window_ms", NULL};

static int parse_quorum(const rd_yctx *c, const rd_ynode *breaker, const char *path,
                        rd_breaker_policy *b)
{
    const rd_ynode *map = rd_ymap_get(breaker, "quorum");
    if (!map)
        return RD_OK;
    char p[RD_YPATH_MAX];
    rd_ypath(p, path, "quorum");
    int rc = rd_yexpect(c, map, p, RD_YMAP);
    if (rc == RD_OK)
        rc = rd_ymap_check(c, map, p, QUORUM_KEYS);
    if (rc == RD_OK)
        rc = rd_yget_u32(c, map, p, "min_executors", 1, QUORUM_MAX_EXECUTORS,
                     &b->quorum_min_executors);
    if (rc == RD_OK)
        rc = rd_yget_int(c, map, p, "window_ms", 1000, DAY_MS, &b->quorum_window_ms);
    return rc;
}

int rd_config_parse_breaker_fleet(const rd_yctx *c, const rd_ynode *map, const char *path,
                                  rd_breaker_policy *b)
{
    static const char *const modes[] = {"consecutive", "failure_rate", NULL};
    static const int mode_values[] = {RD_BREAKER_MODE_CONSECUTIVE,
                                      RD_BREAKER_MODE_FAILURE_RATE};
    int mode = (int)b->mode;
    int rc = get_choice(c, map, path, "mode", modes, mode_values, &mode);
    b->mode = (rd_breaker_mode)mode;
    if (rc == RD_OK)
        rc = rd_yget_u32(c, map, path, "failure_rate_threshold", 1, 100, &b->failure_rate_threshold);
    if (rc == RD_OK)
        rc = rd_yget_u32(c, map, path, "minimum_calls", 1, 1000000, &b->minimum_calls);
    if (rc == RD_OK)
        rc = rd_yget_int(c, map, path, "window_ms", 1000, DAY_MS, &b->window_ms);
    if (rc == RD_OK)
        rc = rd_yget_int(c, map, path, "slow_call_ms", 0, DAY_MS, &b->slow_call_ms);
    if (rc == RD_OK)
        rc = rd_yget_u32(c, map, path, "slow_call_rate_threshold", 1, 100,
                     &b->slow_call_rate_threshold);
    return rc == RD_OK ? parse_quorum(c, map, path, b) : rc;
}

static const char *const BUDGET_KEYS[] = {"enabled", "budget_percent", "min_retries_per_window",
                                          "window_ms", NULL};

static int parse_budget(const rd_yctx *c, const rd_ynode *map, const char *path,
                        rd_retry_budget_policy *b)
{
    int rc = rd_yexpect(c, map, path, RD_YMAP);
    if (rc == RD_OK)
        rc = rd_ymap_check(c, map, path, BUDGET_KEYS);
    if (rc == RD_OK)
        rc = rd_yget_bool(c, map, path, "enabled", &b->enabled);
    if (rc == RD_OK)
        rc = rd_yget_double(c, map, path, "budget_percent", 0.0, 1000.0, &b->budget_percent);
    if (rc == RD_OK)
        rc = rd_yget_u32(c, map, path, "min_retries_per_window", 0, 1000000,
                     &b->min_retries_per_window);
    if (rc == RD_OK)
        rc = rd_yget_int(c, map, path, "window_ms", 1000, DAY_MS, &b->window_ms);
    return rc;
}

static const char *const LATENCY_KEYS[] = {"enabled", "window_ms", "min_samples",
                                           "timeout_factor", "timeout_min_ms", NULL};

static int parse_latency(const rd_yctx *c, const rd_ynode *map, const char *path,
                         rd_latency_policy *l)
{
    int rc = rd_yexpect(c, map, path, RD_YMAP);
    if (rc == RD_OK)
        rc = rd_ymap_check(c, map, path, LATENCY_KEYS);
    if (rc == RD_OK)
        rc = rd_yget_bool(c, map, path, "enabled", &l->enabled);
    if (rc == RD_OK)
        rc = rd_yget_int(c, map, path, "window_ms", 1000, DAY_MS, &l->window_ms);
    if (rc == RD_OK)
        rc = rd_yget_u32(c, map, path, "min_samples", 1, 1000000, &l->min_samples);
    if (rc == RD_OK)
        rc = rd_yget_double(c, map, path, "timeout_factor", 0.0, 100.0, &l->timeout_factor);
    if (rc == RD_OK)
        rc = rd_yget_int(c, map, path, "timeout_min_ms", 1, DAY_MS, &l->timeout_min_ms);
    return rc;
}

int rd_config_parse_tool_fleet(const rd_yctx *c, const rd_ynode *map, const char *path,
                               rd_tool_config *t)
{
    static const char *const rankings[] = {"live", "manifest", NULL};
    static const int ranking_values[] = {RD_RANKING_LIVE, RD_RANKING_MANIFEST};
    char p[RD_YPATH_MAX];
    int rc = RD_OK;
    const rd_ynode *budget = rd_ymap_get(map, "retry_budget");
    if (budget)
        rc = parse_budget(c, budget, rd_ypath(p, path, "retry_budget"), &t->retry_budget);
    int ranking = (int)t->alternatives_ranking;
    if (rc == RD_OK)
        rc = get_choice(c, map, path, "alternatives_ranking", rankings, ranking_values,
                        &ranking);
    t->alternatives_ranking = (rd_alternatives_ranking)ranking;
    static const char *const modes[] = {"enforce", "shadow", NULL};
    static const int mode_values[] = {RD_MODE_ENFORCE, RD_MODE_SHADOW};
    int mode = (int)t->mode;
    if (rc == RD_OK)
        rc = get_choice(c, map, path, "mode", modes, mode_values, &mode);
    t->mode = (rd_decision_mode)mode;
    const rd_ynode *latency = rd_ymap_get(map, "latency");
    if (rc == RD_OK && latency)
        rc = parse_latency(c, latency, rd_ypath(p, path, "latency"), &t->latency);
    return rc;
}

static const char *const LEARNING_KEYS[] = {"enabled", "min_samples", "max_signatures",
                                            "ttl_ms", NULL};

int rd_config_parse_learning(const rd_yctx *c, const rd_ynode *map, rd_learning_policy *l)
{
    const char *path = "learning";
    int64_t max_signatures = (int64_t)l->max_signatures;
    int rc = rd_yexpect(c, map, path, RD_YMAP);
    if (rc == RD_OK)
        rc = rd_ymap_check(c, map, path, LEARNING_KEYS);
    if (rc == RD_OK)
        rc = rd_yget_bool(c, map, path, "enabled", &l->enabled);
    if (rc == RD_OK)
        rc = rd_yget_u32(c, map, path, "min_samples", 1, 1000000, &l->min_samples);
    if (rc == RD_OK)
        rc = rd_yget_int(c, map, path, "max_signatures", 1, 10000000, &max_signatures);
    l->max_signatures = (size_t)max_signatures;
    if (rc == RD_OK)
        rc = rd_yget_int(c, map, path, "ttl_ms", 1000, 30 * DAY_MS, &l->ttl_ms);
    return rc;
}
