/* The decision engine (see decide.h; the semantics are those of issue 3).
 *
 * Each public function validates its input, talks to the store through
 * s->ops (every breaker change is one atomic store operation), builds its
 * trace events in a list in the caller's arena, and appends them to the
 * turn in one store call. Nothing here keeps state between calls. */
#include "engine/decide.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "domain/budget.h"
#include "domain/cascade.h"
#include "domain/classify.h"
#include "domain/hash.h"
#include "engine/refusal.h"
#include "domain/signature.h"
#include "engine/step.h"
#include "domain/textcut.h"

/* ---- permits ---- */

void rd_permit_format(char *buf, size_t cap, uint64_t generation, uint64_t token)
{
    snprintf(buf, cap, "p-%" PRIu64 "-%" PRIx64, generation, token);
}

/* Parses digits of `base` up to `stop` (exclusive: '\0' or '-'), without
 * overflow, at least one digit. Returns the end or NULL. */
static const char *parse_u64(const char *s, int base, char stop, uint64_t *out)
{
    uint64_t v = 0;
    const char *p = s;
    for (; *p && *p != stop; p++) {
        int d;
        if (*p >= '0' && *p <= '9')
            d = *p - '0';
        else if (base == 16 && *p >= 'a' && *p <= 'f')
            d = *p - 'a' + 10;
        else if (base == 16 && *p >= 'A' && *p <= 'F')
            d = *p - 'A' + 10;
        else
            return NULL;
        if (v > (UINT64_MAX - (uint64_t)d) / (uint64_t)base)
            return NULL;
        v = v * (uint64_t)base + (uint64_t)d;
    }
    if (p == s || *p != stop)
        return NULL;
    *out = v;
    return p;
}

bool rd_permit_parse(const char *s, uint64_t *generation, uint64_t *token)
{
    uint64_t gen, tok;
    if (!s || strncmp(s, "p-", 2) != 0)
        return false;
    const char *p = parse_u64(s + 2, 10, '-', &gen);
    if (!p || !parse_u64(p + 1, 16, '\0', &tok) || tok == 0)
        return false; /* token 0 means "no probe" and is never granted */
    *generation = gen;
    *token = tok;
    return true;
}

/* ---- validation ---- */

/* *len (when not NULL) receives the value's length, measured once here
 * for the writers that need it later. */
static int measure_id(const char *field, const char *value, bool required, size_t *len,
                      rd_status *st)
{
    size_t n = value && value[0] ? strlen(value) : 0; /* most optional ids are "" */
    if (len)
        *len = n;
    if (n == 0)
        return required ? rd_status_set(st, RD_ERR_INVALID, "%s: required", field) : RD_OK;
    if (n > RD_ID_MAX)
        return rd_status_set(st, RD_ERR_INVALID, "%s: longer than %d bytes", field,
                             RD_ID_MAX);
    return RD_OK;
}

static int check_id(const char *field, const char *value, bool required, rd_status *st)
{
    return measure_id(field, value, required, NULL, st);
}

static int check_tool(const rd_engine *e, const char *tool_id, size_t *len, rd_status *st)
{
    int rc = measure_id("tool_id", tool_id, true, len, st);
    if (rc != RD_OK)
        return rc;
    if (e->policy->reject_unknown_tools && !rd_policy_find_tool(e->policy, tool_id))
        return rd_status_set(st, RD_ERR_NOT_FOUND, "tool_id: unknown tool '%s'", tool_id);
    return RD_OK;
}

/* An empty permit_id means the caller holds no probe (token 0). */
static int parse_permit(const char *permit_id, uint64_t *token, rd_status *st)
{
    uint64_t generation;
    *token = 0;
    if (!permit_id || !permit_id[0])
        return RD_OK;
    if (strlen(permit_id) > RD_PERMIT_ID_MAX ||
        !rd_permit_parse(permit_id, &generation, token))
        return rd_status_set(st, RD_ERR_INVALID, "permit_id: malformed");
    return RD_OK;
}

static const char *safe_str(const char *s)
{
    return s ? s : "";
}

/* ---- breaker views ---- */

static void fill_view(rd_breaker_view *v, const char *tool_id, const rd_breaker *b,
                      const rd_tool_config *cfg, int64_t now_ms)
{
    rd_breaker_status status = rd_breaker_status_at(b, now_ms);
    *v = (rd_breaker_view){
        .tool_id = tool_id,
        .status = status,
        .consecutive_failures = b->consecutive_failures,
        .consecutive_successes = b->consecutive_successes,
        .failure_threshold = cfg->breaker.failure_threshold,
        .success_threshold = cfg->breaker.success_threshold,
        .opened_at_ms = b->opened_at_ms,
        .open_until_ms = status == RD_BREAKER_OPEN ? b->open_until_ms : 0,
        .probe_in_flight = rd_breaker_probe_live(b, now_ms),
        .opens_total = b->opens_total,
        .generation = b->generation,
    };
    if (rd_breaker_hold_live(b, now_ms)) {
        v->forced = b->forced;
        v->forced_until_ms = b->forced_until_ms;
    }
}

/* ---- classification ---- */

static const char *error_type_name(const rd_tool_error *err, const rd_classification *c)
{
    if (err->exception_type && err->exception_type[0])
        return err->exception_type;
    const char *kind = rd_kind_name(c->kind);
    if (kind && kind[0])
        return kind;
    return rd_category_name(c->category);
}

/* The "Tool Execution Failed" text (001), with a long error message cut to
 * its head and tail (RD_LLM_ERROR_HEAD/TAIL), sized so the whole text fits:
 * rd_llm_message writes valid UTF-8 and spends up to 3 bytes (U+FFFD) on
 * each invalid input byte. */
#define LLM_MESSAGE_FRAME 128 /* the fixed lines around the three fields */

static const char *llm_message_for(rd_text tool, const rd_tool_error *err,
                                   const rd_classification *c, const rd_call_ctx *ctx,
                                   size_t *len)
{
    const char *type_name = error_type_name(err, c);
    rd_text type = {type_name, strlen(type_name)};
    size_t message_len = 0;
    const char *message = err->message ? rd_text_cut(ctx->arena, err->message, err->message_len,
                                                     RD_LLM_ERROR_HEAD, RD_LLM_ERROR_TAIL,
                                                     &message_len)
                                       : "";
    if (!message)
        return NULL;
    size_t cap = 3 * (message_len + tool.len + type.len) + LLM_MESSAGE_FRAME;
    char *text = rd_arena_alloc_uninit(ctx->arena, cap); /* terminated by the writer */
    if (!text)
        return NULL;
    if (ctx->text_checked)
        *len = rd_llm_message_valid(text, cap, tool, type, message, message_len);
    else
        *len = rd_llm_message(text, cap, tool.s, type.s, message, message_len);
    return text;
}

/* Learning (docs/FLEET.md): an error no rule knows, whose signature has
 * enough settled retries behind it, is classified from that record. */
static int apply_learning(const rd_engine *e, const char *tool_id, const rd_signature *sig,
                          int64_t now_ms, rd_arena *a, rd_classification *c, rd_status *st)
{
    rd_learn_stats stats;
    int rc = e->store->ops->learn_stats(e->store, tool_id, sig->id, now_ms, &stats, st);
    if (rc != RD_OK)
        return rc;
    rd_retryability verdict =
        rd_learned_retryability(&e->policy->learning, stats.successes, stats.failures);
    if (verdict == RD_RETRYABILITY_UNSPECIFIED)
        return RD_OK;
    const char *rule_id = rd_arena_printf(a, "learned:%s", sig->id);
    const char *suggestion = rd_arena_printf(
        a, "Learned from %llu earlier retries of this error (%llu succeeded): %s",
        (unsigned long long)(stats.successes + stats.failures),
        (unsigned long long)stats.successes,
        verdict == RD_TRANSIENT ? "retrying usually works" : "retrying rarely works");
    if (!rule_id || !suggestion)
        return rd_status_set(st, RD_ERR_NOMEM, "classification: out of memory");
    c->retryability = verdict;
    c->rule_id = rule_id;
    c->suggestion = suggestion;
    c->retry_after_ms = verdict == RD_TRANSIENT ? c->retry_after_ms : 0;
    return RD_OK;
}

/* Whether learning looks at this classification: an error no rule (and
 * no override) decided. */
static bool learnable(const rd_engine *e, const rd_classification *c)
{
    return e->policy->learning.enabled && !c->overridden && strcmp(c->rule_id, "unknown") == 0;
}

