/* Tables, key/value lines and JSON for recoveryctl. */
#include "output.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#define ROTATING 8

static char *rotating_buffer(void)
{
    static char bufs[ROTATING][64];
    static unsigned next;
    return bufs[next++ % ROTATING];
}

/* The part of an enum value name after the type prefix ("OPEN" in
 * "BREAKER_STATUS_OPEN"): the prefix is what all value names share. */
static size_t enum_prefix_len(const ProtobufCEnumDescriptor *d)
{
    const char *first = d->values[0].name;
    size_t len = strlen(first);
    for (unsigned i = 1; i < d->n_values; i++) {
        size_t j = 0;
        while (j < len && first[j] == d->values[i].name[j])
            j++;
        len = j;
    }
    while (len > 0 && first[len - 1] != '_')
        len--;
    return len;
}

const char *ctl_enum_name(const ProtobufCEnumDescriptor *d, int value)
{
    const ProtobufCEnumValue *v = protobuf_c_enum_descriptor_get_value(d, value);
    if (!v || value == 0)
        return "";
    char *out = rotating_buffer();
    const char *name = v->name + enum_prefix_len(d);
    size_t i = 0;
    for (; name[i] && i < 63; i++)
        out[i] = (char)tolower((unsigned char)name[i]);
    out[i] = '\0';
    return out;
}

bool ctl_enum_parse(const ProtobufCEnumDescriptor *d, const char *text, int *value)
{
    char *end;
    long n = strtol(text, &end, 10);
    if (*text && !*end) {
        *value = (int)n;
        return protobuf_c_enum_descriptor_get_value(d, (int)n) != NULL;
    }
    char want[64];
    size_t i = 0;
    for (; text[i] && i < sizeof want - 1; i++)
        want[i] = text[i] == '-' ? '_' : text[i];
    want[i] = '\0';
    size_t prefix = enum_prefix_len(d);
    for (unsigned k = 0; k < d->n_values; k++) {
        const char *name = d->values[k].name;
        if (!strcasecmp(want, name) || !strcasecmp(want, name + prefix)) {
            *value = d->values[k].value;
            return true;
        }
    }
    return false;
}

const char *ctl_time(int64_t unix_ms)
{
    if (unix_ms <= 0)
        return "-";
    char *out = rotating_buffer();
    time_t secs = (time_t)(unix_ms / 1000);
    struct tm tm;
    gmtime_r(&secs, &tm);
    size_t n = strftime(out, 64, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(out + n, 64 - n, ".%03dZ", (int)(unix_ms % 1000));
    return out;
}

/* ---- tables ---- */

struct ctl_table {
    size_t n_columns, n_rows, cap_rows;
    char **cells;                /* row-major, (n_rows + 1) * n_columns incl. headers */
};

static void table_push(ctl_table *t, const char *const *cells)
{
    if (t->n_rows + 1 >= t->cap_rows) {
        size_t cap = t->cap_rows ? t->cap_rows * 2 : 16;
        char **p = realloc(t->cells, cap * t->n_columns * sizeof *p);
        if (!p)
            return;
        t->cells = p;
        t->cap_rows = cap;
    }
    for (size_t c = 0; c < t->n_columns; c++)
        t->cells[t->n_rows * t->n_columns + c] = strdup(cells[c] ? cells[c] : "");
    t->n_rows++;
}

ctl_table *ctl_table_new(size_t n_columns, const char *const *headers)
{
    if (n_columns == 0 || n_columns > CTL_TABLE_MAX_COLUMNS)
        return NULL;
    ctl_table *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->n_columns = n_columns;
    table_push(t, headers);
    return t;
}

void ctl_table_add(ctl_table *t, const char *const *cells)
{
    if (t)
        table_push(t, cells);
}

void ctl_table_print(const ctl_table *t, FILE *out)
{
    if (!t)
        return;
    size_t width[CTL_TABLE_MAX_COLUMNS] = {0};
    for (size_t r = 0; r < t->n_rows; r++)
        for (size_t c = 0; c < t->n_columns; c++) {
            const char *cell = t->cells[r * t->n_columns + c];
            size_t len = cell ? strlen(cell) : 0;
            if (len > width[c])
                width[c] = len;
        }
    for (size_t r = 0; r < t->n_rows; r++) {
        for (size_t c = 0; c < t->n_columns; c++) {
            const char *cell = t->cells[r * t->n_columns + c];
            if (c + 1 == t->n_columns)
                fputs(cell ? cell : "", out); /* no trailing padding */
            else
                fprintf(out, "%-*s  ", (int)width[c], cell ? cell : "");
        }
        fputc('\n', out);
    }
}

void ctl_table_free(ctl_table *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->n_rows * t->n_columns; i++)
        free(t->cells[i]);
    free(t->cells);
    free(t);
}

