/* The store: where breakers, seen outcome ids and turn traces live.
 *
 * One interface, several backends (memory today; Redis shares it later).
 * Every operation is atomic for its key: the breaker transition runs under
 * the store's own lock (memory) or as one server-side script (Redis), so
 * concurrent callers on many threads or replicas never interleave inside a
 * transition. The transition rules themselves live in domain/breaker.c; a
 * backend applies them, it does not re-decide them.
 *
 * Time: every operation takes now_ms from the caller. A backend with its own
 * clock (Redis TIME) may use that instead and reports the time it used.
 *
 * Errors: RD_OK or a negative rd_err (domain/err.h), message in *st.
 * Ownership: the store copies every string it keeps; out-structs are owned by
 * the caller. rd_store_destroy(NULL) is a no-op. */
#ifndef RD_DOMAIN_STORE_H
#define RD_DOMAIN_STORE_H

#include <string.h>

#include "domain/breaker.h"
#include "domain/budget.h"
#include "domain/err.h"
#include "domain/latency.h"
#include "domain/signature.h"
#include "domain/types.h"

typedef struct rd_store rd_store;

/* ---- the store's settings (store: in recovery.yaml) ---- */

typedef enum { RD_STORE_MEMORY = 1, RD_STORE_REDIS = 2 } rd_store_backend;

/* The shared store of issue 5 (used with backend: redis). */
typedef struct rd_redis_config {
    char *address;               /* "host:port" or "unix:/path" */
    char *password;              /* resolved secret; NULL = none; never logged */
    int db;                      /* 0..15 */
    char *key_prefix;
    int64_t command_timeout_ms;
    int64_t connect_timeout_ms;
    char **sentinels;            /* "host:port" each */
    size_t n_sentinels;
    char *master_name;           /* NULL unless sentinels are given */
    int64_t probe_interval_ms;
    int64_t closed_cache_ms;     /* 0 = every admission check asks Redis */
    int64_t outcome_batch_ms;    /* 0 = every success is recorded at once */
    int64_t read_cache_ms;       /* 0 = every read of a named tool asks Redis */
    char **cluster;              /* Redis Cluster seed nodes, "host:port" each */
    size_t n_cluster;
    int64_t cluster_refresh_ms;  /* the cluster's slot map is fetched this often */
} rd_redis_config;

typedef struct rd_store_config {
    rd_store_backend backend;
    size_t max_tools;
    int64_t tool_idle_ttl_ms;
    int64_t turn_ttl_ms;
    size_t max_turns;
    size_t max_events_per_turn;
    int64_t outcome_ttl_ms;
    size_t max_outcomes;
    int64_t evict_interval_ms;
    rd_redis_config redis;
} rd_store_config;


typedef struct rd_store_limits {
    size_t max_tools;            /* tracked breakers; 0 = unlimited */
    int64_t tool_idle_ttl_ms;    /* a breaker unseen this long is evicted (if CLOSED and clean) */
    int64_t turn_ttl_ms;         /* a turn untouched this long is evicted */
    size_t max_turns;            /* live turns; 0 = unlimited (oldest evicted first) */
    size_t max_events_per_turn;  /* further events are dropped and counted */
    int64_t outcome_ttl_ms;      /* how long an outcome_id is remembered */
    size_t max_outcomes;         /* remembered outcome ids; 0 = unlimited */
    /* Learning (docs/FLEET.md): error signatures kept at once (0 =
     * unlimited; the least recently used go first) and how long an unused
     * one is kept (<= 0: no expiry). Pending retry links live at most
     * turn_ttl_ms. */
    size_t max_signatures;
    int64_t signature_ttl_ms;
} rd_store_limits;

/* What an operation did to a breaker: the record after it and the
 * transition it caused. */
typedef struct rd_store_result {
    rd_breaker breaker;                 /* after the operation */
    rd_breaker_transition transition;
    rd_admission admission;             /* admit only */
    uint64_t permit_token;              /* admit: the probe token granted, else 0 */
    int64_t now_ms;                     /* the time the backend used */
    /* record_call: the window counts the outcome was judged by (zero from
     * the other operations). */
    rd_breaker_evidence evidence;
} rd_store_result;

/* One outcome as record_call takes it. */
typedef struct rd_call_report {
    rd_outcome outcome;
    uint64_t permit_token;       /* the probe the caller holds; 0 = none */
    const char *executor_id;     /* who saw it (quorum); "" or NULL = one anonymous executor */
    int64_t latency_ms;          /* < 0 = not measured (never slow) */
} rd_call_report;

/* Learning: what a pending retry link's outcome says about its signature. */
typedef enum {
    RD_LEARN_KEEP = 0,           /* nothing settled */
    RD_LEARN_SUCCEEDED = 1,      /* the retry after it succeeded: credit */
    RD_LEARN_FAILED = 2,         /* the retry after it failed again: debit */
} rd_learn_settle;

