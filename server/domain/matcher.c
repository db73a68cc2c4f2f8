/* The compiled rules: see matcher.h for what is built and why.
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

#define HAS_OUTPUT UINT32_C(0x80000000)
#define NO_STATE UINT32_MAX
#define NONE SIZE_MAX

/* ---- bytes (ASCII folding only: rules are ASCII, messages any bytes) ---- */

static inline unsigned char fold(unsigned char c)
{
    return (c >= 'A' && c <= 'Z') ? (unsigned char)(c + ('a' - 'A')) : c;
}

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

bool rd_rule_is_generic(const rd_rule *r)
{
    return r && r->id && strncmp(r->id, RD_GENERIC_PREFIX, sizeof RD_GENERIC_PREFIX - 1) == 0;
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

/* ---- the compiled form ---- */

/* Which fields a rule's conditions read; a rule can only hold when the
 * error gives all of them (an absent field never matches a condition). */
enum {
    NEED_HTTP = 1 << 0,
    NEED_GRPC = 1 << 1,
    NEED_CODE = 1 << 2,
    NEED_EXCEPTION = 1 << 3,
    NEED_KIND = 1 << 4,
    NEED_SOURCE = 1 << 5,
};

#define NEED_MASKS 64 /* every combination of the NEED_* bits */

/* PASS_GENERIC: structured rules on generic exception types, read only
 * when neither the structured nor the message pass decided. */
typedef enum { PASS_STRUCTURED, PASS_MIXED, PASS_MESSAGE, PASS_GENERIC } rule_pass;

/* Rules in file order: a view into rd_matcher.lists. */
typedef struct rule_list {
    const uint32_t *v;
    size_t n;
} rule_list;

/* A code or exception type of some rule, lower-cased; a name index is
 * sorted by (name, rule), so the entries equal to one name form a run in
 * rule order. */
typedef struct name_entry {
    char *name;
    uint32_t rule;
} name_entry;

typedef struct name_index {
    name_entry *v;
    size_t n;
} name_index;

typedef struct name_run {
    const name_entry *v;
    size_t n;
} name_run;

typedef struct ac_pattern {
    uint32_t len;
    bool boundary_start, boundary_end;
    uint32_t rules_at, n_rules;   /* into pattern_rules, ascending */
} ac_pattern;

typedef struct state_outputs {
    uint32_t at, n;               /* into outputs: patterns ending in this state */
} state_outputs;

struct rd_matcher {
    size_t n_rules;
    uint8_t *need;                /* by rule: NEED_* bits */
    uint8_t *pass;                /* by rule: rule_pass */
    /* By rule: the least range holding every http_status range of it (all
     * of int32 for a rule without one), so the structured pass passes
     * over most rules on HTTP status without testing their conditions. */
    rd_int_range *http_span;
    /* By the NEED_* bits an error gives, the rules that can hold for it:
     * an error sending only a message skips every rule on HTTP status
     * without testing each. At most 64 x 4 bytes per rule (1 MiB for
     * RD_RULES_MAX rules). */
    rule_list structured[NEED_MASKS]; /* rules without patterns */
    rule_list mixed[NEED_MASKS];      /* structured conditions + patterns */
    rule_list generic[NEED_MASKS];    /* generic.* rules, after the message pass */
    uint32_t *lists;                  /* the storage of all three */
    name_index codes, exception_types;

    uint8_t byte_class[256];
    uint32_t n_classes;
    size_t n_states;
    uint32_t *delta;              /* n_states * n_classes row entries */
    state_outputs *state_out;     /* by state */
    uint32_t *outputs;            /* pattern ids */
    ac_pattern *patterns;
    size_t n_patterns;
    uint32_t *pattern_rules;
};

static unsigned needed_fields(const rd_match *w)
{
    return (w->n_http_status ? NEED_HTTP : 0u) | (w->n_grpc_code ? NEED_GRPC : 0u)
         | (w->n_codes ? NEED_CODE : 0u) | (w->n_exception_types ? NEED_EXCEPTION : 0u)
         | (w->n_kinds ? NEED_KIND : 0u) | (w->n_sources ? NEED_SOURCE : 0u);
}

/* For each mask, the rules of pass p whose needs it covers, into *at. */
static void list_rules_by_mask(rd_matcher *m, rule_pass p, rule_list *lists, uint32_t **at)
{
    for (unsigned mask = 0; mask < NEED_MASKS; mask++) {
        lists[mask].v = *at;
        for (size_t i = 0; i < m->n_rules; i++)
            if (m->pass[i] == p && !(m->need[i] & ~mask))
                (*at)[lists[mask].n++] = (uint32_t)i;
        *at += lists[mask].n;
    }
}

static rule_pass pass_of(const rd_rule *r)
{
    const rd_match *w = &r->when;
    if (rd_rule_is_generic(r))
        return PASS_GENERIC;
    if (w->n_patterns == 0)
        return PASS_STRUCTURED;
    return rd_match_is_structured(w) ? PASS_MIXED : PASS_MESSAGE;
}

static rd_int_range http_span_of(const rd_match *w)
{
    if (w->n_http_status == 0)
        return (rd_int_range){INT32_MIN, INT32_MAX};
    rd_int_range span = w->http_status[0];
    for (size_t i = 1; i < w->n_http_status; i++) {
        if (w->http_status[i].lo < span.lo)
            span.lo = w->http_status[i].lo;
        if (w->http_status[i].hi > span.hi)
            span.hi = w->http_status[i].hi;
    }
    return span;
}

static int summarize_rules(rd_matcher *m, const rd_ruleset *rs)
{
    size_t n = rs->n_rules, listed = 0;
    m->need = calloc(n ? n : 1, 1);
    m->pass = calloc(n ? n : 1, 1);
    m->http_span = calloc(n ? n : 1, sizeof *m->http_span);
    if (!m->need || !m->pass || !m->http_span)
        return RD_ERR_NOMEM;
    for (size_t i = 0; i < n; i++) {
        const rd_match *w = &rs->rules[i].when;
        m->need[i] = (uint8_t)needed_fields(w);
        m->pass[i] = (uint8_t)pass_of(&rs->rules[i]);
        m->http_span[i] = http_span_of(w);
        listed += m->pass[i] != PASS_MESSAGE;
    }
    if (listed > SIZE_MAX / NEED_MASKS / sizeof *m->lists)
        return RD_ERR_EXHAUSTED;
    uint32_t *at = m->lists = malloc(listed * NEED_MASKS * sizeof *m->lists + 1);
    if (!at)
        return RD_ERR_NOMEM;
    list_rules_by_mask(m, PASS_STRUCTURED, m->structured, &at);
    list_rules_by_mask(m, PASS_MIXED, m->mixed, &at);
    list_rules_by_mask(m, PASS_GENERIC, m->generic, &at);
    return RD_OK;
}

/* ---- name indexes (codes, exception types) ---- */

static int compare_name_entries(const void *a, const void *b)
{
    const name_entry *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    return c ? c : (x->rule > y->rule) - (x->rule < y->rule);
}

static char *lower_copy(const char *s)
{
    size_t n = strlen(s);
    char *c = malloc(n + 1);
    if (!c)
        return NULL;
    for (size_t i = 0; i <= n; i++)
        c[i] = (char)fold((unsigned char)s[i]);
    return c;
}

typedef enum { FIELD_CODE, FIELD_EXCEPTION } name_field;

static char *const *field_names(const rd_match *w, name_field f, size_t *n)
{
    *n = f == FIELD_CODE ? w->n_codes : w->n_exception_types;
    return f == FIELD_CODE ? w->codes : w->exception_types;
}

static int build_name_index(name_index *ix, const rd_ruleset *rs, name_field f)
{
    size_t total = 0, n;
    for (size_t i = 0; i < rs->n_rules; i++) {
        field_names(&rs->rules[i].when, f, &n);
        total += n;
    }
    ix->v = calloc(total ? total : 1, sizeof *ix->v);
    if (!ix->v)
        return RD_ERR_NOMEM;
    for (size_t i = 0; i < rs->n_rules; i++) {
        char *const *names = field_names(&rs->rules[i].when, f, &n);
        for (size_t k = 0; k < n; k++) {
            if (!names[k] || !names[k][0])
                continue; /* never matches anything */
            char *low = lower_copy(names[k]);
            if (!low)
                return RD_ERR_NOMEM;
            ix->v[ix->n++] = (name_entry){low, (uint32_t)i};
        }
    }
    qsort(ix->v, ix->n, sizeof *ix->v, compare_name_entries);
    return RD_OK;
}

static void free_name_index(name_index *ix)
{
    for (size_t i = 0; ix->v && i < ix->n; i++)
        free(ix->v[i].name);
    free(ix->v);
}

/* strcmp order between a stored lower-case name and given[0..n) folded. */
static int compare_folded(const char *stored, const char *given, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char a = (unsigned char)stored[i], b = fold((unsigned char)given[i]);
        if (a != b)
            return a < b ? -1 : 1;
    }
    return stored[n] ? 1 : 0;
}