/* The tool's manifest, or NULL, from its settings (a manifest's own or the
 * defaults): the caller has looked the tool up once already. */
static const rd_tool_config *manifest_of(const rd_engine *e, const rd_tool_config *settings)
{
    return settings == &e->policy->defaults ? NULL : settings;
}

/* Classifies err (manifest: the tool's, or NULL) into *c; *sig (when not
 * NULL) receives the error's signature and *tracked whether learning
 * follows it. A long message is read as its head and tail
 * (RD_CLASSIFY_HEAD/TAIL): the cost stays bounded whatever the request
 * size, and a traceback's cause, on its last lines, is still read. */
static int classify_error(const rd_engine *e, const rd_tool_config *manifest, const char *tool_id,
                          const rd_tool_error *err, const rd_call_ctx *ctx, rd_classification *c,
                          rd_signature *sig, bool *tracked, rd_status *st)
{
    rd_tool_error bounded;
    if (err->message &&
        rd_text_needs_cut(err->message_len, RD_CLASSIFY_HEAD, RD_CLASSIFY_TAIL)) {
        bounded = *err;
        bounded.message = rd_text_cut(ctx->arena, err->message, err->message_len,
                                      RD_CLASSIFY_HEAD, RD_CLASSIFY_TAIL, &bounded.message_len);
        if (!bounded.message)
            return rd_status_set(st, RD_ERR_NOMEM, "classification: out of memory");
        err = &bounded;
    }
    rd_classify(&e->policy->rules, manifest, tool_id, err, c);
    bool learn = learnable(e, c);
    if (tracked)
        *tracked = learn && sig;
    if (!learn)
        return RD_OK;
    rd_signature own;
    rd_signature *s = sig ? sig : &own;
    rd_signature_of(tool_id, err->message, err->message ? err->message_len : 0, s);
    return apply_learning(e, tool_id, s, ctx->now_ms, ctx->arena, c, st);
}

/* The text for the model beside a classification the caller answers with
 * (RecordOutcome keeps only the classification, so it never writes one). */
static int add_llm_message(rd_text tool, const rd_tool_error *err, const rd_call_ctx *ctx,
                           rd_classify_result *out, rd_status *st)
{
    out->llm_message =
        llm_message_for(tool, err, &out->classification, ctx, &out->llm_message_len);
    if (!out->llm_message)
        return rd_status_set(st, RD_ERR_NOMEM, "llm_message: out of memory");
    return RD_OK;
}

/* A failure reported without any error detail. */
static void unspecified_failure(const rd_policy *cfg, rd_classification *c)
{
    const char *suggestion = cfg->rules.category_suggestion[RD_CAT_UNKNOWN];
    *c = (rd_classification){
        .retryability = RD_TRANSIENT,
        .category = RD_CAT_UNKNOWN,
        .kind = RD_KIND_UNSPECIFIED,
        .executed = rd_kind_executed(RD_KIND_UNSPECIFIED),
        .suggestion = safe_str(suggestion),
        .rule_id = "unspecified",
    };
}

int rd_engine_classify(const rd_engine *e, const char *tool_id, const rd_tool_error *err,
                       const rd_call_ctx *ctx, rd_classify_result *out, rd_status *st)
{
    rd_text tool = {tool_id, 0};
    int rc = check_tool(e, tool_id, &tool.len, st);
    if (rc != RD_OK)
        return rc;
    if (!err)
        return rd_status_set(st, RD_ERR_INVALID, "error: required");
    rc = classify_error(e, rd_policy_find_tool(e->policy, tool_id), tool_id, err, ctx,
                        &out->classification, NULL, NULL, st);
    return rc != RD_OK ? rc : add_llm_message(tool, err, ctx, out, st);
}

/* ---- texts without printf ---- */

/* Details and reasons are written on every Decide; joining their pieces
 * costs a fraction of formatting them with printf, for the same bytes. */

/* A piece of text and its length. Inlined, txt() of a literal costs
 * nothing at run time: the compiler folds its length. */
typedef struct piece {
    const char *s;
    size_t n;
} piece;

static inline __attribute__((always_inline)) piece txt(const char *s)
{
    return (piece){s, strlen(s)};
}
/* An array of pieces and its length, as two arguments. */
#define PIECES(...) \
    (const piece[]){__VA_ARGS__}, sizeof((const piece[]){__VA_ARGS__}) / sizeof(piece)

typedef struct num_text {
    char s[24]; /* "-9223372036854775808" and its NUL */
} num_text;

/* The decimal text of v (as printf's %d, %u or PRId64 writes it), in t. */
static piece num(num_text *t, int64_t v)
{
    char *end = t->s + sizeof t->s - 1, *p = end;
    uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
    *p = '\0';
    do {
        *--p = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0)
        *--p = '-';
    return (piece){p, (size_t)(end - p)};
}

/* The pieces one after another into buf, which has room for them and a
 * NUL. Inlined and unrolled where the pieces are known, a literal piece
 * becomes a copy of a fixed size: no loop and no choice of copy. */
static inline __attribute__((always_inline)) size_t put_pieces(char *buf, const piece *pieces,
                                                               size_t n_pieces)
{
    size_t len = 0;
#pragma GCC unroll 12
    for (size_t i = 0; i < n_pieces; i++) {
        memcpy(buf + len, pieces[i].s, pieces[i].n);
        len += pieces[i].n;
    }
    buf[len] = '\0';
    return len;
}

static inline __attribute__((always_inline)) size_t pieces_len(const piece *pieces,
                                                               size_t n_pieces)
{
    size_t len = 0;
#pragma GCC unroll 12
    for (size_t i = 0; i < n_pieces; i++)
        len += pieces[i].n;
    return len;
}

/* As put_pieces, cut at cap - 1 bytes as snprintf cuts (rare: a detail
 * with a long tool id or text). */
static size_t put_pieces_cut(char *buf, size_t cap, const piece *pieces, size_t n_pieces)
{
    size_t len = 0;
    for (size_t i = 0; i < n_pieces; i++) {
        size_t n = pieces[i].n;
        if (n > cap - 1 - len)
            n = cap - 1 - len;
        memcpy(buf + len, pieces[i].s, n);
        len += n;
    }
    buf[len] = '\0';
    return len;
}

/* Writes the pieces one after another into buf, cut at cap - 1 bytes as
 * snprintf cuts. Returns the length written. */
static inline __attribute__((always_inline)) size_t join_pieces(char *buf, size_t cap,
                                                                const piece *pieces,
                                                                size_t n_pieces)
{
    if (pieces_len(pieces, n_pieces) < cap)
        return put_pieces(buf, pieces, n_pieces);
    return put_pieces_cut(buf, cap, pieces, n_pieces);
}

/* The pieces joined into a string in the arena, or NULL (out of memory). */
static inline __attribute__((always_inline)) const char *arena_join(rd_arena *a,
                                                                    const piece *pieces,
                                                                    size_t n_pieces)
{
    char *s = rd_arena_alloc_uninit(a, pieces_len(pieces, n_pieces) + 1);
    if (s)
        put_pieces(s, pieces, n_pieces);
    return s;
}

#define ARENA_JOIN(a, ...) arena_join((a), PIECES(__VA_ARGS__))

/* ---- trace events ---- */

/* Events of one call, in order. Grows in the arena; never hold a pointer to
 * an event across event_add. */
typedef struct event_list {
    rd_trace_event *items;
    size_t n, cap;
    rd_arena *arena;
    bool out_of_memory;
    bool text_checked;           /* the call's texts are valid UTF-8 (rd_call_ctx) */
} event_list;

/* Room for the events of most answers at first (a RETRY has two, three
 * after a timeout). */
#define EVENTS_FIRST_CAP 3

/* Every field but the unused tails of the texts is set when an event is
 * added, so the ~820-byte slots are not zeroed first. */
static void event_init(rd_trace_event *ev, rd_event_type type, rd_text tool, bool text_checked)
{
    ev->type = type;
    ev->tool_id_len = (uint16_t)(text_checked
                                     ? rd_trace_copy_valid(ev->tool_id, sizeof ev->tool_id,
                                                           tool.s, tool.len)
                                     : rd_trace_copy_text(ev->tool_id, sizeof ev->tool_id,
                                                          tool.s, tool.len));
    ev->error[0] = '\0';
    ev->detail[0] = '\0';
    ev->error_len = ev->detail_len = 0;
    ev->retryability = RD_RETRYABILITY_UNSPECIFIED;
    ev->breaker = RD_BREAKER_UNSPECIFIED;
    ev->retry_count = 0;
    ev->decision = RD_ACTION_UNSPECIFIED;
    ev->timestamp_ms = 0;
    ev->timeout_ms = 0;
    ev->executed = false;
    ev->sequence = 0;
}

