/* Every Decide exported as an OpenTelemetry span to a collector, over
 * OTLP/HTTP with a JSON body (POST <endpoint>, e.g.
 * http://127.0.0.1:4318/v1/traces).
 *
 * The request path only copies the decision into a bounded queue under a
 * mutex held for that copy (rd_otlp_decision); one exporter thread of its
 * own takes batches off the queue, encodes them and sends them. A full
 * queue drops the span; a collector that is away, slow past timeout_ms or
 * answering anything but 2xx drops the batch. Both are counted in the
 * metrics (recoveryd_otlp_spans_dropped_total), never retried, never
 * waited for.
 *
 * The span: name "recoveryd.Decide", kind SERVER, from the call's time to
 * the answer; a child of the caller's span when the call carried a W3C
 * traceparent (its tracestate kept), else the root of a new trace.
 * Attributes: recovery.tool_id, recovery.action (the answer),
 * recovery.shadow_action (shadow mode), recovery.category,
 * recovery.rule_id, recovery.breaker_state, recovery.scope ("admission":
 * no error; "failure": a failed attempt), recovery.turn_id,
 * recovery.attempt.
 *
 * Ownership: rd_otlp_start returns an exporter the caller stops with
 * rd_otlp_stop (NULL is fine for both rd_otlp_decision and rd_otlp_stop);
 * it borrows the metrics, which must outlive it. */
#ifndef RD_OPS_OTLP_H
#define RD_OPS_OTLP_H

#include "config/config.h"
#include "engine/decide.h"
#include "ops/metrics.h"

typedef struct rd_otlp rd_otlp;

/* NULL with st unset when cfg->endpoint is NULL (export off); NULL with st
 * set when the exporter cannot start. */
rd_otlp *rd_otlp_start(const rd_otlp_config *cfg, rd_metrics *metrics, rd_status *st);
/* Sends what is queued (within one timeout), then stops the thread. */
void rd_otlp_stop(rd_otlp *o);

/* Queues the span of one Decide; never blocks on the network. */
void rd_otlp_decision(rd_otlp *o, const rd_call_ctx *ctx, const rd_decide_input *in,
                      const rd_decision *d);

#endif
