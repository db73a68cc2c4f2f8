/* Prometheus metrics of recoveryd, served on their own port.
 *
 * Recording functions are cheap and thread-safe (atomics; a mutex only when
 * a tool is seen for the first time). Per-tool series are capped at
 * max_tools; further tools are counted under tool="_other" so a flood of
 * tool ids cannot blow up the label cardinality.
 *
 * Ownership: rd_metrics_new returns an object the caller frees with
 * rd_metrics_free (NULL is fine). The HTTP endpoint borrows the metrics and
 * the breaker lister, and must be stopped before either is freed. */
#ifndef RD_OPS_METRICS_H
#define RD_OPS_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/decide.h"

typedef struct rd_metrics rd_metrics;

rd_metrics *rd_metrics_new(size_t max_tools);
void rd_metrics_free(rd_metrics *m);

/* One finished RPC: method index into the method table (or -1 for unknown
 * methods), its kind as the grpc_type label ("unary", "server_stream",
 * "bidi_stream"; a static string), its gRPC status code and latency. */
void rd_metrics_rpc(rd_metrics *m, int method, const char *method_name, const char *grpc_type,
                    int grpc_status, int64_t latency_us);
/* The version shown by recoveryd_build_info (copied). */
void rd_metrics_set_build_info(rd_metrics *m, const char *version);
/* A Decide result: decisions by action, errors by retryability, retries,
 * breaker opens (CircuitOpened events), timeouts (ToolTimeout events). */
void rd_metrics_decision(rd_metrics *m, const char *tool_id, const rd_decision *d);
/* A RecordOutcome: successes after a retry count as retry successes;
 * failures as errors; CircuitOpened/Closed transitions from its result. */
void rd_metrics_outcome(rd_metrics *m, const char *tool_id, const rd_outcome_input *in,
                        const rd_classification *c_or_null, bool opened);
void rd_metrics_store_error(rd_metrics *m);
void rd_metrics_set_degraded(rd_metrics *m, bool degraded);
/* notAfter (Unix seconds) of the server's TLS certificate; 0 = no TLS. */
void rd_metrics_set_tls_not_after(rd_metrics *m, int64_t not_after);

/* Counters of the shared (Redis) store, as it reports them; rendered only
 * once set, so a memory-store deployment shows none. */
typedef struct rd_shared_store_counts {
    uint64_t cache_answers;      /* admission checks answered from the local cache */
    uint64_t cache_reads;        /* reads of a named tool answered from it */
    uint64_t outcomes_batched;   /* outcomes counted for a batch */
    uint64_t outcomes_dropped;   /* of those, lost because Redis failed the batch */
    bool auth_refused;           /* the last connection attempt was refused by AUTH */
} rd_shared_store_counts;
void rd_metrics_set_shared_store(rd_metrics *m, const rd_shared_store_counts *c);
void rd_metrics_config_reload(rd_metrics *m, bool ok);
/* Decision spans (ops/otlp.h), added to the counts; the first call makes
 * the series appear. */
void rd_metrics_spans(rd_metrics *m, uint64_t exported, uint64_t dropped_queue,
                      uint64_t dropped_export);

/* At scrape time the endpoint asks for current breaker states. */
typedef int (*rd_breaker_lister)(void *ctx, int64_t now_ms, rd_store_visit visit, void *visit_ctx);

/* The Prometheus text exposition (format 0.0.4) into a malloc'd string the
 * caller frees; NULL when out of memory. */
char *rd_metrics_render(rd_metrics *m, rd_breaker_lister lister, void *lister_ctx, int64_t now_ms);

typedef struct rd_metrics_http rd_metrics_http;

/* What one client may hold of the endpoint (metrics.* in the config). */
typedef struct rd_metrics_http_limits {
    unsigned max_connections;
    unsigned max_connections_per_ip;
    unsigned threads;                /* serving threads, each with its own poll loop */
    int64_t connection_timeout_ms;   /* idle time before a connection is closed */
    const char *token;               /* bearer token required on /metrics; NULL = none
                                        (copied; /healthz never needs one) */
    /* /readyz: whether the API is SERVING (gRPC health), for probes that
     * cannot speak TLS to the gRPC port; NULL = /readyz answers 404. */
    bool (*serving)(void *ctx);
    void *serving_ctx;
} rd_metrics_http_limits;

/* Serves GET /metrics (and /healthz) on listen ("host:port"); limits NULL
 * = the defaults of the configuration. */
rd_metrics_http *rd_metrics_http_start(rd_metrics *m, const char *listen, rd_breaker_lister lister,
                                       void *lister_ctx, const rd_metrics_http_limits *limits,
                                       rd_status *st);
int rd_metrics_http_port(const rd_metrics_http *h);
void rd_metrics_http_stop(rd_metrics_http *h);

#endif