/* An event about `tool`, whose length the caller knows. */
static rd_trace_event *event_add_text(event_list *l, rd_event_type type, rd_text tool)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : EVENTS_FIRST_CAP;
        rd_trace_event *items = rd_arena_alloc_uninit(l->arena, cap * sizeof *items);
        if (!items) {
            l->out_of_memory = true;
            return NULL;
        }
        if (l->n)
            memcpy(items, l->items, l->n * sizeof *items);
        l->items = items;
        l->cap = cap;
    }
    rd_trace_event *ev = &l->items[l->n++];
    event_init(ev, type, tool, l->text_checked);
    return ev;
}

static rd_trace_event *event_add(event_list *l, rd_event_type type, const char *tool_id)
{
    return event_add_text(l, type, (rd_text){tool_id, strlen(tool_id)});
}

/* The detail joined from its pieces (see EVENT_DETAIL), cut and made safe
 * like any trace text. The pieces are joined in place first: when that is
 * valid UTF-8 it is what the cut would have kept, and the usual detail
 * (ASCII, short) is written once instead of twice. Pieces of a call whose
 * texts are checked (tool ids, names from the config, numbers) are valid
 * UTF-8, so a join that was not cut needs no check. */
static void event_detail_made_safe(rd_trace_event *ev, const piece *pieces, size_t n_pieces)
{
    if (rd_utf8_valid_len(ev->detail, ev->detail_len) == ev->detail_len)
        return;
    char buf[RD_TRACE_TEXT_MAX * 2];
    size_t len = put_pieces_cut(buf, sizeof buf, pieces, n_pieces);
    ev->detail_len = (uint16_t)rd_trace_copy_text(ev->detail, sizeof ev->detail, buf, len);
}

static inline __attribute__((always_inline)) void event_detail_of(const event_list *l,
                                                                  rd_trace_event *ev,
                                                                  const piece *pieces,
                                                                  size_t n_pieces)
{
    size_t len = join_pieces(ev->detail, sizeof ev->detail, pieces, n_pieces);
    ev->detail_len = (uint16_t)len;
    if (!l->text_checked || len >= sizeof ev->detail - 1)
        event_detail_made_safe(ev, pieces, n_pieces);
}

#define EVENT_DETAIL(l, ev, ...) event_detail_of((l), (ev), PIECES(__VA_ARGS__))

/* A ToolTimeout event's detail. */
static void timeout_detail(const event_list *l, rd_trace_event *ev, const char *tool_id,
                           int64_t timeout_ms)
{
    num_text limit;
    EVENT_DETAIL(l, ev, txt(tool_id), txt(" timed out (limit "), num(&limit, timeout_ms),
                 txt(" ms)"));
}

/* An event about a failed attempt: the error text and what it means. */
static void event_error(const event_list *l, rd_trace_event *ev, const rd_tool_error *err,
                        const rd_classification *c)
{
    char cut[RD_TRACE_TEXT_MAX - 1]; /* a long message: its head and tail, marked */
    const char *message = err && err->message ? err->message : NULL;
    size_t len = message ? err->message_len : 0;
    if (len > sizeof cut) {
        len = rd_text_cut_into(cut, sizeof cut, message, len);
        message = cut;
    }
    if (message && l->text_checked)
        ev->error_len = (uint16_t)rd_trace_copy_valid(ev->error, sizeof ev->error, message, len);
    else if (err)
        ev->error_len = (uint16_t)rd_trace_copy_text(ev->error, sizeof ev->error, message, len);
    ev->retryability = c->retryability;
    ev->executed = c->executed;
}

/* Stamps what every event of a call shares. */
static void events_finish(event_list *l, rd_action action, rd_breaker_status breaker,
                          int64_t now_ms)
{
    for (size_t i = 0; i < l->n; i++) {
        l->items[i].decision = action;
        l->items[i].breaker = breaker;
        l->items[i].timestamp_ms = now_ms;
    }
}

static int events_to_turn(const rd_engine *e, const char *turn_id, event_list *l,
                          int64_t now_ms, rd_status *st)
{
    if (!turn_id || !turn_id[0] || l->n == 0)
        return RD_OK;
    int64_t started_at_ms;
    return e->store->ops->turn_append(e->store, turn_id, l->items, l->n, now_ms,
                                      &started_at_ms, st);
}

/* The breaker transitions worth a trace event when recording an outcome. */
static void note_transition(event_list *l, const char *tool_id, rd_breaker_transition t)
{
    rd_trace_event *ev;
    if (t == RD_TRANSITION_OPENED || t == RD_TRANSITION_REOPENED) {
        if ((ev = event_add(l, RD_EV_CIRCUIT_OPENED, tool_id)))
            EVENT_DETAIL(l, ev, txt("Circuit breaker opened for "), txt(tool_id));
    } else if (t == RD_TRANSITION_CLOSED) {
        if ((ev = event_add(l, RD_EV_CIRCUIT_CLOSED, tool_id)))
            EVENT_DETAIL(l, ev, txt("Circuit breaker closed for "), txt(tool_id));
    }
}

/* ---- the turn budget ---- */

typedef struct turn_budget {
    bool known;
    int64_t remaining_ms;
} turn_budget;

/* The caller's figure wins; otherwise the configured per-turn budget counted
 * from the turn's first appearance; no turn, no limit. */
static int turn_budget_get(const rd_engine *e, const rd_decide_input *in, int64_t now_ms,
                           turn_budget *out, rd_status *st)
{
    *out = (turn_budget){0};
    if (in->has_turn_remaining) {
        *out = (turn_budget){.known = true, .remaining_ms = in->turn_remaining_ms};
        return RD_OK;
    }
    if (!in->turn_id || !in->turn_id[0])
        return RD_OK;
    int64_t started_at_ms;
    int rc = e->store->ops->turn_touch(e->store, in->turn_id, now_ms, &started_at_ms, st);
    if (rc != RD_OK)
        return rc;
    out->known = true;
    out->remaining_ms = e->policy->turn_timeout_ms - (now_ms - started_at_ms);
    return RD_OK;
}

/* ---- one Decide call ---- */

typedef struct decide_call {
    const rd_engine *e;
    const rd_decide_input *in;
    const rd_call_ctx *ctx;
    rd_status *st;
    rd_text tool;                /* in->tool_id, measured once */
    const rd_tool_config *cfg;   /* the tool's policy (manifest or defaults) */
    rd_decision *out;
    event_list events;
    rd_breaker breaker;          /* the tool's breaker as last seen */
    turn_budget budget;
    uint32_t attempt;
    uint64_t permit_token;       /* the probe the caller holds, 0 = none */
    bool held_by_quorum;         /* the breaker stayed closed for want of a quorum */
    bool opened_now;             /* this failure opened (or reopened) the breaker */
    rd_signature *signature;     /* of the error; written and read only when tracked */
    bool signature_tracked;
} decide_call;

static rd_trace_event *call_event(decide_call *c, rd_event_type type)
{
    rd_trace_event *ev = event_add_text(&c->events, type, c->tool);
    if (ev && c->in->error)
        ev->retry_count = c->attempt - 1;
    return ev;
}

static const char *format_permit(rd_arena *a, uint64_t generation, uint64_t token)
{
    char *buf = rd_arena_alloc(a, RD_PERMIT_ID_MAX + 1);
    if (buf)
        rd_permit_format(buf, RD_PERMIT_ID_MAX + 1, generation, token);
    return buf;
}

/* A half-open probe's permit lasts as long as its call can: the wait
 * before it (a retry's delay), the tool's timeout, and this margin for the
 * report to arrive. A holder that never reports frees the tool then. */
#define PROBE_LEASE_MARGIN_MS 250

static int admit_after(decide_call *c, const char *tool_id, const rd_tool_config *cfg,
                       int64_t delay_ms, rd_store_result *res)
{
    int64_t lease = cfg->timeout_ms + PROBE_LEASE_MARGIN_MS + (delay_ms > 0 ? delay_ms : 0);
    return c->e->store->ops->admit(c->e->store, tool_id, &cfg->breaker, c->ctx->now_ms, lease,
                                   res, c->st);
}

static int admit(decide_call *c, const char *tool_id, const rd_tool_config *cfg,
                 rd_store_result *res)
{
    return admit_after(c, tool_id, cfg, 0, res);
}

/* ---- retry budgets ---- */