/* ---- breakers ---- */

static const char *state_name(int s)
{
    return ctl_enum_name(&recovery__v1__breaker_status__descriptor, s);
}

static json_t *time_or_null(int64_t ms)
{
    return ms > 0 ? json_string(ctl_time(ms)) : json_null();
}

json_t *ctl_breaker_json(const Recovery__V1__BreakerState *b)
{
    if (!b)
        return json_null();
    json_t *forced = b->forced ? json_string(state_name(b->forced)) : json_null();
    return json_pack("{s:s, s:s, s:I, s:I, s:I, s:I, s:I, s:o, s:I, s:o, s:b, s:I, s:I,"
                     " s:o, s:I}",
                     "tool_id", b->tool_id, "state", state_name(b->state),
                     "consecutive_failures", (json_int_t)b->consecutive_failures,
                     "failure_threshold", (json_int_t)b->failure_threshold,
                     "consecutive_successes", (json_int_t)b->consecutive_successes,
                     "success_threshold", (json_int_t)b->success_threshold,
                     "opened_at_ms", (json_int_t)b->opened_at_ms,
                     "opened_at", time_or_null(b->opened_at_ms),
                     "open_until_ms", (json_int_t)b->open_until_ms,
                     "open_until", time_or_null(b->open_until_ms),
                     "probe_in_flight", (int)b->probe_in_flight,
                     "opens_total", (json_int_t)b->opens_total,
                     "generation", (json_int_t)b->generation,
                     "forced", forced,
                     "forced_until_ms", (json_int_t)b->forced_until_ms);
}

ctl_table *ctl_breaker_table(void)
{
    static const char *const HEADERS[] = {"TOOL", "STATE", "FAILURES", "OPENED AT",
                                          "OPEN UNTIL", "PROBE", "OPENS", "FORCED"};
    return ctl_table_new(8, HEADERS);
}

static void forced_text(const Recovery__V1__BreakerState *b, char *buf, size_t cap)
{
    if (!b->forced)
        snprintf(buf, cap, "-");
    else if (b->forced_until_ms > 0)
        snprintf(buf, cap, "%s until %s", state_name(b->forced), ctl_time(b->forced_until_ms));
    else
        snprintf(buf, cap, "%s", state_name(b->forced));
}

void ctl_breaker_row(ctl_table *t, const Recovery__V1__BreakerState *b)
{
    char failures[32], opens[32], forced[96];
    snprintf(failures, sizeof failures, "%u/%u", b->consecutive_failures, b->failure_threshold);
    snprintf(opens, sizeof opens, "%llu", (unsigned long long)b->opens_total);
    forced_text(b, forced, sizeof forced);
    const char *cells[] = {b->tool_id, state_name(b->state), failures,
                           ctl_time(b->opened_at_ms), ctl_time(b->open_until_ms),
                           b->probe_in_flight ? "yes" : "no", opens, forced};
    ctl_table_add(t, cells);
}

