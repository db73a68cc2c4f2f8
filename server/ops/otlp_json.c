/* OTLP/JSON encoding of a batch of decision spans (see otlp_internal.h and
 * https://opentelemetry.io/docs/specs/otlp/#json-protobuf-encoding: ids
 * as hex, 64-bit integers as decimal strings, enums as numbers). */
#include "ops/otlp_internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "domain/breaker.h"
#include "domain/classify.h"
#include "domain/trace.h"

#define SPAN_KIND_SERVER 2

/* A JSON string: quote, backslash and control characters escaped. Every
 * text here is valid UTF-8 already (ids the transport checked, rule ids
 * from the configuration), so other bytes pass as they are. */
static void json_string(strbuf *sb, const char *s)
{
    sb_append(sb, "\"", 1);
    size_t run = 0;
    for (size_t i = 0;; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c && c >= 0x20 && c != '"' && c != '\\')
            continue;
        sb_append(sb, s + run, i - run);
        if (!c)
            break;
        if (c == '"' || c == '\\')
            sb_printf(sb, "\\%c", c);
        else
            sb_printf(sb, "\\u%04x", c);
        run = i + 1;
    }
    sb_append(sb, "\"", 1);
}

static void attr_string(strbuf *sb, bool *first, const char *key, const char *value)
{
    sb_printf(sb, "%s{\"key\":\"%s\",\"value\":{\"stringValue\":", *first ? "" : ",", key);
    json_string(sb, value);
    sb_puts(sb, "}}");
    *first = false;
}

static void attr_int(strbuf *sb, bool *first, const char *key, int64_t value)
{
    sb_printf(sb, "%s{\"key\":\"%s\",\"value\":{\"intValue\":\"%" PRId64 "\"}}",
              *first ? "" : ",", key, value);
    *first = false;
}

static void span_attributes(strbuf *sb, const otlp_span *s)
{
    bool first = true;
    sb_puts(sb, "\"attributes\":[");
    attr_string(sb, &first, "recovery.tool_id", s->tool_id);
    attr_string(sb, &first, "recovery.action", rd_action_name(s->action));
    if (s->shadow_action)
        attr_string(sb, &first, "recovery.shadow_action", rd_action_name(s->shadow_action));
    if (s->category)
        attr_string(sb, &first, "recovery.category", rd_category_name(s->category));
    if (s->rule_id[0])
        attr_string(sb, &first, "recovery.rule_id", s->rule_id);
    if (s->breaker)
        attr_string(sb, &first, "recovery.breaker_state", rd_breaker_status_name(s->breaker));
    attr_string(sb, &first, "recovery.scope", s->failure ? "failure" : "admission");
    if (s->turn_id[0])
        attr_string(sb, &first, "recovery.turn_id", s->turn_id);
    attr_int(sb, &first, "recovery.attempt", s->attempt);
    sb_puts(sb, "]");
}

static void span_json(strbuf *sb, const otlp_span *s)
{
    sb_printf(sb, "{\"traceId\":\"%s\",\"spanId\":\"%s\"", s->trace_id, s->span_id);
    if (s->parent_span_id[0])
        sb_printf(sb, ",\"parentSpanId\":\"%s\"", s->parent_span_id);
    if (s->trace_state[0]) {
        sb_puts(sb, ",\"traceState\":");
        json_string(sb, s->trace_state);
    }
    sb_printf(sb, ",\"name\":\"recoveryd.Decide\",\"kind\":%d,\"startTimeUnixNano\":\"%" PRId64
                  "\",\"endTimeUnixNano\":\"%" PRId64 "\",",
              SPAN_KIND_SERVER, s->start_unix_ns, s->end_unix_ns);
    span_attributes(sb, s);
    sb_puts(sb, ",\"status\":{}}");
}

void otlp_json_batch(strbuf *sb, const char *service_name, const otlp_span *spans, size_t n)
{
    sb_puts(sb, "{\"resourceSpans\":[{\"resource\":{\"attributes\":[{\"key\":\"service.name\","
                "\"value\":{\"stringValue\":");
    json_string(sb, service_name);
    sb_puts(sb, "}}]},\"scopeSpans\":[{\"scope\":{\"name\":\"recoveryd\"},\"spans\":[");
    for (size_t i = 0; i < n; i++) {
        if (i)
            sb_append(sb, ",", 1);
        span_json(sb, &spans[i]);
    }
    sb_puts(sb, "]}]}]}");
}