static int budget_op(decide_call *c, const char *tool_id, const rd_tool_config *cfg,
                     rd_budget_op op, rd_budget_result *res)
{
    *res = (rd_budget_result){.granted = true};
    if (!cfg->retry_budget.enabled)
        return RD_OK;
    return c->e->store->ops->budget(c->e->store, tool_id, &cfg->retry_budget, c->ctx->now_ms,
                                    op, res, c->st);
}

static int count_request(decide_call *c, const char *tool_id, const rd_tool_config *cfg)
{
    rd_budget_result res;
    return budget_op(c, tool_id, cfg, RD_BUDGET_COUNT_REQUEST, &res);
}

/* ---- alternatives ---- */

#define RANKED_MAX 64

typedef struct ranked_alternative {
    size_t index;                /* in the manifest's list */
    int state_rank;              /* 0 CLOSED, 1 HALF_OPEN, 2 OPEN or held open */
    double success_rate;         /* in the call window; 1 with no calls */
} ranked_alternative;

static int compare_ranked(const void *a, const void *b)
{
    const ranked_alternative *x = a, *y = b;
    if (x->state_rank != y->state_rank)
        return x->state_rank < y->state_rank ? -1 : 1;
    if (x->success_rate != y->success_rate)
        return x->success_rate > y->success_rate ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

static int state_rank(rd_breaker_status status)
{
    return status == RD_BREAKER_CLOSED ? 0 : status == RD_BREAKER_HALF_OPEN ? 1 : 2;
}

/* The alternatives in the order to try them: the manifest's, or ranked by
 * live state (docs/FLEET.md). Returns how many were written to order. */
static int alternatives_in_order(decide_call *c, size_t *order, size_t *n_order)
{
    size_t n = c->cfg->n_alternatives < RANKED_MAX ? c->cfg->n_alternatives : RANKED_MAX;
    ranked_alternative ranked[RANKED_MAX];
    for (size_t i = 0; i < n; i++) {
        ranked[i] = (ranked_alternative){.index = i, .success_rate = 1.0};
        if (c->cfg->alternatives_ranking != RD_RANKING_LIVE || n < 2)
            continue;
        const char *alt = c->cfg->alternatives[i];
        const rd_tool_config *alt_cfg = rd_policy_tool_or_defaults(c->e->policy, alt);
        rd_breaker b;
        rd_breaker_evidence ev;
        bool found;
        int rc = c->e->store->ops->stats(c->e->store, alt, &alt_cfg->breaker, c->ctx->now_ms,
                                         &b, &ev, &found, c->st);
        if (rc != RD_OK)
            return rc;
        ranked[i].state_rank = state_rank(rd_breaker_status_at(&b, c->ctx->now_ms));
        if (ev.calls > 0)
            ranked[i].success_rate = (double)(ev.calls - ev.failures) / (double)ev.calls;
    }
    if (c->cfg->alternatives_ranking == RD_RANKING_LIVE && n > 1)
        qsort(ranked, n, sizeof ranked[0], compare_ranked);
    for (size_t i = 0; i < n; i++)
        order[i] = ranked[i].index;
    *n_order = n;
    return RD_OK;
}

/* Offers `alt` if its own breaker admits a call: USE_ALTERNATIVE, counted
 * against its retry budget, with a probe permit when it is half-open. */
static int offer_alternative(decide_call *c, const char *why, const char *alt, bool *found)
{
    *found = false;
    if (strcmp(alt, c->in->tool_id) == 0)
        return RD_OK;
    const rd_tool_config *alt_cfg = rd_policy_tool_or_defaults(c->e->policy, alt);
    rd_store_result res;
    int rc = admit(c, alt, alt_cfg, &res);
    if (rc != RD_OK || res.admission == RD_ADMIT_NO)
        return rc;
    if (!c->out->duplicate && (rc = count_request(c, alt, alt_cfg)) != RD_OK)
        return rc;
    c->out->action = RD_ACTION_USE_ALTERNATIVE;
    c->out->alternative_tool_id = rd_arena_strdup(c->ctx->arena, alt);
    c->out->timeout_ms = alt_cfg->timeout_ms;
    if (res.admission == RD_ADMIT_PROBE)
        c->out->permit_id = format_permit(c->ctx->arena, res.breaker.generation,
                                          res.permit_token);
    c->out->reason = ARENA_JOIN(c->ctx->arena, txt(why), txt(": using alternative "), txt(alt));
    rd_trace_event *ev = call_event(c, RD_EV_ALTERNATIVE_USED);
    if (ev)
        EVENT_DETAIL(&c->events, ev, txt("Used alternative tool "), txt(alt), txt(" for "),
                     txt(c->in->tool_id));
    *found = true;
    return RD_OK;
}

/* The first alternative (in ranking order) whose own breaker admits a
 * call; then, for a tool that is itself an alternative, the ones its
 * primary lists after it (engine/step.h: the step goes on down its list).
 * *found = false when there is none. */
static int try_alternative(decide_call *c, const char *why, bool *found)
{
    *found = false;
    size_t order[RANKED_MAX], n_order;
    int rc = alternatives_in_order(c, order, &n_order);
    for (size_t k = 0; rc == RD_OK && !*found && k < n_order; k++)
        rc = offer_alternative(c, why, c->cfg->alternatives[order[k]], found);
    const char *next[RD_STEP_SUCCESSORS_MAX];
    size_t n_next = rc == RD_OK && !*found ? rd_step_successors(c->e->policy, c->in->tool_id,
                                                                next, RD_STEP_SUCCESSORS_MAX)
                                           : 0;
    for (size_t k = 0; rc == RD_OK && !*found && k < n_next; k++)
        rc = offer_alternative(c, why, next[k], found);
    return rc;
}

static void act_fail_fast(decide_call *c, const char *why)
{
    c->out->action = RD_ACTION_FAIL_FAST;
    c->out->reason = why;
    rd_trace_event *ev = call_event(c, RD_EV_FAIL_FAST);
    if (ev)
        EVENT_DETAIL(&c->events, ev, txt("Circuit breaker open for "), txt(c->in->tool_id),
                     txt(": failing fast"));
}

/* Why an OPEN breaker stops the call. When this failure was the last
 * attempt and opened the breaker (the defaults make both 5), the attempts
 * running out is said first: that is what ended the call. */
static const char *open_reason(decide_call *c)
{
    if (!c->opened_now || c->attempt < c->cfg->retry.max_attempts)
        return "circuit open";
    num_text limit;
    const char *why = ARENA_JOIN(c->ctx->arena, txt("max attempts ("),
                                 num(&limit, c->cfg->retry.max_attempts),
                                 txt(") reached and the circuit opened"));
    return why ? why : "circuit open";
}

static int act_alternative_or_fail_fast(decide_call *c)
{
    bool found;
    const char *why = open_reason(c);
    int rc = try_alternative(c, why, &found);
    if (rc == RD_OK && !found)
        act_fail_fast(c, why);
    return rc;
}

static void act_partial(decide_call *c, const char *reason, bool skipped)
{
    c->out->action = RD_ACTION_PARTIAL;
    c->out->reason = reason;
    rd_trace_event *ev = call_event(c, RD_EV_TURN_TIMEOUT);
    if (ev)
        EVENT_DETAIL(&c->events, ev, txt(reason));
    if (skipped && (ev = call_event(c, RD_EV_SKIPPED)))
        EVENT_DETAIL(&c->events, ev, txt("skipped: turn deadline reached"));
}

static void act_give_up(decide_call *c, const char *reason)
{
    c->out->action = RD_ACTION_GIVE_UP;
    c->out->reason = reason;
    rd_trace_event *ev = call_event(c, RD_EV_GAVE_UP);
    if (ev)
        EVENT_DETAIL(&c->events, ev, txt("Gave up on "), txt(c->in->tool_id), txt(": "),
                     txt(safe_str(reason)));
}

static void act_escalate(decide_call *c, const char *reason)
{
    c->out->action = RD_ACTION_ESCALATE;
    c->out->reason = reason;
    rd_trace_event *ev = call_event(c, RD_EV_ESCALATED);
    if (ev)
        EVENT_DETAIL(&c->events, ev, txt("Escalated "), txt(c->in->tool_id), txt(": "),
                     txt(safe_str(reason)));
}

static void act_proceed(decide_call *c, const rd_store_result *res)
{
    c->out->action = RD_ACTION_PROCEED;
    if (res->admission != RD_ADMIT_PROBE) {
        c->out->reason = "circuit closed";
        return;
    }
    c->out->reason = "circuit half-open: probe permit granted";
    c->out->permit_id = format_permit(c->ctx->arena, res->breaker.generation,
                                      res->permit_token);
    rd_trace_event *ev = call_event(c, RD_EV_CIRCUIT_HALF_OPENED);
    if (ev)
        EVENT_DETAIL(&c->events, ev, txt("Circuit breaker half-open for "), txt(c->in->tool_id),
                     txt(": probe permit granted"));
}

/* Said in a retry's reason when the failure streak alone would have opened
 * the breaker but too few executors reported failures. */
static piece quorum_note(const decide_call *c)
{
    if (!c->held_by_quorum)
        return txt("");
    num_text quorum;
    const char *note = ARENA_JOIN(c->ctx->arena,
                                  txt(" (breaker held closed: failures from fewer than "),
                                  num(&quorum, c->cfg->breaker.quorum_min_executors),
                                  txt(" executors)"));
    return txt(note ? note : "");
}

/* The wait before the next attempt, in both units the answer carries. */
typedef struct retry_wait {
    int64_t ms;
    int64_t us;
} retry_wait;

static void act_retry(decide_call *c, retry_wait wait)
{
    uint32_t max = c->cfg->retry.max_attempts;
    num_text attempt, retries, delay;
    piece attempt_text = num(&attempt, c->attempt);
    piece retries_text = num(&retries, max > 0 ? max - 1 : 0);
    c->out->action = RD_ACTION_RETRY;
    c->out->delay_ms = wait.ms;
    c->out->delay_us = wait.us;
    c->out->reason = ARENA_JOIN(c->ctx->arena, txt("transient error: retry "), attempt_text,
                                txt(" of "), retries_text, quorum_note(c));
    rd_trace_event *ev = call_event(c, RD_EV_RETRY);
    if (!ev)
        return;
    ev->retry_count = c->attempt;
    EVENT_DETAIL(&c->events, ev, txt("retry "), attempt_text, txt(" of "), retries_text,
                 txt(" after "), num(&delay, wait.ms), txt(" ms"));
}

/* ---- cascades ---- */

static bool tool_ends_failed(rd_action a)
{
    return a == RD_ACTION_ESCALATE || a == RD_ACTION_GIVE_UP || a == RD_ACTION_FAIL_FAST ||
           a == RD_ACTION_PARTIAL;
}

/* Every configured tool as a plan step (config->tools is immutable, so the
 * strings are borrowed from it). */
static rd_plan_step *manifest_plan(const rd_policy *cfg, rd_arena *a, size_t *n)
{
    *n = 0;
    if (cfg->n_tools == 0)
        return NULL;
    rd_plan_step *plan = rd_arena_alloc(a, cfg->n_tools * sizeof *plan);
    if (!plan)
        return NULL;
    for (size_t i = 0; i < cfg->n_tools; i++) {
        const rd_tool_config *t = &cfg->tools[i];
        plan[i] = (rd_plan_step){
            .tool_id = t->id,
            .depends_on = (const char *const *)t->depends_on,
            .n_depends_on = t->n_depends_on,
            .optional = t->optional,
            .has_default = t->has_default,
            .default_value = safe_str(t->default_value),
        };
    }
    *n = cfg->n_tools;
    return plan;
}

static void cascade_event(decide_call *c, const rd_cascade_step *step)
{
    static const rd_event_type TYPES[] = {
        [RD_CASCADE_SKIP] = RD_EV_SKIPPED,
        [RD_CASCADE_USE_DEFAULT] = RD_EV_DEFAULT_USED,
        [RD_CASCADE_ESCALATE] = RD_EV_ESCALATED,
    };
    if (step->action < RD_CASCADE_SKIP || step->action > RD_CASCADE_ESCALATE)
        return;
    rd_trace_event *ev = event_add(&c->events, TYPES[step->action], step->tool_id);
    if (!ev)
        return;
    if (step->action == RD_CASCADE_USE_DEFAULT)
        EVENT_DETAIL(&c->events, ev, txt("Used default value for "), txt(step->tool_id));
    else
        EVENT_DETAIL(&c->events, ev, txt(step->reason));
}

/* A refused admission already carries its own step (admission_cascade). */
static int add_cascade(decide_call *c)
{
    if (!tool_ends_failed(c->out->action) || c->out->n_cascade > 0)
        return RD_OK;
    const rd_plan_step *plan = c->in->plan;
    size_t n_plan = c->in->n_plan;
    if (n_plan == 0) {
        plan = manifest_plan(c->e->policy, c->ctx->arena, &n_plan);
        if (!plan && c->e->policy->n_tools > 0)
            return rd_status_set(c->st, RD_ERR_NOMEM, "cascade: out of memory");
    }
    int rc = rd_step_cascade(c->e->policy, plan, n_plan, c->in->tool_id, c->ctx->arena,
                             &c->out->cascade, &c->out->n_cascade);
    if (rc != RD_OK)
        return rd_status_set(c->st, rc, "cascade: out of memory");
    for (size_t i = 0; i < c->out->n_cascade; i++)
        cascade_event(c, &c->out->cascade[i]);
    return RD_OK;
}

/* ---- Decide without an error: the admission check ---- */

/* A dependent whose dependency's step failed earlier in this turn is not
 * called: the answer repeats the step the turn recorded (ESCALATE for a
 * required tool, FAIL_FAST with SKIP for an optional one). */
static int admission_cascade(decide_call *c, bool *cascaded)
{
    *cascaded = false;
    if (!c->in->turn_id || !c->in->turn_id[0])
        return RD_OK;
    rd_plan_step own;
    const rd_plan_step *step =
        rd_step_of_tool(c->e->policy, c->in->plan, c->in->n_plan, c->in->tool_id, &own);
    if (!step || step->n_depends_on == 0)
        return RD_OK;
    rd_cascade_step *out = rd_arena_alloc(c->ctx->arena, sizeof *out);
    if (!out)
        return rd_status_set(c->st, RD_ERR_NOMEM, "cascade: out of memory");
    int rc = rd_step_turn_cascade(c->e->store, c->in->turn_id, step, c->ctx->now_ms,
                                  c->ctx->arena, out, cascaded, c->st);
    if (rc != RD_OK || !*cascaded)
        return rc;
    c->out->cascade = out;
    c->out->n_cascade = 1;
    c->out->action = out->action == RD_CASCADE_ESCALATE ? RD_ACTION_ESCALATE : RD_ACTION_FAIL_FAST;
    c->out->reason = out->reason;
    return RD_OK;
}

static int decide_admission(decide_call *c)
{
    if (c->budget.known && c->budget.remaining_ms <= 0) {
        act_partial(c, "turn deadline reached", true);
        return RD_OK;
    }
    bool cascaded;
    int rc = admission_cascade(c, &cascaded);
    if (rc != RD_OK || cascaded)
        return rc;
    rd_store_result res;
    rc = admit(c, c->in->tool_id, c->cfg, &res);
    if (rc != RD_OK)
        return rc;
    c->breaker = res.breaker;
    if (res.admission == RD_ADMIT_NO)
        return act_alternative_or_fail_fast(c);
    act_proceed(c, &res);
    return count_request(c, c->in->tool_id, c->cfg);
}

/* ---- Decide with an error: a failed attempt ---- */

/* Steps 2 and 4: claim the outcome id, then count the failure against the
 * breaker (unless this outcome was seen before). */
static int record_failure(decide_call *c, rd_retryability retryability)
{
    rd_store *s = c->e->store;
    const char *tool_id = c->in->tool_id;
    int64_t now = c->ctx->now_ms;
    if (c->in->outcome_id && c->in->outcome_id[0]) {
        int rc = s->ops->claim_outcome(s, c->in->outcome_id, now, &c->out->duplicate, c->st);
        if (rc != RD_OK)
            return rc;
    }
    if (c->out->duplicate) {
        bool found;
        return s->ops->get(s, tool_id, now, &c->breaker, &found, c->st);
    }
    rd_outcome outcome = retryability == RD_PERMANENT ? RD_OUTCOME_PERMANENT_FAILURE
                                                      : RD_OUTCOME_TRANSIENT_FAILURE;
    rd_call_report call = {.outcome = outcome, .permit_token = c->permit_token,
                           .executor_id = safe_str(c->in->executor_id), .latency_ms = -1};
    rd_store_result res;
    int rc = s->ops->record_call(s, tool_id, &c->cfg->breaker, now, &call, &res, c->st);
    if (rc != RD_OK)
        return rc;
    c->breaker = res.breaker;
    c->held_by_quorum = res.evidence.held_by_quorum;
    c->opened_now = res.transition == RD_TRANSITION_OPENED ||
                    res.transition == RD_TRANSITION_REOPENED;
    note_transition(&c->events, tool_id, res.transition);
    return count_request(c, tool_id, c->cfg);
}

static void error_events(decide_call *c, const rd_classification *cl)
{
    rd_trace_event *ev;
    if (cl->kind == RD_KIND_TIMEOUT && (ev = call_event(c, RD_EV_TOOL_TIMEOUT))) {
        event_error(&c->events, ev, c->in->error, cl);
        ev->timeout_ms = c->cfg->timeout_ms;
        timeout_detail(&c->events, ev, c->in->tool_id, c->cfg->timeout_ms);
    }
    if ((ev = call_event(c, RD_EV_TOOL_ERROR))) {
        event_error(&c->events, ev, c->in->error, cl);
        EVENT_DETAIL(&c->events, ev, txt(rd_retryability_name(cl->retryability)),
                     txt(" error ("), txt(rd_category_name(cl->category)), txt(", rule "),
                     txt(safe_str(cl->rule_id)), txt(")"));
    }
}

static int decide_permanent(decide_call *c, const rd_classification *cl)
{
    const char *why = ARENA_JOIN(c->ctx->arena, txt("permanent error: "),
                                 txt(rd_category_name(cl->category)));
    bool found;
    int rc = try_alternative(c, why, &found);
    if (rc == RD_OK && !found)
        act_escalate(c, why);
    return rc;
}

/* The jitter's random draw. A failure reported with an outcome_id draws
 * from that id, so a repeated report (the executor resending after a lost
 * answer) gets the delay of the first answer, as an idempotency key
 * should; distinct ids still spread uniformly. */
static double jitter_draw(decide_call *c)
{
    const char *id = c->in->outcome_id;
    if (!id || !id[0])
        return rd_rng_unit(c->ctx->rng);
    return (double)(rd_hash_text(id, UINT64_C(0x6a09e667f3bcc909)) >> 11) * 0x1.0p-53;
}

/* The delay before the next attempt: backoff with jitter, but never sooner
 * than a retry_after the service asked for. */
static retry_wait retry_delay(decide_call *c, const rd_classification *cl)
{
    int64_t us = rd_backoff_jittered_us(&c->cfg->retry, c->attempt, jitter_draw(c));
    int64_t retry_after_us = rd_ms_to_us(cl->retry_after_ms);
    if (retry_after_us > us)
        return (retry_wait){.ms = cl->retry_after_ms, .us = retry_after_us};
    return (retry_wait){.ms = rd_us_to_ms(us), .us = us};
}

/* The half-open breaker lets the retry through only as its one probe. */
static int retry_as_probe(decide_call *c, retry_wait wait)
{
    rd_store_result res;
    int rc = admit_after(c, c->in->tool_id, c->cfg, wait.ms, &res);
    if (rc != RD_OK)
        return rc;
    c->breaker = res.breaker;
    if (res.admission == RD_ADMIT_NO)
        return act_alternative_or_fail_fast(c);
    if (res.admission == RD_ADMIT_PROBE) {
        c->out->permit_id = format_permit(c->ctx->arena, res.breaker.generation,
                                          res.permit_token);
        rd_trace_event *ev = call_event(c, RD_EV_CIRCUIT_HALF_OPENED);
        if (ev)
            EVENT_DETAIL(&c->events, ev, txt("Circuit breaker half-open for "), txt(c->in->tool_id),
                         txt(": probe permit granted"));
    }
    act_retry(c, wait);
    return RD_OK;
}

/* The fleet's retry budget for this tool: a retry is granted and counted
 * in one store step (a replayed outcome only looks). GIVE_UP when spent. */
static int take_retry(decide_call *c, bool *granted)
{
    rd_budget_result res;
    rd_budget_op op = c->out->duplicate ? RD_BUDGET_PEEK : RD_BUDGET_TAKE_RETRY;
    int rc = budget_op(c, c->in->tool_id, c->cfg, op, &res);
    *granted = rc == RD_OK && res.granted;
    if (rc != RD_OK || res.granted)
        return rc;
    act_give_up(c, rd_arena_printf(c->ctx->arena,
                                   "retry budget exhausted (%llu retries / %llu requests in "
                                   "the last %" PRId64 " ms)",
                                   (unsigned long long)res.retries,
                                   (unsigned long long)res.requests,
                                   c->cfg->retry_budget.window_ms));
    return RD_OK;
}

static int decide_transient(decide_call *c, const rd_classification *cl)
{
    const rd_retry_policy *retry = &c->cfg->retry;
    rd_breaker_status status = rd_breaker_status_at(&c->breaker, c->ctx->now_ms);
    if (status == RD_BREAKER_OPEN)
        return act_alternative_or_fail_fast(c);
    num_text limit;
    if (c->attempt >= retry->max_attempts) {
        act_give_up(c, ARENA_JOIN(c->ctx->arena, txt("max attempts ("),
                                  num(&limit, retry->max_attempts), txt(") reached")));
        return RD_OK;
    }
    retry_wait wait = retry_delay(c, cl);
    /* A timeout reported with at least the tool's whole timeout elapsed
     * ended at the per-tool limit; a shorter one is a quick failure. */
    bool at_tool_timeout = cl->kind == RD_KIND_TIMEOUT && c->in->elapsed_ms >= c->cfg->timeout_ms;
    if (rd_retry_time_exceeded(retry, c->attempt, c->in->elapsed_ms, at_tool_timeout,
                               wait.ms)) {
        act_give_up(c, ARENA_JOIN(c->ctx->arena, txt("max total retry time ("),
                                  num(&limit, retry->max_total_time_ms),
                                  txt(" ms) would be exceeded")));
        return RD_OK;
    }
    if (c->budget.known && wait.ms >= c->budget.remaining_ms) {
        act_partial(c, "turn deadline before retry", false);
        return RD_OK;
    }
    bool granted;
    int rc = take_retry(c, &granted);
    if (rc != RD_OK || !granted)
        return rc;
    if (status == RD_BREAKER_HALF_OPEN)
        return retry_as_probe(c, wait);
    act_retry(c, wait);
    return RD_OK;
}

static int act_on_failure(decide_call *c, const rd_classification *cl)
{
    error_events(c, cl);
    int rc = record_failure(c, cl->retryability);
    if (rc != RD_OK)
        return rc;
    if (c->budget.known && c->budget.remaining_ms <= 0) {
        act_partial(c, "turn deadline reached", false);
        return RD_OK;
    }
    if (cl->retryability == RD_PERMANENT)
        return decide_permanent(c, cl);
    return decide_transient(c, cl);
}

/* The text for the model goes with every answer that stops using the
 * tool. A RETRY answer leaves it out: the executor tries again, so the
 * model does not hear of this failure, and the text's "cannot be used for
 * this request" would be false. */
static int decide_failure(decide_call *c)
{
    rd_classify_result *cr = &c->out->classification;
    int rc = classify_error(c->e, manifest_of(c->e, c->cfg), c->in->tool_id, c->in->error,
                            c->ctx, &cr->classification, c->signature, &c->signature_tracked,
                            c->st);
    if (rc != RD_OK)
        return rc;
    c->out->has_classification = true;
    if ((rc = act_on_failure(c, &cr->classification)) != RD_OK)
        return rc;
    if (c->out->action == RD_ACTION_RETRY)
        return RD_OK;
    if ((rc = add_llm_message(c->tool, c->in->error, c->ctx, cr, c->st)) != RD_OK ||
        c->out->action != RD_ACTION_USE_ALTERNATIVE)
        return rc;
    cr->llm_message = rd_alternative_message(c->ctx->arena, cr->llm_message, cr->llm_message_len,
                                             c->out->alternative_tool_id, &cr->llm_message_len);
    if (!cr->llm_message)
        return rd_status_set(c->st, RD_ERR_NOMEM, "llm_message: out of memory");
    return RD_OK;
}

/* An admission that does not let the tool run still tells the model why
 * (refusal.h): a classification that says the tool did not run, with the
 * text, and nothing else to classify. */
static int admission_refusal_text(decide_call *c)
{
    if (c->out->action == RD_ACTION_PROCEED)
        return RD_OK;
    rd_classify_result *cr = &c->out->classification;
    cr->classification = (rd_classification){.executed = false, .suggestion = "", .rule_id = ""};
    cr->llm_message = rd_refusal_message(c->ctx->arena, c->in->tool_id, c->out->action,
                                         c->out->reason, c->out->alternative_tool_id,
                                         &cr->llm_message_len);
    if (!cr->llm_message)
        return rd_status_set(c->st, RD_ERR_NOMEM, "llm_message: out of memory");
    c->out->has_classification = true;
    return RD_OK;
}

static int validate_decide(const rd_engine *e, const rd_decide_input *in, size_t *tool_len,
                           rd_status *st)
{
    int rc = check_tool(e, in->tool_id, tool_len, st);
    if (rc == RD_OK)
        rc = check_id("turn_id", in->turn_id, false, st);
    if (rc == RD_OK)
        rc = check_id("outcome_id", in->outcome_id, false, st);
    if (rc == RD_OK && in->elapsed_ms < 0)
        rc = rd_status_set(st, RD_ERR_INVALID, "elapsed_ms: must not be negative");
    if (rc == RD_OK && in->n_plan > RD_PLAN_MAX)
        rc = rd_status_set(st, RD_ERR_INVALID, "plan: more than %d steps", RD_PLAN_MAX);
    return rc;
}

/* ---- learning links ---- */

/* Whose retry this is: the turn, else the executor; "" = nobody to follow. */
static const char *learning_link(const char *turn_id, const char *executor_id)
{
    if (turn_id && turn_id[0])
        return turn_id;
    return safe_str(executor_id);
}

/* After a failed attempt: the retry in flight (if any) failed again, and
 * a granted RETRY now waits on this error's signature. */
static int learn_after_failure(decide_call *c)
{
    const rd_engine *e = c->e;
    const char *link = learning_link(c->in->turn_id, c->in->executor_id);
    if (!e->policy->learning.enabled || !link[0] || c->out->duplicate)
        return RD_OK;
    rd_learn_settle settle = c->attempt > 1 ? RD_LEARN_FAILED : RD_LEARN_KEEP;
    bool follow = c->signature_tracked && c->out->action == RD_ACTION_RETRY;
    if (settle == RD_LEARN_KEEP && !follow)
        return RD_OK;
    return e->store->ops->learn_link(e->store, c->in->tool_id, link,
                                     follow ? c->signature->id : "", settle, c->ctx->now_ms,
                                     c->st);
}

int rd_engine_decide(const rd_engine *e, const rd_decide_input *in, const rd_call_ctx *ctx,
                     rd_decision *out, rd_status *st)
{
    *out = (rd_decision){.alternative_tool_id = "", .permit_id = "", .reason = ""};
    rd_signature signature; /* outside the call state, which is zeroed: it is 0.5 KiB */
    decide_call c = {
        .e = e, .in = in, .ctx = ctx, .st = st, .out = out,
        .events = {.arena = ctx->arena, .text_checked = ctx->text_checked},
        .tool = {in->tool_id, 0},
        .attempt = in->attempt > 0 ? in->attempt : 1,
        .signature = &signature,
    };
    int rc = validate_decide(e, in, &c.tool.len, st);
    if (rc == RD_OK)
        rc = parse_permit(in->permit_id, &c.permit_token, st);
    if (rc != RD_OK)
        return rc;
    c.cfg = rd_policy_tool_or_defaults(e->policy, in->tool_id);
    rd_breaker_init(&c.breaker, ctx->now_ms);
    out->timeout_ms = c.cfg->timeout_ms;

    if ((rc = turn_budget_get(e, in, ctx->now_ms, &c.budget, st)) != RD_OK)
        return rc;
    rc = in->error ? decide_failure(&c) : decide_admission(&c);
    if (rc == RD_OK && in->error)
        rc = learn_after_failure(&c);
    if (rc == RD_OK && !in->error)
        rc = admission_refusal_text(&c);
    if (rc == RD_OK)
        rc = add_cascade(&c);
    if (rc == RD_OK && (c.events.out_of_memory || !out->reason))
        rc = rd_status_set(st, RD_ERR_NOMEM, "decision: out of memory");
    if (rc != RD_OK)
        return rc;

    events_finish(&c.events, out->action, rd_breaker_status_at(&c.breaker, ctx->now_ms),
                  ctx->now_ms);
    fill_view(&out->breaker, in->tool_id, &c.breaker, c.cfg, ctx->now_ms);
    out->trace = c.events.items;
    out->n_trace = c.events.n;
    if (out->duplicate)
        return RD_OK; /* a replay records nothing, not even trace events */
    return events_to_turn(e, in->turn_id, &c.events, ctx->now_ms, st);
}

/* ---- RecordOutcome ---- */

static void success_events(event_list *l, const rd_outcome_input *in)
{
    rd_trace_event *ev;
    if (in->attempt > 1) {
        num_text attempt;
        if ((ev = event_add(l, RD_EV_RETRY_SUCCEEDED, in->tool_id)))
            EVENT_DETAIL(l, ev, txt(in->tool_id), txt(" succeeded on retry (attempt "),
                         num(&attempt, in->attempt), txt(")"));
    } else if ((ev = event_add(l, RD_EV_TOOL_SUCCEEDED, in->tool_id))) {
        EVENT_DETAIL(l, ev, txt(in->tool_id), txt(" succeeded"));
    }
    if (ev) {
        ev->executed = true;
        ev->retry_count = in->attempt > 1 ? in->attempt - 1 : 0;
    }
}

static void failure_events(event_list *l, const rd_outcome_input *in,
                           const rd_classification *cl, int64_t timeout_ms)
{
    rd_trace_event *ev;
    uint32_t retries = in->attempt > 1 ? in->attempt - 1 : 0;
    if (cl->kind == RD_KIND_TIMEOUT && (ev = event_add(l, RD_EV_TOOL_TIMEOUT, in->tool_id))) {
        event_error(l, ev, in->error, cl);
        ev->timeout_ms = timeout_ms;
        ev->retry_count = retries;
        timeout_detail(l, ev, in->tool_id, timeout_ms);
    }
    if ((ev = event_add(l, RD_EV_TOOL_FAILED, in->tool_id))) {
        event_error(l, ev, in->error, cl);
        ev->retry_count = retries;
        EVENT_DETAIL(l, ev, txt(in->tool_id), txt(" failed: "),
                     txt(rd_retryability_name(cl->retryability)), txt(" error ("),
                     txt(rd_category_name(cl->category)), txt(")"));
    }
}

static rd_outcome outcome_of(const rd_outcome_input *in, const rd_classification *cl)
{
    if (in->success)
        return RD_OUTCOME_SUCCESS;
    return cl->retryability == RD_PERMANENT ? RD_OUTCOME_PERMANENT_FAILURE
                                            : RD_OUTCOME_TRANSIENT_FAILURE;
}

static int validate_outcome(const rd_engine *e, const rd_outcome_input *in, rd_status *st)
{
    int rc = check_tool(e, in->tool_id, NULL, st);
    if (rc == RD_OK)
        rc = check_id("turn_id", in->turn_id, false, st);
    if (rc == RD_OK)
        rc = check_id("outcome_id", in->outcome_id, false, st);
    if (rc == RD_OK && in->latency_ms < 0)
        rc = rd_status_set(st, RD_ERR_INVALID, "latency_ms: must not be negative");
    return rc;
}

/* Classifies a reported failure; a failure without detail is transient. */
static int classify_outcome(const rd_engine *e, const rd_outcome_input *in,
                            const rd_call_ctx *ctx, rd_classification *cl, rd_status *st)
{
    if (in->success) {
        *cl = (rd_classification){.suggestion = "", .rule_id = ""};
        return RD_OK;
    }
    if (!in->error) {
        unspecified_failure(e->policy, cl);
        return RD_OK;
    }
    return classify_error(e, rd_policy_find_tool(e->policy, in->tool_id), in->tool_id, in->error,
                          ctx, cl, NULL, NULL, st);
}

/* Answers a replayed outcome id: nothing recorded, the current view. */
static int outcome_replay_view(const rd_engine *e, const rd_outcome_input *in,
                               const rd_tool_config *cfg, int64_t now_ms,
                               rd_outcome_result *out, rd_status *st)
{
    rd_breaker b;
    bool found;
    int rc = e->store->ops->get(e->store, in->tool_id, now_ms, &b, &found, st);
    if (rc == RD_OK)
        fill_view(&out->breaker, in->tool_id, &b, cfg, now_ms);
    return rc;
}

/* The events of one reported outcome, appended to its turn. */
static int outcome_trace(const rd_engine *e, const rd_outcome_input *in,
                         const rd_classification *cl, const rd_tool_config *cfg,
                         const rd_store_result *res, const rd_call_ctx *ctx,
                         rd_outcome_result *out, rd_status *st)
{
    event_list events = {.arena = ctx->arena, .text_checked = ctx->text_checked};
    if (in->success)
        success_events(&events, in);
    else
        failure_events(&events, in, cl, cfg->timeout_ms);
    note_transition(&events, in->tool_id, res->transition);
    if (events.out_of_memory)
        return rd_status_set(st, RD_ERR_NOMEM, "trace: out of memory");
    events_finish(&events, RD_ACTION_UNSPECIFIED,
                  rd_breaker_status_at(&res->breaker, ctx->now_ms), ctx->now_ms);
    out->trace = events.items;
    out->n_trace = events.n;
    return events_to_turn(e, in->turn_id, &events, ctx->now_ms, st);
}

/* A retry's outcome settles the signature it was linked to. */
static int learn_after_outcome(const rd_engine *e, const rd_outcome_input *in, int64_t now_ms,
                               rd_status *st)
{
    const char *link = learning_link(in->turn_id, in->executor_id);
    if (!e->policy->learning.enabled || !link[0] || in->attempt <= 1)
        return RD_OK;
    rd_learn_settle settle = in->success ? RD_LEARN_SUCCEEDED : RD_LEARN_FAILED;
    return e->store->ops->learn_link(e->store, in->tool_id, link, "", settle, now_ms, st);
}

int rd_engine_record_outcome(const rd_engine *e, const rd_outcome_input *in,
                             const rd_call_ctx *ctx, rd_outcome_result *out, rd_status *st)
{
    *out = (rd_outcome_result){0};
    uint64_t token;
    int rc = validate_outcome(e, in, st);
    if (rc == RD_OK)
        rc = parse_permit(in->permit_id, &token, st);
    if (rc != RD_OK)
        return rc;
    const rd_tool_config *cfg = rd_policy_tool_or_defaults(e->policy, in->tool_id);
    rd_store *s = e->store;
    int64_t now = ctx->now_ms;

    if (in->outcome_id && in->outcome_id[0] &&
        (rc = s->ops->claim_outcome(s, in->outcome_id, now, &out->duplicate, st)) != RD_OK)
        return rc;
    if (out->duplicate)
        return outcome_replay_view(e, in, cfg, now, out, st);

    rd_classification cl;
    if ((rc = classify_outcome(e, in, ctx, &cl, st)) != RD_OK)
        return rc;
    rd_call_report call = {.outcome = outcome_of(in, &cl), .permit_token = token,
                           .executor_id = safe_str(in->executor_id),
                           .latency_ms = in->latency_ms};
    rd_store_result res;
    rc = s->ops->record_call(s, in->tool_id, &cfg->breaker, now, &call, &res, st);
    if (rc == RD_OK)
        rc = learn_after_outcome(e, in, now, st);
    if (rc != RD_OK)
        return rc;
    fill_view(&out->breaker, in->tool_id, &res.breaker, cfg, now);
    out->transition = res.transition;
    out->has_classification = !in->success;
    out->classification = cl;
    return outcome_trace(e, in, &cl, cfg, &res, ctx, out, st);
}

/* ---- GetBreakerState ---- */

typedef struct view_list {
    const rd_engine *e;
    const rd_call_ctx *ctx;
    rd_breaker_view *items;
    size_t n, cap;
    bool out_of_memory;
} view_list;

static rd_breaker_view *view_add(view_list *l)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 16;
        /* uninitialized: fill_view sets every field of each view added */
        rd_breaker_view *items = rd_arena_alloc_uninit(l->ctx->arena, cap * sizeof *items);
        if (!items)
            return NULL;
        if (l->n)
            memcpy(items, l->items, l->n * sizeof *items);
        l->items = items;
        l->cap = cap;
    }
    return &l->items[l->n++];
}