typedef struct rd_learn_stats {
    uint64_t successes;
    uint64_t failures;
} rd_learn_stats;

/* The store's health and counters, for the metrics and the log
 * (rd_store_ops.report). All zero for a store only this replica uses. */
typedef struct rd_store_report {
    bool shared;                 /* other replicas use it too (Redis) */
    bool degraded;               /* answering from local state: the shared store is unreachable */
    uint64_t errors;             /* operations the shared store failed */
    uint64_t cache_answers;      /* admission checks answered from a local cache */
    uint64_t cache_reads;        /* reads of a named tool answered from it */
    uint64_t outcomes_batched;   /* outcomes counted for a batch */
    uint64_t outcomes_dropped;   /* of those, lost because the shared store failed the batch */
    bool auth_refused;           /* the last connection attempt was refused by AUTH */
    char last_error[RD_STATUS_MSG_MAX]; /* why the last failed attempt failed ("" = none) */
} rd_store_report;

/* Called once per tracked tool by list(); return non-zero to stop. */
typedef int (*rd_store_visit)(void *ctx, const char *tool_id, const rd_breaker *b);

/* A breaker of tool_id changed in the shared store (see set_change_listener). */
typedef void (*rd_store_change_fn)(void *ctx, const char *tool_id);

typedef struct rd_store_ops {
    const char *name;
    /* Admission check: may a call go ahead now? Grants the half-open probe
     * (with a fresh token from the backend) when the breaker allows one. */
    int (*admit)(rd_store *s, const char *tool_id, const rd_breaker_policy *p,
                 int64_t now_ms, int64_t lease_ms, rd_store_result *out, rd_status *st);
    /* Applies one outcome (success / transient / permanent failure) with the
     * probe token the caller holds (0 = none). */
    int (*record)(rd_store *s, const char *tool_id, const rd_breaker_policy *p,
                  int64_t now_ms, rd_outcome outcome, uint64_t permit_token,
                  rd_store_result *out, rd_status *st);
    /* record with what the fleet features need: the outcome is counted in
     * the tool's call window (policy window_ms; only while CLOSED), a
     * transient failure notes its executor for the quorum, and the
     * transition is decided by rd_breaker_record_evidence in the same
     * atomic step. A window is emptied when the breaker opens or closes.
     * out->evidence reports the counts. */
    int (*record_call)(rd_store *s, const char *tool_id, const rd_breaker_policy *p,
                       int64_t now_ms, const rd_call_report *call, rd_store_result *out,
                       rd_status *st);
    /* Reads a breaker and its call-window counts (policy window_ms)
     * without changing either; *found as get(). */
    int (*stats)(rd_store *s, const char *tool_id, const rd_breaker_policy *p, int64_t now_ms,
                 rd_breaker *breaker, rd_breaker_evidence *evidence, bool *found,
                 rd_status *st);
    /* The tool's retry budget (domain/budget.h), one atomic step: count a
     * request, or check-and-count a retry, or only check. */
    int (*budget)(rd_store *s, const char *tool_id, const rd_retry_budget_policy *p,
                  int64_t now_ms, rd_budget_op op, rd_budget_result *out, rd_status *st);
    /* The tool's recent latency distribution (domain/latency.h), one
     * atomic step: adds sample_ms (< 0: none, only read) to the window of
     * window_ms holding now_ms, and returns the counts of that window and
     * the one before. A tool the store cannot track reads as empty. */
    int (*latency)(rd_store *s, const char *tool_id, int64_t window_ms, int64_t now_ms,
                   int64_t sample_ms, rd_latency_hist *out, rd_status *st);
    /* Learning (domain/signature.h). The pending signature of `link` (a
     * retry in flight: tool and turn or executor) is settled as `settle`
     * says (credited or debited to its record) and replaced by
     * `signature_id` ("" = none pending any more). */
    int (*learn_link)(rd_store *s, const char *tool_id, const char *link,
                      const char *signature_id, rd_learn_settle settle, int64_t now_ms,
                      rd_status *st);
    /* The record of one signature; zeros when unknown or expired. */
    int (*learn_stats)(rd_store *s, const char *tool_id, const char *signature_id,
                       int64_t now_ms, rd_learn_stats *out, rd_status *st);
    /* An operator's command on one breaker (rd_breaker_force), creating the
     * record for a tool never seen. RD_ERR_INVALID for a bad mode or ttl. */
    int (*force)(rd_store *s, const char *tool_id, rd_force_mode mode, int64_t now_ms,
                 int64_t ttl_ms, rd_store_result *out, rd_status *st);
    /* Reads one breaker; *found = false (and a fresh CLOSED record in *out)
     * for a tool never seen. Does not create it. */
    int (*get)(rd_store *s, const char *tool_id, int64_t now_ms, rd_breaker *out,
               bool *found, rd_status *st);
    int (*list)(rd_store *s, int64_t now_ms, rd_store_visit visit, void *ctx, rd_status *st);
    /* Remembers outcome_id; *duplicate = true when it was already known. */
    int (*claim_outcome)(rd_store *s, const char *outcome_id, int64_t now_ms,
                         bool *duplicate, rd_status *st);
    /* Appends events to a turn (creating it) and sets each event's sequence.
     * *started_at_ms receives when the turn was first seen. */
    int (*turn_append)(rd_store *s, const char *turn_id, rd_trace_event *events, size_t n,
                       int64_t now_ms, int64_t *started_at_ms, rd_status *st);
    /* When the turn was first seen; creates it (with no events) if new. */
    int (*turn_touch)(rd_store *s, const char *turn_id, int64_t now_ms,
                      int64_t *started_at_ms, rd_status *st);
    /* Copies a turn's events out, in order. *events is malloc'd (caller
     * frees; NULL when n is 0). RD_ERR_NOT_FOUND for an unknown turn. */
    int (*turn_read)(rd_store *s, const char *turn_id, int64_t now_ms,
                     rd_trace_event **events, size_t *n, int64_t *started_at_ms,
                     rd_status *st);
    /* Optional (NULL: nothing to check): before a call changes anything,
     * whether the tool and the turn it names ("" = none) fit this view of
     * the store's limits (engine/tenant.h), counting them when they do;
     * RD_ERR_EXHAUSTED naming the limit when they do not. */
    int (*precheck)(rd_store *s, const char *tool_id, const char *turn_id, int64_t now_ms,
                    rd_status *st);
    /* Optional (NULL: the backend belongs to one process, and the caller
     * counts its limits itself): one atomic step across every replica
     * sharing the store over the capped set `set` (a tenant's tools or
     * turns): a known `member` has its time refreshed; a new one joins when
     * fewer than `max` members were used within ttl_ms (0 = they never age
     * out), and RD_ERR_EXHAUSTED answers otherwise. */
    int (*quota)(rd_store *s, const char *set, const char *member, size_t max, int64_t now_ms,
                 int64_t ttl_ms, rd_status *st);
    /* Drops idle breakers, old turns and old outcome ids; returns how many
     * entries were dropped. */
    size_t (*evict)(rd_store *s, int64_t now_ms);
    /* Optional (NULL when the backend has no other writers): tells `fn`
     * about every breaker change made to the shared store by anyone, this
     * replica included, from the backend's own thread. fn = NULL stops it;
     * after that returns, fn is never called again. */
    void (*set_change_listener)(rd_store *s, rd_store_change_fn fn, void *ctx);
    void (*destroy)(rd_store *s);
    /* Optional (NULL: nothing to report): health and counters. */
    void (*report)(rd_store *s, rd_store_report *out);
} rd_store_ops;

