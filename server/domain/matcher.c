/* Matching an error against the compiled rules (matcher_build.c compiles
 * them; matcher.h says what is built and why): the conditions of one rule,
 * the scan of a message, and the choice of the winning rule.
 *
 * The automaton is a full DFA over byte classes: every byte that occurs in
 * some pattern (ASCII letters folded to lower case) gets a class, all other
 * bytes share class 0, and each state has one row of next states. A row
 * entry is the next state's row offset (state * n_classes), with the top
 * bit set when that state ends at least one pattern, so the scan loop is
 * one table load and one bit test per byte. */
#include "domain/matcher.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "domain/err.h"
#include "domain/matcher_internal.h"

/* ---- bytes (fold() is in matcher_internal.h) ---- */

/* A "token" byte for boundary checks: [A-Za-z0-9_]. */
static inline bool is_word(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

static bool str_eq_fold(const char *a, const char *b)
{
    const unsigned char *x = (const unsigned char *)a, *y = (const unsigned char *)b;
    for (; *x && *y; x++, y++)
        if (fold(*x) != fold(*y))
            return false;
    return *x == *y;
}

static inline const char *or_empty(const char *s) { return s ? s : ""; }

/* ---- conditions, one rule at a time (the reference semantics) ---- */

static bool match_ranges(const rd_int_range *r, size_t n, int32_t value)
{
    if (n == 0)
        return true;
    if (value == 0) /* 0 = not given */
        return false;
    for (size_t i = 0; i < n; i++)
        if (value >= r[i].lo && value <= r[i].hi)
            return true;
    return false;
}

static bool match_kinds(const rd_error_kind *kinds, size_t n, rd_error_kind kind)
{
    if (n == 0)
        return true;
    for (size_t i = 0; i < n; i++)
        if (kind != RD_KIND_UNSPECIFIED && kinds[i] == kind)
            return true;
    return false;
}

static bool match_sources(const rd_error_source *sources, size_t n, rd_error_source source)
{
    if (n == 0)
        return true;
    for (size_t i = 0; i < n; i++)
        if (source != RD_SOURCE_UNSPECIFIED && sources[i] == source)
            return true;
    return false;
}

/* Tool ids are identifiers: compared exactly; "web_*" is a prefix. */
static bool tool_matches(const char *entry, const char *tool_id)
{
    if (!entry)
        return false;
    size_t n = strlen(entry);
    if (n > 0 && entry[n - 1] == '*')
        return strncmp(entry, tool_id, n - 1) == 0;
    return strcmp(entry, tool_id) == 0;
}

static bool match_tools(char *const *tools, size_t n, const char *tool_id)
{
    if (n == 0)
        return true;
    for (size_t i = 0; i < n; i++)
        if (tool_matches(tools[i], tool_id))
            return true;
    return false;
}

static bool match_codes(char *const *codes, size_t n, const char *code)
{
    if (n == 0)
        return true;
    if (!*code)
        return false;
    for (size_t i = 0; i < n; i++)
        if (codes[i] && str_eq_fold(codes[i], code))
            return true;
    return false;
}

/* "ConnectTimeout" matches "requests.exceptions.ConnectTimeout". An entry
 * with dots can only match exactly, since a last dotted part has none. */
static bool exception_type_matches(const char *entry, const char *given)
{
    if (!entry || !*entry)
        return false;
    if (str_eq_fold(entry, given))
        return true;
    const char *last = strrchr(given, '.');
    return last && str_eq_fold(entry, last + 1);
}

static bool match_exception_types(char *const *types, size_t n, const char *given)
{
    if (n == 0)
        return true;
    if (!*given)
        return false;
    for (size_t i = 0; i < n; i++)
        if (exception_type_matches(types[i], given))
            return true;
    return false;
}

rd_tier rd_matcher_rule_tier(const rd_matcher *m, size_t rule)
{
    return m && rule < m->n_rules ? (rd_tier)m->tier[rule] : RD_TIER_DEFAULT;
}

/* A loop rather than strncmp: every answer asks whether its rule is weak,
 * and most ids differ from the prefix at their first byte. */
static bool id_starts_with(const char *id, const char *prefix)
{
    for (; *prefix; id++, prefix++)
        if (*id != *prefix)
            return false;
    return true;
}

bool rd_rule_is_generic(const rd_rule *r)
{
    return r && r->id && id_starts_with(r->id, RD_GENERIC_PREFIX);
}

bool rd_rule_is_weak(const rd_rule *r)
{
    return r && r->id && id_starts_with(r->id, RD_WEAK_PREFIX);
}

bool rd_match_is_structured(const rd_match *m)
{
    return m->n_patterns == 0 || m->n_http_status > 0 || m->n_grpc_code > 0 || m->n_codes > 0
        || m->n_exception_types > 0 || m->n_kinds > 0;
}

bool rd_match_fields_hold(const rd_match *m, const char *tool_id, const rd_tool_error *err)
{
    if (!m || !err)
        return false;
    return match_ranges(m->http_status, m->n_http_status, err->http_status)
        && match_ranges(m->grpc_code, m->n_grpc_code, err->grpc_code)
        && match_kinds(m->kinds, m->n_kinds, err->kind)
        && match_sources(m->sources, m->n_sources, err->source)
        && match_tools(m->tools, m->n_tools, or_empty(tool_id))
        && match_codes(m->codes, m->n_codes, or_empty(err->code))
        && match_exception_types(m->exception_types, m->n_exception_types,
                                 or_empty(err->exception_type));
}

/* Whether the stored lower-case name of n bytes is given[0..n) folded,
 * eight bytes at a time. */
static bool equal_folded(const char *stored, const char *given, size_t n)
{
    uint64_t a, b;
    size_t i = 0;
    for (; n - i >= 8; i += 8) {
        memcpy(&a, stored + i, sizeof a);
        memcpy(&b, given + i, sizeof b);
        if (a != fold8(b))
            return false;
    }
    return i == n || rd_hash_last_word((const unsigned char *)stored, n) ==
                         fold8(rd_hash_last_word((const unsigned char *)given, n));
}

/* The run of entries equal to given[0..n), case-insensitively. */
static name_run find_name(const name_index *ix, const char *given, size_t n)
{
    uint64_t h = name_hash(given, n);
    for (size_t i = h & ix->mask;; i = (i + 1) & ix->mask) {
        const name_slot *s = &ix->slots[i];
        if (s->n == 0)
            return (name_run){NULL, 0};
        if (s->hash == h && s->len == n && equal_folded(ix->v[s->at].name, given, n))
            return (name_run){ix->v + s->at, s->n};
    }
}

static bool run_has_rule(name_run r, size_t rule)
{
    size_t lo = 0, hi = r.n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (r.v[mid].rule < rule)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < r.n && r.v[lo].rule == rule;
}

/* ---- scanning ---- */

static bool boundaries_hold(const unsigned char *msg, size_t len, size_t start, size_t end,
                            const ac_pattern *p)
{
    if (p->boundary_start && start > 0 && is_word(msg[start - 1]))
        return false;
    if (p->boundary_end && end < len && is_word(msg[end]))
        return false;
    return true;
}

/* Every pattern ending at msg[end - 1] in state row `row` that starts
 * before `starts_before` (SIZE_MAX: every one). */
static size_t report_hits(const ac_automaton *a, const unsigned char *msg, size_t len, size_t end,
                          uint32_t row, size_t starts_before, size_t bound,
                          rd_matcher_visit visit, void *ctx)
{
    const state_outputs *o = &a->state_out[row / a->n_classes];
    for (uint32_t k = 0; k < o->n; k++) {
        const ac_pattern *p = &a->patterns[a->outputs[o->at + k]];
        if (end - p->len >= starts_before || !boundaries_hold(msg, len, end - p->len, end, p))
            continue;
        const uint32_t *rules = a->pattern_rules + p->rules_at;
        for (uint32_t r = 0; r < p->n_rules && rules[r] < bound; r++)
            bound = visit(ctx, rules[r]);
    }
    return bound;
}

/* The automaton's step from row on msg[at], reporting the patterns that
 * end there (those starting before starts_before); the next row. */
static inline uint32_t step(const ac_automaton *a, uint32_t row, const unsigned char *msg,
                            size_t len, size_t at, size_t starts_before, size_t *bound,
                            rd_matcher_visit visit, void *ctx)
{
    uint32_t next = a->delta[row + a->byte_class[msg[at]]];
    if (next & HAS_OUTPUT) {
        next &= ~HAS_OUTPUT;
        *bound = report_hits(a, msg, len, at + 1, next, starts_before, *bound, visit, ctx);
    }
    return next;
}

static inline uint32_t step_quietly(const ac_automaton *a, uint32_t row, unsigned char c)
{
    return a->delta[row + a->byte_class[c]] & ~HAS_OUTPUT;
}

/* Bytes a later walk reads before its part of the text (scan_in_walks). */
#define LEAD_IN 8
/* From these lengths on a text is read by two, three, four walks. */
#define TWO_WALKS_FROM 32
#define THREE_WALKS_FROM 72
#define FOUR_WALKS_FROM 128
#define MAX_WALKS 4

/* Each step waits for the table read of the one before, so one walk leaves
 * the processor mostly idle; k walks run side by side, each over a part of
 * the text. Walk 0 reads [0, first). Walk j reads part j from the root,
 * starting LEAD_IN bytes before it: its state at the part's first byte is
 * exact unless the text there is inside a longer pattern's first bytes, and
 * even then it misses only the occurrences starting before its first byte.
 * So where the exact state at a part's first byte (the walk before's last,
 * or that walk's own fix-up) differs, it is walked on through the part,
 * reporting only those occurrences, until the two states meet: each
 * occurrence is reported once. k is a constant where this is inlined. */
static inline size_t scan_in_walks(const ac_automaton *a, const unsigned char *s, size_t len,
                                   size_t k, size_t bound, rd_matcher_visit visit, void *ctx)
{
    size_t seg = (len - LEAD_IN) / k, first = len - (k - 1) * seg;
    size_t begin[MAX_WALKS];
    uint32_t row[MAX_WALKS] = {0}, at_part[MAX_WALKS];
    for (size_t j = 1; j < k; j++)
        begin[j] = first + (j - 1) * seg - LEAD_IN;
    size_t t = 0;
    for (; t < LEAD_IN; t++) {
        row[0] = step(a, row[0], s, len, t, SIZE_MAX, &bound, visit, ctx);
        for (size_t j = 1; j < k; j++)
            row[j] = step_quietly(a, row[j], s[begin[j] + t]);
    }
    for (size_t j = 1; j < k; j++)
        at_part[j] = row[j];
    for (; t < LEAD_IN + seg; t++) {
        row[0] = step(a, row[0], s, len, t, SIZE_MAX, &bound, visit, ctx);
        for (size_t j = 1; j < k; j++)
            row[j] = step(a, row[j], s, len, begin[j] + t, SIZE_MAX, &bound, visit, ctx);
    }
    for (; t < first; t++)
        row[0] = step(a, row[0], s, len, t, SIZE_MAX, &bound, visit, ctx);
    uint32_t exact = row[0];
    for (size_t j = 1; j < k; j++) {
        uint32_t other = at_part[j];
        for (size_t i = begin[j] + LEAD_IN; i < begin[j] + LEAD_IN + seg && exact != other; i++) {
            exact = step(a, exact, s, len, i, begin[j], &bound, visit, ctx);
            other = step_quietly(a, other, s[i]);
        }
        if (exact == other)
            exact = row[j];
    }
    return bound;
}

static size_t scan_automaton(const ac_automaton *a, const unsigned char *s, size_t len,
                             size_t bound, rd_matcher_visit visit, void *ctx)
{
    if (a->n_patterns == 0)
        return bound;
    if (len >= FOUR_WALKS_FROM)
        return scan_in_walks(a, s, len, 4, bound, visit, ctx);
    if (len >= THREE_WALKS_FROM)
        return scan_in_walks(a, s, len, 3, bound, visit, ctx);
    if (len >= TWO_WALKS_FROM)
        return scan_in_walks(a, s, len, 2, bound, visit, ctx);
    uint32_t row = 0;
    for (size_t i = 0; i < len; i++)
        row = step(a, row, s, len, i, SIZE_MAX, &bound, visit, ctx);
    return bound;
}

void rd_matcher_scan(const rd_matcher *m, const char *msg, size_t len, size_t bound,
                     rd_matcher_visit visit, void *ctx)
{
    if (!m || !msg)
        return;
    const unsigned char *s = (const unsigned char *)msg;
    bound = scan_automaton(&m->text, s, len, bound, visit, ctx);
    scan_automaton(&m->late, s, len, bound, visit, ctx);
}

/* ---- choosing the winner ---- */

typedef struct eval {
    const rd_matcher *m;
    const rd_ruleset *rs;
    const char *tool_id;
    const rd_tool_error *err;
    unsigned present;             /* NEED_* bits the error gives */
    name_run code, exception_full, exception_last;
    size_t best_mixed, best_message;
} eval;

static unsigned present_fields(const rd_tool_error *err)
{
    return (err->http_status ? NEED_HTTP : 0u) | (err->grpc_code ? NEED_GRPC : 0u)
         | (err->code && *err->code ? NEED_CODE : 0u)
         | (err->exception_type && *err->exception_type ? NEED_EXCEPTION : 0u)
         | (err->kind != RD_KIND_UNSPECIFIED ? NEED_KIND : 0u)
         | (err->source != RD_SOURCE_UNSPECIFIED ? NEED_SOURCE : 0u);
}

static void look_up_names(eval *x)
{
    if (x->present & NEED_CODE)
        x->code = find_name(&x->m->codes, x->err->code, strlen(x->err->code));
    if (x->present & NEED_EXCEPTION) {
        const char *given = x->err->exception_type;
        x->exception_full = find_name(&x->m->exception_types, given, strlen(given));
        const char *last = strrchr(given, '.');
        if (last)
            x->exception_last = find_name(&x->m->exception_types, last + 1, strlen(last + 1));
    }
}

/* rd_match_fields_hold for rule i, with the bit test and the name runs in
 * place of string compares. */
static bool fields_hold(const eval *x, size_t i)
{
    if (x->m->need[i] & ~x->present)
        return false;
    const rd_match *w = &x->rs->rules[i].when;
    return match_ranges(w->http_status, w->n_http_status, x->err->http_status)
        && match_ranges(w->grpc_code, w->n_grpc_code, x->err->grpc_code)
        && match_kinds(w->kinds, w->n_kinds, x->err->kind)
        && match_sources(w->sources, w->n_sources, x->err->source)
        && match_tools(w->tools, w->n_tools, or_empty(x->tool_id))
        && (w->n_codes == 0 || run_has_rule(x->code, i))
        && (w->n_exception_types == 0 || run_has_rule(x->exception_full, i)
            || run_has_rule(x->exception_last, i));
}

static size_t visit_rule(void *ctx, size_t rule)
{
    eval *x = ctx;
    size_t *best = x->m->pass[rule] == PASS_MIXED ? &x->best_mixed : &x->best_message;
    if (rule < *best && fields_hold(x, rule))
        *best = rule;
    /* Rules past both bests can no longer change the answer. */
    return x->best_mixed > x->best_message ? x->best_mixed : x->best_message;
}

/* A cheap first test of rule i: the error's HTTP status (0 when absent)
 * lies in the rule's span. Most rules of a long list fail here. */
static inline bool http_in_span(const eval *x, size_t i)
{
    const rd_int_range *span = &x->m->http_span[i];
    return x->err->http_status >= span->lo && x->err->http_status <= span->hi;
}

/* The rule a name run holds at position at, or NONE past its end. */
static inline size_t run_rule(name_run r, size_t at)
{
    return at < r.n ? r.v[at].rule : NONE;
}

/* The first rule of pass p before `limit` whose conditions hold. Its
 * candidates, each in rule order: the pass's rules naming no code or
 * exception type that the error's fields can satisfy (lists[present]),
 * and the rules holding the error's code or exception type (its name
 * runs, which hold rules of every pass). They are walked merged, lowest
 * rule first, each rule once; fields_hold has the last word. An error
 * with a code walks the few rules of that code instead of every rule on
 * codes. */
static size_t first_before(const eval *x, const rule_list *lists, rule_pass p, size_t limit)
{
    const rule_list *l = &lists[x->present];
    size_t k = 0, c = 0, ef = 0, el = 0;
    for (;;) {
        size_t next = k < l->n ? l->v[k] : NONE;
        size_t rc = run_rule(x->code, c), rf = run_rule(x->exception_full, ef),
               rl = run_rule(x->exception_last, el);
        if (rc < next)
            next = rc;
        if (rf < next)
            next = rf;
        if (rl < next)
            next = rl;
        if (next == NONE || next >= limit)
            return NONE;
        k += next == (k < l->n ? l->v[k] : NONE);
        c += rc == next;
        ef += rf == next;
        el += rl == next;
        if (x->m->pass[next] == p && http_in_span(x, next) && fields_hold(x, next))
            return next;
    }
}

static size_t first_in(const eval *x, const rule_list *lists, rule_pass p)
{
    return first_before(x, lists, p, NONE);
}

/* Whether a mixed rule before `limit` needs its patterns looked for. */
static bool mixed_rule_applies(const eval *x, size_t limit)
{
    return first_before(x, x->m->mixed, PASS_MIXED, limit) != NONE;
}

/* An evaluation of err against the rules, with its codes and types looked
 * up; false when the matcher was not built from rs. */
static bool begin_eval(eval *x, const rd_matcher *m, const rd_ruleset *rs, const char *tool_id,
                       const rd_tool_error *err)
{
    if (!m || !rs || !err || m->n_rules != rs->n_rules)
        return false;
    *x = (eval){.m = m, .rs = rs, .tool_id = tool_id, .err = err,
                .present = present_fields(err), .best_mixed = NONE, .best_message = NONE};
    look_up_names(x);
    return true;
}

const rd_rule *rd_matcher_structured_winner(const rd_matcher *m, const rd_ruleset *rs,
                                            const char *tool_id, const rd_tool_error *err)
{
    eval x;
    if (!begin_eval(&x, m, rs, tool_id, err))
        return NULL;
    size_t structured = first_in(&x, m->structured, PASS_STRUCTURED);
    if (err->message && mixed_rule_applies(&x, structured)) /* mixed rules are never late */
        scan_automaton(&m->text, (const unsigned char *)err->message, err->message_len,
                       structured, visit_rule, &x);
    size_t win = x.best_mixed < structured ? x.best_mixed : structured;
    return win == NONE ? NULL : &rs->rules[win];
}

const rd_rule *rd_matcher_winner(const rd_matcher *m, const rd_ruleset *rs, const char *tool_id,
                                 const rd_tool_error *err)
{
    eval x;
    if (!begin_eval(&x, m, rs, tool_id, err))
        return NULL;
    size_t structured = first_in(&x, m->structured, PASS_STRUCTURED);
    if (structured != NONE && !mixed_rule_applies(&x, structured))
        return &rs->rules[structured]; /* settled by fields: the text is not read */
    const unsigned char *msg = (const unsigned char *)err->message;
    if (msg)
        scan_automaton(&m->text, msg, err->message_len, m->n_rules, visit_rule, &x);
    size_t win = x.best_mixed < structured ? x.best_mixed : structured;
    if (win == NONE && x.best_message == NONE && msg) /* only a weak word can still hold */
        scan_automaton(&m->late, msg, err->message_len, m->n_rules, visit_rule, &x);
    if (win == NONE)
        win = x.best_message;
    if (win == NONE) /* a generic type, when the text said nothing known */
        win = first_in(&x, m->generic, PASS_GENERIC);
    return win == NONE ? NULL : &rs->rules[win];
}
