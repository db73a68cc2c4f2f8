/* What the exporter's files share (ops internal; the API is otlp.h): one
 * queued span, its JSON encoding (otlp_json.c) and the HTTP request that
 * carries a batch (otlp_http.c). */
#ifndef RD_OPS_OTLP_INTERNAL_H
#define RD_OPS_OTLP_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "domain/tracectx.h"
#include "domain/types.h"
#include "ops/metrics_text.h"

#define OTLP_RULE_ID_MAX 128

/* One Decide as queued: plain bytes, copied whole. Ids are filled in by
 * the exporter thread (span_id always; trace_id when the call had none). */
typedef struct otlp_span {
    char trace_id[RD_TRACE_ID_HEX + 1];
    char parent_span_id[RD_SPAN_ID_HEX + 1]; /* "" = a root span */
    char span_id[RD_SPAN_ID_HEX + 1];
    char trace_state[RD_TRACESTATE_MAX + 1];
    char tool_id[RD_ID_MAX + 1];
    char turn_id[RD_ID_MAX + 1];
    char rule_id[OTLP_RULE_ID_MAX + 1];
    rd_action action, shadow_action;
    rd_category category;                    /* UNSPECIFIED: no classification */
    rd_breaker_status breaker;
    bool failure;                            /* with an error (scope "failure") */
    uint32_t attempt;
    int64_t start_unix_ns, end_unix_ns;
} otlp_span;

/* The ExportTraceServiceRequest of spans[0, n) as OTLP JSON into sb. */
void otlp_json_batch(strbuf *sb, const char *service_name, const otlp_span *spans, size_t n);

/* An endpoint "http://host:port/path" taken apart (the config checked it). */
typedef struct otlp_endpoint {
    char host[256];
    char port[8];
    char path[768];
} otlp_endpoint;

bool otlp_endpoint_parse(const char *url, otlp_endpoint *out);

/* POSTs body as application/json; true when the collector answered 2xx
 * within timeout_ms (connecting, sending and reading together). */
bool otlp_http_post(const otlp_endpoint *ep, const char *body, size_t len, int64_t timeout_ms);

#endif