void ctl_breaker_change_line(const Recovery__V1__BreakerChange *c, FILE *out)
{
    const Recovery__V1__BreakerState *b = c->breaker;
    if (!b) {
        fprintf(out, "%s  (no breaker)  cause=%s\n", c->timestamp, c->cause);
        return;
    }
    char forced[96];
    forced_text(b, forced, sizeof forced);
    fprintf(out, "%s  %s  %s  cause=%s  failures=%u/%u  opens=%llu", c->timestamp, b->tool_id,
            state_name(b->state), c->cause, b->consecutive_failures, b->failure_threshold,
            (unsigned long long)b->opens_total);
    if (b->open_until_ms > 0)
        fprintf(out, "  open_until=%s", ctl_time(b->open_until_ms));
    if (b->forced)
        fprintf(out, "  forced=%s", forced);
    fputc('\n', out);
}

json_t *ctl_breaker_change_json(const Recovery__V1__BreakerChange *c)
{
    return json_pack("{s:s, s:s, s:o}", "timestamp", c->timestamp, "cause", c->cause,
                     "breaker", ctl_breaker_json(c->breaker));
}

/* ---- classification ---- */

json_t *ctl_classification_json(const Recovery__V1__Classification *c)
{
    if (!c)
        return json_null();
    return json_pack("{s:s, s:s, s:s, s:b, s:I, s:s, s:s, s:b, s:s}",
                     "retryability",
                     ctl_enum_name(&recovery__v1__retryability__descriptor, c->retryability),
                     "category", ctl_enum_name(&recovery__v1__category__descriptor, c->category),
                     "kind", ctl_enum_name(&recovery__v1__error_kind__descriptor, c->kind),
                     "executed", (int)c->executed, "retry_after_ms",
                     (json_int_t)c->retry_after_ms, "rule_id", c->rule_id, "suggestion",
                     c->suggestion, "overridden", (int)c->overridden, "llm_message",
                     c->llm_message);
}

static const char *or_dash(const char *s)
{
    return s && s[0] ? s : "-";
}

void ctl_classification_print(const Recovery__V1__Classification *c, FILE *out)
{
    if (!c) {
        fprintf(out, "(no classification)\n");
        return;
    }
    fprintf(out, "retryability:   %s\n",
            or_dash(ctl_enum_name(&recovery__v1__retryability__descriptor, c->retryability)));
    fprintf(out, "category:       %s\n",
            or_dash(ctl_enum_name(&recovery__v1__category__descriptor, c->category)));
    fprintf(out, "kind:           %s\n",
            or_dash(ctl_enum_name(&recovery__v1__error_kind__descriptor, c->kind)));
    fprintf(out, "executed:       %s\n", c->executed ? "yes" : "no");
    fprintf(out, "retry after:    %lld ms\n", (long long)c->retry_after_ms);
    fprintf(out, "rule:           %s%s\n", or_dash(c->rule_id),
            c->overridden ? " (overridden by the tool's manifest)" : "");
    fprintf(out, "suggestion:     %s\n", or_dash(c->suggestion));
    fprintf(out, "llm message:\n");
    const char *line = c->llm_message ? c->llm_message : "";
    while (*line) {
        const char *eol = strchr(line, '\n');
        int len = eol ? (int)(eol - line) : (int)strlen(line);
        fprintf(out, len ? "  %.*s\n" : "%.*s\n", len, line); /* no trailing blanks */
        line += len + (eol ? 1 : 0);
    }
}

/* ---- traces ---- */

static json_t *string_array(char **items, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(a, json_string(items[i]));
    return a;
}

