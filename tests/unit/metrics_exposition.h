/* Reading what the metrics render, shared by the tests of ops/metrics
 * (test_metrics_*.c): a sample's value by its series text, a parser that
 * fails the test unless the text is well-formed Prometheus format 0.0.4,
 * synthetic decisions and trace events to record, and a breaker lister
 * with a breaker in each state (and held by a force). Include after
 * cmocka.h. */
#ifndef RD_TEST_METRICS_EXPOSITION_H
#define RD_TEST_METRICS_EXPOSITION_H

#include <ctype.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "domain/breaker.h"
#include "ops/metrics.h"

#define NOW_MS 1700000000000LL

/* ---- reading the exposition ---- */

/* The value of the sample whose name-and-labels text is exactly `series`
 * (e.g. `recoveryd_tool_retries_total{tool="a"}`); NAN when absent. */
static inline double sample(const char *text, const char *series)
{
    size_t n = strlen(series);
    for (const char *line = text; line && *line;) {
        const char *eol = strchr(line, '\n');
        if (strncmp(line, series, n) == 0 && line[n] == ' ')
            return strtod(line + n + 1, NULL);
        line = eol ? eol + 1 : NULL;
    }
    return NAN;
}

static inline char *render(rd_metrics *m)
{
    char *text = rd_metrics_render(m, NULL, NULL, NOW_MS);
    assert_non_null(text);
    return text;
}

static inline void assert_sample(const char *text, const char *series, double expected)
{
    double v = sample(text, series);
    if (isnan(v) || v != expected)
        fail_msg("%s: expected %g, got %g in:\n%s", series, expected, v, text);
}

/* ---- a small parser for format 0.0.4 ---- */

typedef struct family {
    char name[128];
    char type[16];
    bool help, closed;
} family;

typedef struct parsed {
    family fams[64];
    size_t n_fams;
    family *current;
    size_t n_samples;
} parsed;

static inline family *family_get(parsed *p, const char *name, size_t len)
{
    for (size_t i = 0; i < p->n_fams; i++)
        if (strlen(p->fams[i].name) == len && strncmp(p->fams[i].name, name, len) == 0)
            return &p->fams[i];
    assert_true(p->n_fams < 64);
    family *f = &p->fams[p->n_fams++];
    snprintf(f->name, sizeof f->name, "%.*s", (int)len, name);
    return f;
}

static inline size_t metric_name_len(const char *s)
{
    size_t i = 0;
    if (!(isalpha((unsigned char)s[0]) || s[0] == '_' || s[0] == ':'))
        return 0;
    while (isalnum((unsigned char)s[i]) || s[i] == '_' || s[i] == ':')
        i++;
    return i;
}

/* {k="v",...}: returns the length consumed, 0 when malformed. */
static inline size_t labels_len(const char *s)
{
    size_t i = 1;
    if (s[i] == '}')
        return 2;
    for (;;) {
        size_t k = metric_name_len(s + i);
        if (!k || s[i + k] != '=' || s[i + k + 1] != '"')
            return 0;
        i += k + 2;
        while (s[i] != '"') {
            if (s[i] == '\0' || s[i] == '\n')
                return 0;
            if (s[i] == '\\') {
                if (s[i + 1] != '\\' && s[i + 1] != '"' && s[i + 1] != 'n')
                    return 0;
                i++;
            }
            i++;
        }
        i++;
        if (s[i] == '}')
            return i + 1;
        if (s[i] != ',')
            return 0;
        i++;
    }
}

static inline bool value_ok(const char *s)
{
    if (!strcmp(s, "+Inf") || !strcmp(s, "-Inf") || !strcmp(s, "NaN"))
        return true;
    char *end;
    strtod(s, &end);
    return end != s && *end == '\0';
}

/* The family a sample belongs to: a histogram's _bucket/_sum/_count go to
 * the histogram's name. */
static inline family *sample_family(parsed *p, const char *name, size_t len)
{
    static const char *const SUFFIX[] = {"_bucket", "_sum", "_count"};
    for (size_t i = 0; i < 3; i++) {
        size_t sl = strlen(SUFFIX[i]);
        if (len > sl && strncmp(name + len - sl, SUFFIX[i], sl) == 0) {
            family *f = family_get(p, name, len - sl);
            if (!strcmp(f->type, "histogram"))
                return f;
        }
    }
    return family_get(p, name, len);
}