struct rd_store {
    const rd_store_ops *ops;
    rd_store_limits limits;
};

/* The checks every backend applies to an id it is handed (tool, turn or
 * outcome id): not empty, at most RD_ID_MAX bytes. */
int rd_store_check_id(const char *field, const char *id, rd_status *st);

/* Breakers forgotten to make room for a new tool when the breaker table was
 * full (store.max_tools), over every store of the process. Only breakers
 * that hold nothing worth keeping go: CLOSED ones, least recently used
 * first; never OPEN, HALF_OPEN, probing or operator-held ones. */
void rd_store_count_displaced(uint64_t n);
uint64_t rd_store_displaced_total(void);

/* A backend that answers a call from something of its own in front of a
 * remote server (a cache, a batch still to be sent) marks that answer in
 * the operation's status. Such an answer says nothing about the server's
 * health, so the resilient wrapper neither takes it as a success nor as a
 * failure. */
static inline void rd_store_mark_local_answer(rd_status *st)
{
    if (st)
        st->store_local = true;
}
/* Clears the mark before an operation (a caller's status may hold
 * anything). */
static inline void rd_store_clear_local_answer(rd_status *st)
{
    if (st)
        st->store_local = false;
}
/* Whether the operation was answered so (after rd_store_clear_local_answer);
 * clears the mark. */
static inline bool rd_store_take_local_answer(rd_status *st)
{
    bool was = st && st->store_local;
    if (st)
        st->store_local = false;
    return was;
}


/* Fills *out (zeros when the store has nothing to report). */
static inline void rd_store_report_of(rd_store *s, rd_store_report *out)
{
    memset(out, 0, sizeof *out);
    if (s && s->ops->report)
        s->ops->report(s, out);
}

/* The embedded default. Returns NULL when out of memory. */
rd_store *rd_store_memory_new(const rd_store_limits *limits);

static inline void rd_store_destroy(rd_store *s)
{
    if (s)
        s->ops->destroy(s);
}

#endif