/* Adds one tool's view; the tool id is copied (the store's may not last). */
static bool view_push(view_list *l, const char *tool_id, const rd_breaker *b)
{
    const char *id = rd_arena_strdup(l->ctx->arena, tool_id);
    rd_breaker_view *v = id ? view_add(l) : NULL;
    if (!v) {
        l->out_of_memory = true;
        return false;
    }
    fill_view(v, id, b, rd_policy_tool_or_defaults(l->e->policy, id), l->ctx->now_ms);
    return true;
}

static int visit_tracked(void *ctx, const char *tool_id, const rd_breaker *b)
{
    return view_push(ctx, tool_id, b) ? 0 : 1;
}

static int views_named(view_list *l, const char *const *tool_ids, size_t n, rd_status *st)
{
    rd_store *s = l->e->store;
    for (size_t i = 0; i < n; i++) {
        int rc = check_id("tool_ids", tool_ids[i], true, st);
        if (rc != RD_OK)
            return rc;
        rd_breaker b;
        bool found;
        if ((rc = s->ops->get(s, tool_ids[i], l->ctx->now_ms, &b, &found, st)) != RD_OK)
            return rc;
        if (!view_push(l, tool_ids[i], &b))
            break;
    }
    return RD_OK;
}

int rd_engine_breakers(const rd_engine *e, const char *const *tool_ids, size_t n_tool_ids,
                       const rd_call_ctx *ctx, rd_breaker_view **out, size_t *n_out,
                       rd_status *st)
{
    *out = NULL;
    *n_out = 0;
    view_list l = {.e = e, .ctx = ctx};
    int rc = n_tool_ids > 0
                 ? views_named(&l, tool_ids, n_tool_ids, st)
                 : e->store->ops->list(e->store, ctx->now_ms, visit_tracked, &l, st);
    if (rc != RD_OK)
        return rc;
    if (l.out_of_memory)
        return rd_status_set(st, RD_ERR_NOMEM, "breakers: out of memory");
    *out = l.items;
    *n_out = l.n;
    return RD_OK;
}

