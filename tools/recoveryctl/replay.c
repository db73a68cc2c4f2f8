/* recoveryctl export / replay: a policy tried on recorded traffic before
 * it is loaded.
 *
 * `export TURN_ID...` writes the turns' trace events as JSON lines (one
 * event per line, the fields of `trace --json`). `replay --config FILE|DIR
 * EXPORT` reads such lines and runs the calls they record, in order and at
 * their recorded times, through the decision engine the server runs (the
 * same library, an in-memory store, the clock injected) under the
 * candidate configuration, and prints how many decisions change, for which
 * tools and how, and how often each breaker opened.
 *
 * A trace records what a call did, not the whole request, so a call is
 * rebuilt from its events: a Decide with a ToolError event is that failed
 * attempt (its error text, TIMEOUT kind when a ToolTimeout event goes with
 * it, attempt = retry_count + 1, elapsed time since the chain's first
 * failure); a Decide without one is an admission check; events without a
 * decision are a RecordOutcome (ToolSucceeded / RetrySucceeded: success,
 * ToolFailed: a failure). Admissions answered PROCEED leave no event and
 * are not replayed; the turn's time left is the configured turn budget. */
#define _GNU_SOURCE
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "config/config.h"
#include "ctl.h"
#include "domain/trace.h"
#include "engine/decide.h"
#include "output.h"

/* ---- export ---- */

int ctl_cmd_export(const ctl_opts *o)
{
    for (int i = 0; i < o->n_args; i++) {
        json_t *doc = ctl_fetch_trace_json(o, o->args[i]);
        if (!doc)
            return CTL_EXIT_FAIL;
        json_t *events = json_object_get(doc, "events"), *e;
        size_t k;
        json_array_foreach(events, k, e) {
            char *line = json_dumps(e, JSON_COMPACT);
            if (line)
                puts(line);
            free(line);
        }
        json_decref(doc);
    }
    return CTL_EXIT_OK;
}

/* ---- reading an export ---- */

typedef struct rec_event {
    char *turn_id, *tool_id, *event_type, *decision, *error;
    int64_t at_ms;
    uint64_t sequence;
    uint32_t retry_count;
} rec_event;

static char *str_field(json_t *e, const char *key)
{
    const char *s = json_string_value(json_object_get(e, key));
    return strdup(s ? s : "");
}

/* "2025-11-05T10:30:45.123Z" -> unix ms; -1 when malformed. */
static int64_t parse_time(const char *s)
{
    struct tm tm = {0};
    int ms = 0, n = 0;
    if (sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d.%3dZ%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
               &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &ms, &n) != 7 || s[n] != '\0')
        return -1;
    tm.tm_year -= 1900;
    tm.tm_mon -= 1;
    return (int64_t)timegm(&tm) * 1000 + ms;
}

static int compare_events(const void *a, const void *b)
{
    const rec_event *x = a, *y = b;
    if (x->at_ms != y->at_ms)
        return x->at_ms < y->at_ms ? -1 : 1;
    int t = strcmp(x->turn_id, y->turn_id);
    if (t)
        return t;
    return x->sequence < y->sequence ? -1 : x->sequence > y->sequence;
}

static int read_export(const char *path, rec_event **out, size_t *n_out)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "recoveryctl: %s: cannot open\n", path);
        return CTL_EXIT_FAIL;
    }
    rec_event *ev = NULL;
    size_t n = 0, cap = 0, line_no = 0;
    char *line = NULL;
    size_t line_cap = 0;
    int rc = CTL_EXIT_OK;
    while (rc == CTL_EXIT_OK && getline(&line, &line_cap, f) > 0) {
        line_no++;
        if (line[strspn(line, " \t\r\n")] == '\0')
            continue;
        json_error_t jerr;
        json_t *e = json_loads(line, 0, &jerr);
        int64_t at = e ? parse_time(json_string_value(json_object_get(e, "timestamp"))
                                        ? json_string_value(json_object_get(e, "timestamp"))
                                        : "")
                       : -1;
        if (!e || !json_is_object(e) || at < 0 ||
            !json_string_value(json_object_get(e, "event_type"))) {
            fprintf(stderr, "recoveryctl: %s:%zu: not a trace event (export lines are "
                            "written by 'recoveryctl export')\n", path, line_no);
            rc = CTL_EXIT_FAIL;
        } else {
            if (n == cap) {
                cap = cap ? cap * 2 : 256;
                rec_event *grown = realloc(ev, cap * sizeof *ev);
                if (!grown) {
                    json_decref(e);
                    rc = CTL_EXIT_FAIL;
                    break;
                }
                ev = grown;
            }
            ev[n++] = (rec_event){
                .turn_id = str_field(e, "turn_id"), .tool_id = str_field(e, "tool_id"),
                .event_type = str_field(e, "event_type"), .decision = str_field(e, "decision"),
                .error = str_field(e, "error"), .at_ms = at,
                .sequence = (uint64_t)json_integer_value(json_object_get(e, "sequence")),
                .retry_count = (uint32_t)json_integer_value(json_object_get(e, "retry_count"))};
        }
        json_decref(e);
    }
    free(line);
    fclose(f);
    if (n > 1)
        qsort(ev, n, sizeof *ev, compare_events);
    *out = ev;
    *n_out = n;
    return rc;
}

