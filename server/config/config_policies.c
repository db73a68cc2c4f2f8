/* What a tool is decided by: its timeout, retry policy, circuit breaker,
 * retry budget and how its alternatives are ranked (docs/FLEET.md). The
 * same keys make the main file's `defaults` section and every manifest; a
 * manifest starts from the defaults' values and changes what it names.
 * Also the turn budget and learning, the other decision policies. */
#include "config/config.h"
#include "config/config_tables.h"
#include "domain/err.h"

#define QUORUM_MAX_EXECUTORS 32 /* the memory store tracks this many per tool */

/* ---- retry_policy ---- */

static const char *const STRATEGIES[] = {"exponential_backoff", NULL};

/* Blames the key this file wrote; the other value may be inherited. */
static int check_delay_order(const rd_yctx *c, const rd_ynode *map, const char *path,
                             void *base)
{
    const rd_retry_policy *r = base;
    if (r->max_delay_ms >= r->initial_delay_ms)
        return RD_OK;
    const char *key = rd_ymap_get(map, "max_delay_ms") ? "max_delay_ms" : "initial_delay_ms";
    char p[RD_YPATH_MAX];
    return rd_yerr(c, rd_ymap_key_line(map, key), rd_ypath(p, path, key),
                   "max_delay_ms (%lld) must be >= initial_delay_ms (%lld)",
                   (long long)r->max_delay_ms, (long long)r->initial_delay_ms);
}

static const rd_key RETRY_KEYS[] = {
    {.name = "strategy", .type = RD_KEY_ENUM, .offset = RD_KEY_NO_FIELD, .names = STRATEGIES,
     .doc = "how delays grow"},
    RD_K_INT(rd_retry_policy, "initial_delay_ms", initial_delay_ms, 0, 3600000, 100,
             "delay before the 2nd attempt"),
    RD_K_INT(rd_retry_policy, "max_delay_ms", max_delay_ms, 0, 3600000, 800,
             "cap on any single delay; at least initial_delay_ms"),
    RD_K_DOUBLE(rd_retry_policy, "multiplier", multiplier, 1.0, 10.0, 2.0,
                "each delay is the previous one times this"),
    RD_K_DOUBLE(rd_retry_policy, "jitter_percent", jitter_percent, 0.0, 100.0, 10.0,
                "each delay varies by up to this many percent either way"),
    RD_K_INT(rd_retry_policy, "max_attempts", max_attempts, 1, 100, 5,
             "attempts in total, the first one included"),
    RD_K_INT(rd_retry_policy, "max_total_time_ms", max_total_time_ms, 1, RD_DAY_MS, 2000,
             "no retry once the time since the first failure plus the delay reaches this"),
};
static const rd_key_table RETRY =
    RD_KEY_TABLE("defaults.retry_policy, tool.retry_policy", NULL, RETRY_KEYS, check_delay_order);

/* ---- circuit_breaker ---- */

static const char *const MODES[] = {"consecutive", "failure_rate", NULL};
static const int MODE_VALUES[] = {RD_BREAKER_MODE_CONSECUTIVE, RD_BREAKER_MODE_FAILURE_RATE};

static const rd_key QUORUM_KEYS[] = {
    RD_K_INT(rd_breaker_policy, "min_executors", quorum_min_executors, 1, QUORUM_MAX_EXECUTORS,
             1, "open only when this many distinct executors failed within window_ms; 1 = off"),
    RD_K_INT(rd_breaker_policy, "window_ms", quorum_window_ms, 1000, RD_DAY_MS, 60000,
             "the quorum's window"),
};
static const rd_key_table QUORUM = RD_KEY_TABLE(
    "defaults.circuit_breaker.quorum, tool.circuit_breaker.quorum", NULL, QUORUM_KEYS, NULL);

static const rd_key BREAKER_KEYS[] = {
    RD_K_INT(rd_breaker_policy, "failure_threshold", failure_threshold, 1, 10000, 5,
             "consecutive transient failures that open it"),
    RD_K_INT(rd_breaker_policy, "success_threshold", success_threshold, 1, 10000, 1,
             "successful half-open probes that close it"),
    RD_K_INT(rd_breaker_policy, "timeout_ms", open_timeout_ms, 1, RD_DAY_MS, 30000,
             "how long it stays OPEN before a probe is allowed"),
    RD_K_ENUM(rd_breaker_policy, "mode", mode, MODES, MODE_VALUES, 0,
              "what opens it: failures in a row, or a failure rate over a window"),
    RD_K_INT(rd_breaker_policy, "failure_rate_threshold", failure_rate_threshold, 1, 100, 50,
             "failure_rate: percent of calls in the window that opens it"),
    RD_K_INT(rd_breaker_policy, "minimum_calls", minimum_calls, 1, 1000000, 10,
             "failure_rate: calls in the window before a rate counts"),
    RD_K_INT(rd_breaker_policy, "window_ms", window_ms, 1000, RD_DAY_MS, 60000,
             "the call window (failure rate, live ranking of alternatives)"),
    RD_K_INT(rd_breaker_policy, "slow_call_ms", slow_call_ms, 0, RD_DAY_MS, 0,
             "a call this slow or slower is slow; 0 = off"),
    RD_K_INT(rd_breaker_policy, "slow_call_rate_threshold", slow_call_rate_threshold, 1, 100, 100,
             "failure_rate: percent of slow calls that opens it"),
    RD_K_SECTION_HERE("quorum", &QUORUM, "quorum tripping"),
};
static const rd_key_table BREAKER = RD_KEY_TABLE(
    "defaults.circuit_breaker, tool.circuit_breaker", NULL, BREAKER_KEYS, NULL);