/* ---- ForceBreaker ---- */

#define FORCE_TTL_MAX_MS (30LL * 24 * 3600 * 1000)

int rd_engine_force(const rd_engine *e, const char *tool_id, rd_force_mode mode, int64_t ttl_ms,
                    const rd_call_ctx *ctx, rd_breaker_view *out, rd_status *st)
{
    int rc = check_tool(e, tool_id, NULL, st);
    if (rc != RD_OK)
        return rc;
    if (mode < RD_FORCE_OPEN || mode > RD_FORCE_RELEASE)
        return rd_status_set(st, RD_ERR_INVALID, "mode: required (open, closed, reset, release)");
    if (ttl_ms < 0 || ttl_ms > FORCE_TTL_MAX_MS)
        return rd_status_set(st, RD_ERR_INVALID, "ttl_ms: must be 0..%lld",
                             (long long)FORCE_TTL_MAX_MS);
    rd_store_result res;
    rc = e->store->ops->force(e->store, tool_id, mode, ctx->now_ms, ttl_ms, &res, st);
    if (rc != RD_OK)
        return rc;
    fill_view(out, tool_id, &res.breaker, rd_policy_tool_or_defaults(e->policy, tool_id),
              ctx->now_ms);
    return RD_OK;
}

/* ---- GetTurnTrace ---- */