/* ---- the tally ---- */

#define TALLY_MAX 512

typedef struct tally {
    struct {
        char *tool, *from, *to;
        size_t count;
    } changes[TALLY_MAX];
    size_t n_changes;
    struct {
        char *tool;
        size_t recorded, replayed;
    } opens[TALLY_MAX];
    size_t n_opens;
    size_t calls, changed;
} tally;

static void count_change(tally *t, const char *tool, const char *from, const char *to)
{
    for (size_t i = 0; i < t->n_changes; i++)
        if (!strcmp(t->changes[i].tool, tool) && !strcmp(t->changes[i].from, from) &&
            !strcmp(t->changes[i].to, to)) {
            t->changes[i].count++;
            return;
        }
    if (t->n_changes < TALLY_MAX)
        t->changes[t->n_changes++] = (typeof(t->changes[0])){strdup(tool), strdup(from),
                                                             strdup(to), 1};
}

static void count_open(tally *t, const char *tool, size_t recorded, size_t replayed)
{
    if (!recorded && !replayed)
        return;
    for (size_t i = 0; i < t->n_opens; i++)
        if (!strcmp(t->opens[i].tool, tool)) {
            t->opens[i].recorded += recorded;
            t->opens[i].replayed += replayed;
            return;
        }
    if (t->n_opens < TALLY_MAX)
        t->opens[t->n_opens++] = (typeof(t->opens[0])){strdup(tool), recorded, replayed};
}

static size_t opens_in(const rd_trace_event *ev, size_t n, const char *tool)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        k += ev[i].type == RD_EV_CIRCUIT_OPENED && !strcmp(ev[i].tool_id, tool);
    return k;
}

/* ---- replaying one call ---- */

/* When each (turn, tool) chain of failures began, for elapsed_ms. */
#define CHAINS_MAX 4096
typedef struct chains {
    struct {
        char *turn, *tool;
        int64_t first_failure_ms;
    } c[CHAINS_MAX];
    size_t n;
} chains;

static int64_t elapsed_since_first(chains *ch, const rec_event *e, uint32_t attempt)
{
    for (size_t i = 0; i < ch->n; i++)
        if (!strcmp(ch->c[i].turn, e->turn_id) && !strcmp(ch->c[i].tool, e->tool_id)) {
            if (attempt <= 1)
                ch->c[i].first_failure_ms = e->at_ms;
            return e->at_ms - ch->c[i].first_failure_ms;
        }
    if (ch->n < CHAINS_MAX)
        ch->c[ch->n++] = (typeof(ch->c[0])){strdup(e->turn_id), strdup(e->tool_id), e->at_ms};
    return 0;
}

typedef struct replayer {
    rd_engine engine;
    rd_call_ctx ctx;
    rd_arena arena;
    rd_rng rng;
    chains chains;
    tally tally;
} replayer;

static const rec_event *find_type(const rec_event *g, size_t n, const char *type)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(g[i].event_type, type))
            return &g[i];
    return NULL;
}

static bool is_one_of(const char *type, const char *const *types)
{
    for (; *types; types++)
        if (!strcmp(type, *types))
            return true;
    return false;
}

/* Calls of one turn in the same millisecond with the same decision are
 * told apart by their events: a failed attempt starts with ToolTimeout or
 * ToolError, each Decide has one answer event, each RecordOutcome one
 * outcome event. Does e start a call after g[0, n)? */