/* ---- retry_budget ---- */

static const rd_key BUDGET_KEYS[] = {
    RD_K_BOOL(rd_retry_budget_policy, "enabled", enabled, false,
              "retries shared by every replica and executor are capped"),
    RD_K_DOUBLE(rd_retry_budget_policy, "budget_percent", budget_percent, 0.0, 1000.0, 20.0,
                "retries allowed as a percentage of the requests in the window"),
    RD_K_INT(rd_retry_budget_policy, "min_retries_per_window", min_retries_per_window, 0, 1000000,
             10, "retries always allowed, whatever the traffic"),
    RD_K_INT(rd_retry_budget_policy, "window_ms", window_ms, 1000, RD_DAY_MS, 10000,
             "the budget's window"),
};
static const rd_key_table BUDGET =
    RD_KEY_TABLE("defaults.retry_budget, tool.retry_budget", NULL, BUDGET_KEYS, NULL);

/* ---- latency ---- */

static const rd_key LATENCY_KEYS[] = {
    RD_K_BOOL(rd_latency_policy, "enabled", enabled, false,
              "record the tool's latencies (RecordOutcome latency_ms) and let Decide use them"),
    RD_K_INT(rd_latency_policy, "window_ms", window_ms, 1000, RD_DAY_MS, 300000,
             "a window of the distribution; it spans one to two of them"),
    RD_K_INT(rd_latency_policy, "min_samples", min_samples, 1, 1000000, 20,
             "calls in the distribution before it is used"),
    RD_K_DOUBLE(rd_latency_policy, "timeout_factor", timeout_factor, 0.0, 100.0, 0.0,
                "timeout_ms follows the measured p99 times this; 0 = keep timeout_ms"),
    RD_K_INT(rd_latency_policy, "timeout_min_ms", timeout_min_ms, 1, RD_DAY_MS, 100,
             "the timeout that follows p99 never goes below this"),
};
static const rd_key_table LATENCY =
    RD_KEY_TABLE("defaults.latency, tool.latency", "docs/OPERATIONS.md, \"Latency-aware "
                 "retries\".", LATENCY_KEYS, NULL);

/* ---- a tool's policies ---- */

static const char *const DECISION_MODES[] = {"enforce", "shadow", NULL};
static const int DECISION_MODE_VALUES[] = {RD_MODE_ENFORCE, RD_MODE_SHADOW};

static const char *const RANKINGS[] = {"live", "manifest", NULL};
static const int RANKING_VALUES[] = {RD_RANKING_LIVE, RD_RANKING_MANIFEST};

static const rd_key POLICY_KEYS[] = {
    RD_K_INT(rd_tool_config, "timeout_ms", timeout_ms, 1, RD_DAY_MS, 30000,
             "per-call hard timeout the executor enforces"),
    RD_K_SECTION(rd_tool_config, "retry_policy", retry, &RETRY, "when and how often to retry"),
    RD_K_SECTION(rd_tool_config, "circuit_breaker", breaker, &BREAKER,
                 "when calls to the tool stop for a while"),
    RD_K_SECTION(rd_tool_config, "retry_budget", retry_budget, &BUDGET,
                 "retries capped across the fleet"),
    RD_K_ENUM(rd_tool_config, "alternatives_ranking", alternatives_ranking, RANKINGS,
              RANKING_VALUES, 0,
              "live: by breaker state, recent success rate, then order; manifest: the first "
              "admitted in order"),
    RD_K_ENUM(rd_tool_config, "mode", mode, DECISION_MODES, DECISION_MODE_VALUES, 0,
              "shadow: every decision made and recorded, the permissive one answered with "
              "what enforce would do (docs/OPERATIONS.md, \"Shadow mode\")"),
    RD_K_SECTION(rd_tool_config, "latency", latency, &LATENCY,
                 "latency-aware retries and timeouts"),
};
const rd_key_table rd_keys_policies =
    RD_KEY_TABLE("defaults", "What a tool without a manifest gets, and what a manifest starts "
                             "from (reloadable).", POLICY_KEYS, NULL);

/* ---- turn ---- */

static const rd_key TURN_KEYS[] = {
    RD_K_INT(rd_config, "timeout_ms", turn_timeout_ms, 1, RD_DAY_MS, 300000,
             "per-turn budget when the caller sends none"),
};
const rd_key_table rd_keys_turn = RD_KEY_TABLE("turn", "Reloadable.", TURN_KEYS, NULL);

/* ---- learning ---- */

static const rd_key LEARNING_KEYS[] = {
    RD_K_BOOL(rd_learning_policy, "enabled", enabled, false,
              "classify unknown errors from how their past retries went (reloadable)"),
    RD_K_INT(rd_learning_policy, "min_samples", min_samples, 1, 1000000, 20,
             "settled retries of a signature before it decides (reloadable)"),
    RD_K_INT(rd_learning_policy, "max_signatures", max_signatures, 1, 10000000, 10000,
             "kept at once, least recently settled dropped first (a store limit)", RD_RESTART),
    RD_K_INT(rd_learning_policy, "ttl_ms", ttl_ms, 1000, 30 * RD_DAY_MS, RD_DAY_MS,
             "a signature not settled this long is forgotten (a store limit)", RD_RESTART),
};
const rd_key_table rd_keys_learning = RD_KEY_TABLE("learning", "docs/FLEET.md.", LEARNING_KEYS, NULL);