/* The run of entries equal to given[0..n), case-insensitively. */
static name_run find_name(const name_index *ix, const char *given, size_t n)
{
    size_t lo = 0, hi = ix->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (compare_folded(ix->v[mid].name, given, n) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    size_t end = lo;
    while (end < ix->n && compare_folded(ix->v[end].name, given, n) == 0)
        end++;
    return (name_run){ix->v + lo, end - lo};
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

/* ---- patterns: distinct (text, boundaries), each with its rules ---- */

typedef struct pattern_ref {
    const rd_pattern *p;
    uint32_t rule;
} pattern_ref;

static int compare_pattern_text(const rd_pattern *a, const rd_pattern *b)
{
    size_t n = a->len < b->len ? a->len : b->len;
    for (size_t i = 0; i < n; i++) {
        unsigned char x = fold((unsigned char)a->text[i]), y = fold((unsigned char)b->text[i]);
        if (x != y)
            return x < y ? -1 : 1;
    }
    if (a->len != b->len)
        return a->len < b->len ? -1 : 1;
    if (a->boundary_start != b->boundary_start)
        return a->boundary_start ? 1 : -1;
    if (a->boundary_end != b->boundary_end)
        return a->boundary_end ? 1 : -1;
    return 0;
}

static int compare_pattern_refs(const void *a, const void *b)
{
    const pattern_ref *x = a, *y = b;
    int c = compare_pattern_text(x->p, y->p);
    return c ? c : (x->rule > y->rule) - (x->rule < y->rule);
}

/* The temporary list of every (pattern, rule) pair, sorted; an empty
 * pattern is left out because it never matches. */
static int collect_pattern_refs(const rd_ruleset *rs, pattern_ref **refs, size_t *n)
{
    size_t total = 0;
    for (size_t i = 0; i < rs->n_rules; i++)
        total += rs->rules[i].when.n_patterns;
    *n = 0;
    *refs = calloc(total ? total : 1, sizeof **refs);
    if (!*refs)
        return RD_ERR_NOMEM;
    for (size_t i = 0; i < rs->n_rules; i++) {
        const rd_match *w = &rs->rules[i].when;
        for (size_t k = 0; k < w->n_patterns; k++)
            if (w->patterns[k].text && w->patterns[k].len > 0)
                (*refs)[(*n)++] = (pattern_ref){&w->patterns[k], (uint32_t)i};
    }
    qsort(*refs, *n, sizeof **refs, compare_pattern_refs);
    return RD_OK;
}

/* Groups the sorted refs into distinct patterns; texts[] receives each
 * pattern's text (borrowed from the ruleset, used only while building). */
static int group_patterns(rd_matcher *m, const pattern_ref *refs, size_t n,
                          const rd_pattern ***texts)
{
    m->patterns = calloc(n ? n : 1, sizeof *m->patterns);
    m->pattern_rules = calloc(n ? n : 1, sizeof *m->pattern_rules);
    *texts = calloc(n ? n : 1, sizeof **texts);
    if (!m->patterns || !m->pattern_rules || !*texts)
        return RD_ERR_NOMEM;
    size_t n_rules = 0;
    for (size_t i = 0; i < n; i++) {
        bool same = i > 0 && compare_pattern_text(refs[i - 1].p, refs[i].p) == 0;
        if (!same) {
            if (refs[i].p->len > UINT32_MAX)
                return RD_ERR_EXHAUSTED;
            (*texts)[m->n_patterns] = refs[i].p;
            m->patterns[m->n_patterns++] = (ac_pattern){
                .len = (uint32_t)refs[i].p->len, .boundary_start = refs[i].p->boundary_start,
                .boundary_end = refs[i].p->boundary_end, .rules_at = (uint32_t)n_rules};
        }
        ac_pattern *p = &m->patterns[m->n_patterns - 1];
        if (same && p->n_rules > 0 && m->pattern_rules[n_rules - 1] == refs[i].rule)
            continue; /* one rule listing the same pattern twice */
        m->pattern_rules[n_rules++] = refs[i].rule;
        p->n_rules++;
    }
    return RD_OK;
}

/* ---- the automaton ---- */

static void assign_byte_classes(rd_matcher *m, const rd_pattern *const *texts)
{
    memset(m->byte_class, 0, sizeof m->byte_class);
    uint32_t next = 1;
    for (size_t i = 0; i < m->n_patterns; i++)
        for (size_t k = 0; k < texts[i]->len; k++) {
            unsigned char c = fold((unsigned char)texts[i]->text[k]);
            if (!m->byte_class[c])
                m->byte_class[c] = (uint8_t)next++;
        }
    for (int c = 'A'; c <= 'Z'; c++)
        m->byte_class[c] = m->byte_class[fold((unsigned char)c)];
    m->n_classes = next;
}

/* Building state: the trie's edges in `tab` (NO_STATE = none), later the
 * complete transition function; own[s] lists the patterns a state ends. */
typedef struct ac_build {
    uint32_t *tab;
    uint32_t *own_head;      /* by state: first pattern ending here, or NO_STATE */
    uint32_t *own_next;      /* by pattern: next pattern ending in the same state */
    uint32_t *fail;
    uint32_t *order;         /* states in breadth-first order */
} ac_build;

static void free_ac_build(ac_build *b)
{
    free(b->tab);
    free(b->own_head);
    free(b->own_next);
    free(b->fail);
    free(b->order);
}

static int build_trie(rd_matcher *m, const rd_pattern *const *texts, ac_build *b)
{
    size_t cap = 1;
    for (size_t i = 0; i < m->n_patterns; i++)
        cap += texts[i]->len;
    size_t nc = m->n_classes;
    if (cap > (HAS_OUTPUT - 1) / nc)
        return RD_ERR_EXHAUSTED; /* row offsets must fit below the output bit */
    b->tab = malloc(cap * nc * sizeof *b->tab);
    b->own_head = malloc(cap * sizeof *b->own_head);
    b->own_next = malloc((m->n_patterns ? m->n_patterns : 1) * sizeof *b->own_next);
    b->fail = calloc(cap, sizeof *b->fail);
    b->order = malloc(cap * sizeof *b->order);
    if (!b->tab || !b->own_head || !b->own_next || !b->fail || !b->order)
        return RD_ERR_NOMEM;
    memset(b->tab, 0xFF, cap * nc * sizeof *b->tab);
    memset(b->own_head, 0xFF, cap * sizeof *b->own_head);
    size_t n_states = 1;
    for (size_t i = 0; i < m->n_patterns; i++) {
        uint32_t s = 0;
        for (size_t k = 0; k < texts[i]->len; k++) {
            uint32_t *edge = &b->tab[s * nc + m->byte_class[(unsigned char)texts[i]->text[k]]];
            if (*edge == NO_STATE)
                *edge = (uint32_t)n_states++;
            s = *edge;
        }
        b->own_next[i] = b->own_head[s];
        b->own_head[s] = (uint32_t)i;
    }
    m->n_states = n_states;
    return RD_OK;
}

/* Breadth-first: each state's failure state (its longest proper suffix
 * that is a trie state) is complete before the state itself, so missing
 * edges can be copied from it. */
static void complete_transitions(const rd_matcher *m, ac_build *b)
{
    size_t nc = m->n_classes, head = 0, tail = 0;
    b->order[tail++] = 0;
    while (head < tail) {
        uint32_t s = b->order[head++];
        for (size_t c = 0; c < nc; c++) {
            uint32_t *edge = &b->tab[s * nc + c];
            uint32_t via_fail = s == 0 ? 0 : b->tab[b->fail[s] * nc + c];
            if (*edge == NO_STATE) {
                *edge = via_fail;
            } else {
                b->fail[*edge] = via_fail;
                b->order[tail++] = *edge;
            }
        }
    }
}

/* A state reports its own patterns and everything its failure state
 * reports (patterns that are suffixes of the text read so far). */
static int collect_outputs(rd_matcher *m, const ac_build *b)
{
    m->state_out = calloc(m->n_states, sizeof *m->state_out);
    if (!m->state_out)
        return RD_ERR_NOMEM;
    size_t total = 0;
    for (size_t k = 0; k < m->n_states; k++) {
        uint32_t s = b->order[k];
        size_t own = 0;
        for (uint32_t p = b->own_head[s]; p != NO_STATE; p = b->own_next[p])
            own++;
        size_t n = own + (s == 0 ? 0 : m->state_out[b->fail[s]].n);
        if (n > UINT32_MAX || total > UINT32_MAX - n)
            return RD_ERR_EXHAUSTED;
        m->state_out[s] = (state_outputs){(uint32_t)total, (uint32_t)n};
        total += n;
    }
    m->outputs = calloc(total ? total : 1, sizeof *m->outputs);
    if (!m->outputs)
        return RD_ERR_NOMEM;
    for (size_t k = 1; k < m->n_states; k++) {
        uint32_t s = b->order[k];
        uint32_t *dst = m->outputs + m->state_out[s].at;
        for (uint32_t p = b->own_head[s]; p != NO_STATE; p = b->own_next[p])
            *dst++ = p;
        const state_outputs *f = &m->state_out[b->fail[s]];
        memcpy(dst, m->outputs + f->at, f->n * sizeof *dst);
    }
    return RD_OK;
}

/* The final table: row offsets instead of state numbers, output bit set. */
static void finish_delta(rd_matcher *m, ac_build *b)
{
    size_t nc = m->n_classes, n = m->n_states * nc;
    for (size_t i = 0; i < n; i++) {
        uint32_t t = b->tab[i];
        b->tab[i] = (uint32_t)(t * nc) | (m->state_out[t].n ? HAS_OUTPUT : 0);
    }
    m->delta = b->tab;
    b->tab = NULL;
}

static int build_automaton(rd_matcher *m, const rd_ruleset *rs)
{
    pattern_ref *refs = NULL;
    const rd_pattern **texts = NULL;
    ac_build b = {0};
    size_t n_refs;
    int rc = collect_pattern_refs(rs, &refs, &n_refs);
    if (rc == RD_OK)
        rc = group_patterns(m, refs, n_refs, &texts);
    if (rc == RD_OK) {
        assign_byte_classes(m, texts);
        rc = build_trie(m, texts, &b);
    }
    if (rc == RD_OK) {
        complete_transitions(m, &b);
        rc = collect_outputs(m, &b);
    }
    if (rc == RD_OK)
        finish_delta(m, &b);
    free_ac_build(&b);
    free(texts);
    free(refs);
    return rc;
}

int rd_matcher_build(const rd_ruleset *rs, rd_matcher **out)
{
    *out = NULL;
    if (rs->n_rules > UINT32_MAX)
        return RD_ERR_EXHAUSTED;
    rd_matcher *m = calloc(1, sizeof *m);
    if (!m)
        return RD_ERR_NOMEM;
    m->n_rules = rs->n_rules;
    int rc = summarize_rules(m, rs);
    if (rc == RD_OK)
        rc = build_name_index(&m->codes, rs, FIELD_CODE);
    if (rc == RD_OK)
        rc = build_name_index(&m->exception_types, rs, FIELD_EXCEPTION);
    if (rc == RD_OK)
        rc = build_automaton(m, rs);
    if (rc != RD_OK) {
        rd_matcher_free(m);
        return rc;
    }
    *out = m;
    return RD_OK;
}

void rd_matcher_free(rd_matcher *m)
{
    if (!m)
        return;
    free(m->need);
    free(m->pass);
    free(m->http_span);
    free(m->lists);
    free_name_index(&m->codes);
    free_name_index(&m->exception_types);
    free(m->delta);
    free(m->state_out);
    free(m->outputs);
    free(m->patterns);
    free(m->pattern_rules);
    free(m);
}

size_t rd_matcher_pattern_count(const rd_matcher *m) { return m ? m->n_patterns : 0; }
size_t rd_matcher_state_count(const rd_matcher *m) { return m ? m->n_states : 0; }

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

/* Every pattern ending at msg[end - 1] in state row `row`. */
static size_t report_hits(const rd_matcher *m, const unsigned char *msg, size_t len, size_t end,
                          uint32_t row, size_t bound, rd_matcher_visit visit, void *ctx)
{
    const state_outputs *o = &m->state_out[row / m->n_classes];
    for (uint32_t k = 0; k < o->n; k++) {
        const ac_pattern *p = &m->patterns[m->outputs[o->at + k]];
        if (!boundaries_hold(msg, len, end - p->len, end, p))
            continue;
        const uint32_t *rules = m->pattern_rules + p->rules_at;
        for (uint32_t r = 0; r < p->n_rules && rules[r] < bound; r++)
            bound = visit(ctx, rules[r]);
    }
    return bound;
}

void rd_matcher_scan(const rd_matcher *m, const char *msg, size_t len, size_t bound,
                     rd_matcher_visit visit, void *ctx)
{
    if (!m || !msg || m->n_patterns == 0)
        return;
    const unsigned char *s = (const unsigned char *)msg;
    const uint32_t *delta = m->delta;
    const uint8_t *cls = m->byte_class;
    uint32_t row = 0;
    for (size_t i = 0; i < len; i++) {
        uint32_t next = delta[row + cls[s[i]]];
        if (next & HAS_OUTPUT) {
            next &= ~HAS_OUTPUT;
            bound = report_hits(m, s, len, i + 1, next, bound, visit, ctx);
        }
        row = next;
    }
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

/* A cursor over a name run (the rules holding the error's code or
 * exception type, in rule order), walked along a rule list in the same
 * order: a rule that needs the name and is not in the run is passed over
 * with one comparison instead of a full fields_hold. */
typedef struct run_cursor {
    name_run run;
    size_t at;
} run_cursor;

static bool cursor_has(run_cursor *c, size_t rule)
{
    while (c->at < c->run.n && c->run.v[c->at].rule < rule)
        c->at++;
    return c->at < c->run.n && c->run.v[c->at].rule == rule;
}

/* Rules of the list (in rule order) before `limit` that may hold: those
 * needing a code must be in the code run, those needing an exception
 * type in one of its two runs. fields_hold has the last word. */
typedef struct candidate_walk {
    run_cursor code, exception_full, exception_last;
} candidate_walk;

static bool may_hold(const eval *x, candidate_walk *w, size_t i)
{
    unsigned need = x->m->need[i];
    if ((need & NEED_CODE) && !cursor_has(&w->code, i))
        return false;
    if ((need & NEED_EXCEPTION) && !cursor_has(&w->exception_full, i)
        && !cursor_has(&w->exception_last, i))
        return false;
    return http_in_span(x, i);
}

static size_t first_before(const eval *x, const rule_list *lists, size_t limit)
{
    const rule_list *l = &lists[x->present];
    candidate_walk w = {{x->code, 0}, {x->exception_full, 0}, {x->exception_last, 0}};
    for (size_t k = 0; k < l->n && l->v[k] < limit; k++)
        if (may_hold(x, &w, l->v[k]) && fields_hold(x, l->v[k]))
            return l->v[k];
    return NONE;
}

static size_t first_in(const eval *x, const rule_list *lists)
{
    return first_before(x, lists, NONE);
}

/* Whether a mixed rule before `limit` needs its patterns looked for. */
static bool mixed_rule_applies(const eval *x, size_t limit)
{
    return first_before(x, x->m->mixed, limit) != NONE;
}

const rd_rule *rd_matcher_winner(const rd_matcher *m, const rd_ruleset *rs, const char *tool_id,
                                 const rd_tool_error *err)
{
    if (!m || !rs || !err || m->n_rules != rs->n_rules)
        return NULL;
    eval x = {.m = m, .rs = rs, .tool_id = tool_id, .err = err,
              .present = present_fields(err), .best_mixed = NONE, .best_message = NONE};
    look_up_names(&x);
    size_t structured = first_in(&x, m->structured);
    if (structured != NONE && !mixed_rule_applies(&x, structured))
        return &rs->rules[structured]; /* settled by fields: the text is not read */
    if (err->message)
        rd_matcher_scan(m, err->message, err->message_len, m->n_rules, visit_rule, &x);
    size_t win = x.best_mixed < structured ? x.best_mixed : structured;
    if (win == NONE)
        win = x.best_message;
    if (win == NONE)
        win = first_in(&x, m->generic); /* a generic type, when the text said nothing known */
    return win == NONE ? NULL : &rs->rules[win];
}