static bool starts_call(const rec_event *g, size_t n, const rec_event *e)
{
    static const char *const ANSWERS[] = {"Retry", "FailFast", "GaveUp", "AlternativeUsed",
                                          "TurnTimeout", NULL};
    static const char *const OUTCOMES[] = {"ToolSucceeded", "RetrySucceeded", "ToolFailed",
                                           NULL};
    const char *const *own = g[0].decision[0] ? ANSWERS : OUTCOMES;
    if (!strcmp(e->event_type, "ToolTimeout") ||
        (!strcmp(e->event_type, "ToolError") && strcmp(g[n - 1].event_type, "ToolTimeout")))
        return true;
    if (!is_one_of(e->event_type, own))
        return false;
    for (size_t i = 0; i < n; i++)
        if (is_one_of(g[i].event_type, own))
            return true;
    return false;
}

/* One recorded call: the events g[0, n) share turn, instant and decision. */
static void replay_call(replayer *r, const rec_event *g, size_t n)
{
    rd_status st = {0};
    r->ctx.now_ms = g[0].at_ms;
    const rec_event *failed = find_type(g, n, "ToolError");
    const rec_event *subject = failed ? failed : &g[0];
    size_t recorded_opens = 0;
    for (size_t i = 0; i < n; i++)
        recorded_opens += !strcmp(g[i].event_type, "CircuitOpened") &&
                          !strcmp(g[i].tool_id, subject->tool_id);
    rd_tool_error err = {.message = failed ? failed->error : "", .code = "",
                         .exception_type = ""};
    err.message_len = strlen(err.message);
    if (find_type(g, n, "ToolTimeout"))
        err.kind = RD_KIND_TIMEOUT;
    if (!g[0].decision[0]) { /* RecordOutcome */
        bool success = find_type(g, n, "ToolSucceeded") || find_type(g, n, "RetrySucceeded");
        const rec_event *tf = find_type(g, n, "ToolFailed");
        if (!success && tf) {
            err.message = tf->error;
            err.message_len = strlen(tf->error);
        }
        rd_outcome_input in = {.tool_id = g[0].tool_id, .success = success,
                               .error = success ? NULL : &err, .attempt = g[0].retry_count + 1,
                               .turn_id = g[0].turn_id, .outcome_id = "", .permit_id = "",
                               .executor_id = ""};
        rd_outcome_result res;
        if (rd_engine_record_outcome(&r->engine, &in, &r->ctx, &res, &st) == RD_OK)
            count_open(&r->tally, in.tool_id, recorded_opens,
                       opens_in(res.trace, res.n_trace, in.tool_id));
        rd_arena_reset(&r->arena);
        return;
    }
    uint32_t attempt = failed ? failed->retry_count + 1 : 0;
    rd_decide_input in = {.tool_id = subject->tool_id, .error = failed ? &err : NULL,
                          .attempt = attempt, .turn_id = g[0].turn_id, .executor_id = "",
                          .outcome_id = "", .permit_id = ""};
    if (failed)
        in.elapsed_ms = elapsed_since_first(&r->chains, failed, attempt);
    rd_decision d;
    if (rd_engine_decide(&r->engine, &in, &r->ctx, &d, &st) != RD_OK) {
        fprintf(stderr, "recoveryctl: replay of %s at %lld: %s\n", in.tool_id,
                (long long)r->ctx.now_ms, st.msg);
        rd_arena_reset(&r->arena);
        return;
    }
    const char *now = rd_action_name(d.action);
    r->tally.calls++;
    if (strcmp(now, g[0].decision) != 0) {
        r->tally.changed++;
        count_change(&r->tally, in.tool_id, g[0].decision, now);
    }
    count_open(&r->tally, in.tool_id, recorded_opens, opens_in(d.trace, d.n_trace, in.tool_id));
    rd_arena_reset(&r->arena);
}

static void replayer_free(replayer *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->tally.n_changes; i++) {
        free(r->tally.changes[i].tool);
        free(r->tally.changes[i].from);
        free(r->tally.changes[i].to);
    }
    for (size_t i = 0; i < r->tally.n_opens; i++)
        free(r->tally.opens[i].tool);
    for (size_t i = 0; i < r->chains.n; i++) {
        free(r->chains.c[i].turn);
        free(r->chains.c[i].tool);
    }
    free(r);
}

/* ---- the command ---- */