static inline void parse_comment(parsed *p, const char *line)
{
    bool help = strncmp(line, "# HELP ", 7) == 0;
    bool type = strncmp(line, "# TYPE ", 7) == 0;
    if (!help && !type)
        return;
    size_t n = metric_name_len(line + 7);
    if (!n || line[7 + n] != ' ')
        fail_msg("malformed comment: %s", line);
    family *f = family_get(p, line + 7, n);
    if (f->closed)
        fail_msg("family %s is split: %s", f->name, line);
    if (p->current && p->current != f)
        p->current->closed = true;
    p->current = f;
    if (help)
        f->help = true;
    else
        snprintf(f->type, sizeof f->type, "%s", line + 8 + n);
}

static inline void parse_sample(parsed *p, const char *line)
{
    size_t n = metric_name_len(line);
    if (!n)
        fail_msg("sample without a metric name: %s", line);
    family *f = sample_family(p, line, n);
    if (!f->help || !f->type[0])
        fail_msg("sample before its HELP and TYPE: %s", line);
    if (f != p->current)
        fail_msg("sample outside its family block: %s", line);
    size_t i = n;
    if (line[i] == '{') {
        size_t l = labels_len(line + i);
        if (!l)
            fail_msg("malformed labels: %s", line);
        i += l;
    }
    if (line[i] != ' ' || !value_ok(line + i + 1))
        fail_msg("malformed value: %s", line);
    p->n_samples++;
}

/* Fails the test unless every line is a HELP/TYPE comment or a sample
 * `name{labels} value` of a family announced just before it. */
static inline size_t parse_exposition(const char *text)
{
    parsed *p = calloc(1, sizeof *p);
    assert_non_null(p);
    assert_true(text[0] && text[strlen(text) - 1] == '\n');
    char *copy = strdup(text);
    for (char *save, *line = strtok_r(copy, "\n", &save); line;
         line = strtok_r(NULL, "\n", &save)) {
        if (line[0] == '#')
            parse_comment(p, line);
        else
            parse_sample(p, line);
    }
    for (size_t i = 0; i < p->n_fams; i++) {
        const char *t = p->fams[i].type;
        if (!p->fams[i].help || (strcmp(t, "counter") && strcmp(t, "gauge") &&
                                 strcmp(t, "histogram")))
            fail_msg("family %s lacks HELP or a valid TYPE ('%s')", p->fams[i].name, t);
        if (!strcmp(t, "counter") && !strstr(p->fams[i].name, "_total"))
            fail_msg("counter %s does not end in _total", p->fams[i].name);
    }
    size_t samples = p->n_samples;
    free(copy);
    free(p);
    return samples;
}

/* ---- synthetic decisions and breakers ---- */

static inline rd_decision decision(rd_action action, rd_retryability r, rd_trace_event *events,
                                   size_t n_events)
{
    rd_decision d = {.action = action, .trace = events, .n_trace = n_events};
    if (r != RD_RETRYABILITY_UNSPECIFIED) {
        d.has_classification = true;
        d.classification.classification.retryability = r;
    }
    return d;
}

static inline rd_trace_event event(rd_event_type type, const char *tool_id)
{
    rd_trace_event ev = {.type = type};
    snprintf(ev.tool_id, sizeof ev.tool_id, "%s", tool_id);
    return ev;
}

static inline int fake_breakers(void *ctx, int64_t now_ms, rd_store_visit visit, void *visit_ctx)
{
    rd_breaker closed, open, half_open;
    rd_breaker_init(&closed, now_ms);
    rd_breaker_init(&open, now_ms);
    open.stored = RD_BREAKER_OPEN;
    open.opened_at_ms = now_ms - 1000;
    open.open_until_ms = now_ms + 1000;
    half_open = open;
    half_open.open_until_ms = now_ms - 1;
    rd_breaker held_open = closed, held_closed = open, hold_expired = closed;
    assert_int_equal(rd_breaker_force(&held_open, RD_FORCE_OPEN, now_ms, 0), RD_OK);
    assert_int_equal(rd_breaker_force(&held_closed, RD_FORCE_CLOSED, now_ms, 60000), RD_OK);
    assert_int_equal(rd_breaker_force(&hold_expired, RD_FORCE_OPEN, now_ms - 2000, 1000), RD_OK);
    visit(visit_ctx, "closed-tool", &closed);
    visit(visit_ctx, "open-tool", &open);
    visit(visit_ctx, "half-tool", &half_open);
    visit(visit_ctx, "held-open", &held_open);
    visit(visit_ctx, "held-closed", &held_closed);
    visit(visit_ctx, "hold-expired", &hold_expired);
    return 0;
}

#endif
