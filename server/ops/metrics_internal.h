/* What the recording (metrics.c) and the text exposition
 * (metrics_render.c) of the metrics share: the series and the struct. */
#ifndef RD_OPS_METRICS_INTERNAL_H
#define RD_OPS_METRICS_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ops/metrics.h"

/* ---- series ---- */

enum {
    TC_ERRORS_TRANSIENT,
    TC_ERRORS_PERMANENT,
    TC_ERRORS_UNKNOWN,      /* no retryability known (should not happen) */
    TC_RETRIES,
    TC_RETRY_SUCCESSES,
    TC_BREAKER_OPENS,
    TC_TIMEOUTS,
    TC_SHADOW_REFUSALS,     /* shadow mode answered permissively where enforce refused */
    TC_COUNT
};

typedef struct tool_series {
    char *tool_id;                       /* owned */
    atomic_uint_fast64_t c[TC_COUNT];
} tool_series;

/* Latency buckets in microseconds, exported in seconds: 100 us .. 10 s. */
static const int64_t BUCKET_US[] = {
    100, 250, 500, 1000, 2500, 5000, 10000, 25000, 50000,
    100000, 250000, 500000, 1000000, 2500000, 5000000, 10000000,
};
#define N_BUCKETS (sizeof BUCKET_US / sizeof BUCKET_US[0])

#define GRPC_CODES 17            /* OK .. UNAUTHENTICATED */
#define METHOD_SLOTS 64          /* method indexes tracked by name */

typedef struct method_series {
    _Atomic(char *) name;                /* owned; published once */
    _Atomic(const char *) type;          /* grpc_type label: a static string */
    atomic_uint_fast64_t by_code[GRPC_CODES + 1]; /* last: out-of-range codes */
    atomic_uint_fast64_t buckets[N_BUCKETS + 1];  /* last: above the largest bound */
    atomic_uint_fast64_t sum_us;
} method_series;

#define N_ACTIONS (RD_ACTION_VERIFY + 1)

struct rd_metrics {
    size_t max_tools;
    size_t n_slots;                      /* power of two, >= 2 * max_tools */
    _Atomic(tool_series *) *slots;
    tool_series **ordered;               /* insertion order, for stable output */
    atomic_size_t n_tools;
    atomic_bool full;
    tool_series other;                   /* "_other": tools beyond the cap */
    atomic_bool other_used;
    pthread_mutex_t insert_lock;

    atomic_uint_fast64_t decisions[N_ACTIONS];
    /* Failures that would have been retried but whose effect may have
     * happened (domain/effects.h), by the answer given instead. */
    atomic_uint_fast64_t refused_verify, refused_escalate;
    method_series methods[METHOD_SLOTS];
    method_series unknown_method;        /* method -1 or out of range */

    atomic_uint_fast64_t store_errors;
    atomic_bool degraded;
    atomic_int_fast64_t tls_not_after;
    atomic_bool shared_store;            /* the counters below were set */
    atomic_uint_fast64_t shared_cache_answers, shared_cache_reads, shared_batched, shared_dropped;
    atomic_bool shared_auth_refused;
    atomic_uint_fast64_t reloads_ok;
    atomic_uint_fast64_t reloads_failed;
    char version[64];                    /* recoveryd_build_info; "" = unset */
    atomic_bool spans_on;                /* an OTLP exporter runs: its counters are shown */
    atomic_uint_fast64_t spans_exported, spans_dropped_queue, spans_dropped_export;
};

static inline void count(atomic_uint_fast64_t *c, uint64_t n)
{
    atomic_fetch_add_explicit(c, n, memory_order_relaxed);
}

static inline uint64_t read_count(atomic_uint_fast64_t *c)
{
    return atomic_load_explicit(c, memory_order_relaxed);
}

#endif