static rd_config *load_candidate(const char *path)
{
    struct stat sb;
    char *file = NULL;
    if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode) &&
        asprintf(&file, "%s/recovery.yaml", path) < 0)
        return NULL;
    char err[RD_CONFIG_ERR_MAX] = "";
    rd_config *cfg = rd_config_load(file ? file : path, err, sizeof err);
    if (!cfg)
        fprintf(stderr, "%s\n", err[0] ? err : "invalid configuration");
    free(file);
    return cfg;
}

static void print_tally(const tally *t, bool json)
{
    if (json) {
        json_t *changes = json_array(), *opens = json_array();
        for (size_t i = 0; i < t->n_changes; i++)
            json_array_append_new(changes, json_pack("{s:s, s:s, s:s, s:I}", "tool",
                                                     t->changes[i].tool, "from",
                                                     t->changes[i].from, "to", t->changes[i].to,
                                                     "count", (json_int_t)t->changes[i].count));
        for (size_t i = 0; i < t->n_opens; i++)
            json_array_append_new(opens, json_pack("{s:s, s:I, s:I}", "tool", t->opens[i].tool,
                                                   "recorded",
                                                   (json_int_t)t->opens[i].recorded, "replayed",
                                                   (json_int_t)t->opens[i].replayed));
        json_t *doc = json_pack("{s:I, s:I, s:o, s:o}", "decisions", (json_int_t)t->calls,
                                "changed", (json_int_t)t->changed, "changes", changes,
                                "breaker_opens", opens);
        char *text = json_dumps(doc, JSON_INDENT(2));
        if (text)
            puts(text);
        free(text);
        json_decref(doc);
        return;
    }
    printf("%zu decisions replayed, %zu changed\n", t->calls, t->changed);
    for (size_t i = 0; i < t->n_changes; i++)
        printf("%s: %zu %s -> %s\n", t->changes[i].tool, t->changes[i].count,
               t->changes[i].from, t->changes[i].to);
    for (size_t i = 0; i < t->n_opens; i++)
        if (t->opens[i].recorded != t->opens[i].replayed)
            printf("%s: breaker opened %zu times instead of %zu\n", t->opens[i].tool,
                   t->opens[i].replayed, t->opens[i].recorded);
}

int ctl_cmd_replay(const ctl_opts *o)
{
    if (!o->config)
        return ctl_usage_error("replay: --config FILE|DIR is required");
    rd_config *cfg = load_candidate(o->config);
    if (!cfg)
        return CTL_EXIT_FAIL;
    rec_event *ev;
    size_t n;
    int rc = read_export(o->args[0], &ev, &n);
    rd_store_limits limits = {
        .max_tools = cfg->store.max_tools, .tool_idle_ttl_ms = cfg->store.tool_idle_ttl_ms,
        .turn_ttl_ms = cfg->store.turn_ttl_ms, .max_turns = cfg->store.max_turns,
        .max_events_per_turn = cfg->store.max_events_per_turn,
        .outcome_ttl_ms = cfg->store.outcome_ttl_ms, .max_outcomes = cfg->store.max_outcomes,
        .max_signatures = cfg->learning.max_signatures};
    replayer *r = rc == CTL_EXIT_OK ? calloc(1, sizeof *r) : NULL;
    rd_store *store = r ? rd_store_memory_new(&limits) : NULL;
    if (store) {
        r->engine = (rd_engine){.policy = &cfg->policy, .store = store};
        rd_arena_init(&r->arena, 65536);
        rd_rng_seed(&r->rng, 42); /* the same jitter on every run */
        r->ctx = (rd_call_ctx){.arena = &r->arena, .rng = &r->rng};
        for (size_t i = 0; i < n;) {
            size_t j = i + 1;
            while (j < n && ev[j].at_ms == ev[i].at_ms && !strcmp(ev[j].turn_id, ev[i].turn_id) &&
                   !strcmp(ev[j].decision, ev[i].decision) && !starts_call(ev + i, j - i, &ev[j]))
                j++;
            replay_call(r, ev + i, j - i);
            i = j;
        }
        print_tally(&r->tally, o->json);
        rd_arena_free(&r->arena);
        rd_store_destroy(store);
    } else if (rc == CTL_EXIT_OK) {
        fprintf(stderr, "recoveryctl: replay: out of memory\n");
        rc = CTL_EXIT_FAIL;
    }
    replayer_free(r);
    for (size_t i = 0; i < n; i++) {
        free(ev[i].turn_id);
        free(ev[i].tool_id);
        free(ev[i].event_type);
        free(ev[i].decision);
        free(ev[i].error);
    }
    free(ev);
    rd_config_free(cfg);
    return rc;
}