int rd_engine_turn_trace(const rd_engine *e, const char *turn_id, const rd_call_ctx *ctx,
                         rd_turn_trace *out, rd_status *st)
{
    *out = (rd_turn_trace){0};
    int rc = check_id("turn_id", turn_id, true, st);
    if (rc != RD_OK)
        return rc;
    rd_trace_event *events = NULL; /* malloc'd by the store; freed here */
    size_t n = 0;
    int64_t started_at_ms;
    rc = e->store->ops->turn_read(e->store, turn_id, ctx->now_ms, &events, &n,
                                  &started_at_ms, st);
    if (rc == RD_ERR_NOT_FOUND)
        return rd_status_set(st, RD_ERR_NOT_FOUND, "turn_id: unknown turn '%s'", turn_id);
    if (rc != RD_OK)
        return rc;
    if (n > 0) {
        out->events = rd_arena_alloc(ctx->arena, n * sizeof *events);
        if (out->events)
            memcpy(out->events, events, n * sizeof *events);
    }
    free(events);
    if (n > 0 && !out->events)
        return rd_status_set(st, RD_ERR_NOMEM, "turn trace: out of memory");
    out->n_events = n;
    rc = rd_turn_summarize(out->events, n, ctx->arena, &out->summary);
    if (rc != RD_OK)
        return rd_status_set(st, rc, "turn trace: out of memory");
    return RD_OK;
}