static json_t *event_json(const Recovery__V1__TraceEvent *e)
{
    json_t *o = json_pack("{s:I, s:s, s:s, s:s, s:s, s:s, s:s, s:I, s:s, s:s, s:I, s:s}",
                          "sequence", (json_int_t)e->sequence, "timestamp", e->timestamp,
                          "event_type", e->event_type, "tool_id", e->tool_id, "turn_id",
                          e->turn_id, "decision", e->decision, "classification",
                          e->classification, "retry_count", (json_int_t)e->retry_count,
                          "circuit_breaker_state", e->circuit_breaker_state, "error", e->error,
                          "timeout_ms", (json_int_t)e->timeout_ms, "detail", e->detail);
    /* The W3C trace of the call that made the event, when it carried one. */
    if (o && e->trace_id && e->trace_id[0]) {
        json_object_set_new(o, "trace_id", json_string(e->trace_id));
        json_object_set_new(o, "span_id", json_string(e->span_id ? e->span_id : ""));
    }
    return o;
}

json_t *ctl_trace_json(const Recovery__V1__GetTurnTraceResponse *r)
{
    json_t *events = json_array();
    for (size_t i = 0; i < r->n_events; i++)
        json_array_append_new(events, event_json(r->events[i]));
    const Recovery__V1__TurnSummary *s = r->summary;
    json_t *summary = s ? json_pack("{s:o, s:o, s:o, s:o, s:s, s:b}",
                                    "completed", string_array(s->completed, s->n_completed),
                                    "failed", string_array(s->failed, s->n_failed),
                                    "timed_out", string_array(s->timed_out, s->n_timed_out),
                                    "skipped", string_array(s->skipped, s->n_skipped),
                                    "partial_result", s->partial_result,
                                    "turn_failed", (int)s->turn_failed)
                        : json_null();
    return json_pack("{s:s, s:o, s:o}", "turn_id", r->turn_id, "events", events, "summary",
                     summary);
}

static void list_line(FILE *out, const char *label, char **items, size_t n)
{
    fprintf(out, "%-16s", label);
    if (n == 0)
        fputs("-", out);
    for (size_t i = 0; i < n; i++)
        fprintf(out, "%s%s", i ? ", " : "", items[i]);
    fputc('\n', out);
}

void ctl_trace_print(const Recovery__V1__GetTurnTraceResponse *r, FILE *out)
{
    static const char *const HEADERS[] = {"SEQ", "TIME", "EVENT", "TOOL", "DECISION",
                                          "CLASS", "BREAKER", "RETRIES", "DETAIL"};
    fprintf(out, "turn %s: %zu event%s\n", r->turn_id, r->n_events, r->n_events == 1 ? "" : "s");
    ctl_table *t = ctl_table_new(9, HEADERS);
    for (size_t i = 0; i < r->n_events; i++) {
        const Recovery__V1__TraceEvent *e = r->events[i];
        char seq[24], retries[16];
        snprintf(seq, sizeof seq, "%llu", (unsigned long long)e->sequence);
        snprintf(retries, sizeof retries, "%u", e->retry_count);
        const char *cells[] = {seq, e->timestamp, e->event_type, e->tool_id,
                               or_dash(e->decision), or_dash(e->classification),
                               or_dash(e->circuit_breaker_state), retries,
                               e->detail[0] ? e->detail : or_dash(e->error)};
        ctl_table_add(t, cells);
    }
    ctl_table_print(t, out);
    ctl_table_free(t);
    const Recovery__V1__TurnSummary *s = r->summary;
    if (!s)
        return;
    fputc('\n', out);
    list_line(out, "completed:", s->completed, s->n_completed);
    list_line(out, "failed:", s->failed, s->n_failed);
    list_line(out, "timed out:", s->timed_out, s->n_timed_out);
    list_line(out, "skipped:", s->skipped, s->n_skipped);
    fprintf(out, "%-16s%s\n", "partial result:", or_dash(s->partial_result));
    fprintf(out, "%-16s%s\n", "turn failed:", s->turn_failed ? "yes" : "no");
}

void ctl_json_print(json_t *v, bool compact, FILE *out)
{
    size_t flags = compact ? JSON_COMPACT : JSON_INDENT(2);
    json_dumpf(v, out, flags | JSON_PRESERVE_ORDER | JSON_ENSURE_ASCII);
    fputc('\n', out);
}
