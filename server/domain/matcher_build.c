/* Compiling a ruleset into the matcher's tables (matcher_internal.h): the
 * rule lists by the fields an error gives, the name indexes of codes and
 * exception types, and the pattern automaton (see matcher.c for its form). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "domain/classify.h"
#include "domain/err.h"
#include "domain/matcher_internal.h"

static unsigned needed_fields(const rd_match *w)
{
    return (w->n_http_status ? NEED_HTTP : 0u) | (w->n_grpc_code ? NEED_GRPC : 0u)
         | (w->n_codes ? NEED_CODE : 0u) | (w->n_exception_types ? NEED_EXCEPTION : 0u)
         | (w->n_kinds ? NEED_KIND : 0u) | (w->n_sources ? NEED_SOURCE : 0u);
}

/* For each mask, the rules of pass p whose needs it covers and that name
 * no code or exception type, into *at. A rule that names one can only
 * hold for an error giving that name: the walk finds it in the name's run
 * (matcher.c, first_before), so the lists leave it out. */
static void list_rules_by_mask(rd_matcher *m, rule_pass p, rule_list *lists, uint32_t **at)
{
    for (unsigned mask = 0; mask < NEED_MASKS; mask++) {
        lists[mask].v = *at;
        for (size_t i = 0; i < m->n_rules; i++)
            if (m->pass[i] == p && !(m->need[i] & ~mask)
                && !(m->need[i] & (NEED_CODE | NEED_EXCEPTION)))
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
    m->tier = calloc(n ? n : 1, 1);
    m->http_span = calloc(n ? n : 1, sizeof *m->http_span);
    if (!m->need || !m->pass || !m->tier || !m->http_span)
        return RD_ERR_NOMEM;
    for (size_t i = 0; i < n; i++) {
        const rd_match *w = &rs->rules[i].when;
        m->need[i] = (uint8_t)needed_fields(w);
        m->pass[i] = (uint8_t)pass_of(&rs->rules[i]);
        m->tier[i] = (uint8_t)rd_rule_tier(rs->rules[i].id);
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

/* The table of ix's distinct names, each slot holding its run. */
static int build_name_table(name_index *ix)
{
    size_t distinct = 0;
    for (size_t k = 0; k < ix->n; k++)
        distinct += k == 0 || strcmp(ix->v[k].name, ix->v[k - 1].name) != 0;
    size_t slots = 1;
    while (slots < 2 * distinct)
        slots *= 2;
    ix->slots = calloc(slots, sizeof *ix->slots);
    if (!ix->slots)
        return RD_ERR_NOMEM;
    ix->mask = slots - 1;
    for (size_t k = 0, end; k < ix->n; k = end) {
        for (end = k + 1; end < ix->n && strcmp(ix->v[end].name, ix->v[k].name) == 0; end++)
            ;
        size_t len = strlen(ix->v[k].name);
        uint64_t h = name_hash(ix->v[k].name, len);
        size_t i = h & ix->mask;
        while (ix->slots[i].n)
            i = (i + 1) & ix->mask;
        ix->slots[i] = (name_slot){h, (uint32_t)len, (uint32_t)k, (uint32_t)(end - k)};
    }
    return RD_OK;
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
    return build_name_table(ix);
}

static void free_name_index(name_index *ix)
{
    for (size_t i = 0; ix->v && i < ix->n; i++)
        free(ix->v[i].name);
    free(ix->v);
    free(ix->slots);
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

/* The temporary list of every (pattern, rule) pair of the rules in
 * [from, to), sorted; an empty pattern is left out because it never
 * matches. */
static int collect_pattern_refs(const rd_ruleset *rs, size_t from, size_t to, pattern_ref **refs,
                                size_t *n)
{
    size_t total = 0;
    for (size_t i = from; i < to; i++)
        total += rs->rules[i].when.n_patterns;
    *n = 0;
    *refs = calloc(total ? total : 1, sizeof **refs);
    if (!*refs)
        return RD_ERR_NOMEM;
    for (size_t i = from; i < to; i++) {
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
static int group_patterns(ac_automaton *a, const pattern_ref *refs, size_t n,
                          const rd_pattern ***texts)
{
    a->patterns = calloc(n ? n : 1, sizeof *a->patterns);
    a->pattern_rules = calloc(n ? n : 1, sizeof *a->pattern_rules);
    *texts = calloc(n ? n : 1, sizeof **texts);
    if (!a->patterns || !a->pattern_rules || !*texts)
        return RD_ERR_NOMEM;
    size_t n_rules = 0;
    for (size_t i = 0; i < n; i++) {
        bool same = i > 0 && compare_pattern_text(refs[i - 1].p, refs[i].p) == 0;
        if (!same) {
            if (refs[i].p->len > UINT32_MAX)
                return RD_ERR_EXHAUSTED;
            (*texts)[a->n_patterns] = refs[i].p;
            a->patterns[a->n_patterns++] = (ac_pattern){
                .len = (uint32_t)refs[i].p->len, .boundary_start = refs[i].p->boundary_start,
                .boundary_end = refs[i].p->boundary_end, .rules_at = (uint32_t)n_rules};
        }
        ac_pattern *p = &a->patterns[a->n_patterns - 1];
        if (same && p->n_rules > 0 && a->pattern_rules[n_rules - 1] == refs[i].rule)
            continue; /* one rule listing the same pattern twice */
        a->pattern_rules[n_rules++] = refs[i].rule;
        p->n_rules++;
    }
    return RD_OK;
}

/* ---- the automaton ---- */

/* Bytes of error text from the most to the least common (English text,
 * lower case, then digits and punctuation): their classes come first, so
 * the transitions that ordinary text takes sit together at the start of
 * each state's row and a scan touches fewer cache lines. */
static const char COMMON_BYTES[] = " etaoinsrhldcumfpgwybvk:.,'\"-_/()0123456789xjqz";

static void assign_byte_classes(ac_automaton *a, const rd_pattern *const *texts)
{
    memset(a->byte_class, 0, sizeof a->byte_class);
    bool used[256] = {false};
    for (size_t i = 0; i < a->n_patterns; i++)
        for (size_t k = 0; k < texts[i]->len; k++)
            used[fold((unsigned char)texts[i]->text[k])] = true;
    uint32_t next = 1;
    for (const char *c = COMMON_BYTES; *c; c++)
        if (used[(unsigned char)*c] && !a->byte_class[(unsigned char)*c])
            a->byte_class[(unsigned char)*c] = (uint8_t)next++;
    for (size_t i = 0; i < a->n_patterns; i++)
        for (size_t k = 0; k < texts[i]->len; k++) {
            unsigned char c = fold((unsigned char)texts[i]->text[k]);
            if (!a->byte_class[c])
                a->byte_class[c] = (uint8_t)next++;
        }
    for (int c = 'A'; c <= 'Z'; c++)
        a->byte_class[c] = a->byte_class[fold((unsigned char)c)];
    a->n_classes = next;
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

static int build_trie(ac_automaton *a, const rd_pattern *const *texts, ac_build *b)
{
    size_t cap = 1;
    for (size_t i = 0; i < a->n_patterns; i++)
        cap += texts[i]->len;
    size_t nc = a->n_classes;
    if (cap > (HAS_OUTPUT - 1) / nc)
        return RD_ERR_EXHAUSTED; /* row offsets must fit below the output bit */
    b->tab = malloc(cap * nc * sizeof *b->tab);
    b->own_head = malloc(cap * sizeof *b->own_head);
    b->own_next = malloc((a->n_patterns ? a->n_patterns : 1) * sizeof *b->own_next);
    b->fail = calloc(cap, sizeof *b->fail);
    b->order = malloc(cap * sizeof *b->order);
    if (!b->tab || !b->own_head || !b->own_next || !b->fail || !b->order)
        return RD_ERR_NOMEM;
    memset(b->tab, 0xFF, cap * nc * sizeof *b->tab);
    memset(b->own_head, 0xFF, cap * sizeof *b->own_head);
    size_t n_states = 1;
    for (size_t i = 0; i < a->n_patterns; i++) {
        uint32_t s = 0;
        for (size_t k = 0; k < texts[i]->len; k++) {
            uint32_t *edge = &b->tab[s * nc + a->byte_class[(unsigned char)texts[i]->text[k]]];
            if (*edge == NO_STATE)
                *edge = (uint32_t)n_states++;
            s = *edge;
        }
        b->own_next[i] = b->own_head[s];
        b->own_head[s] = (uint32_t)i;
    }
    a->n_states = n_states;
    return RD_OK;
}

/* Breadth-first: each state's failure state (its longest proper suffix
 * that is a trie state) is complete before the state itself, so missing
 * edges can be copied from it. */
static void complete_transitions(const ac_automaton *a, ac_build *b)
{
    size_t nc = a->n_classes, head = 0, tail = 0;
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
static int collect_outputs(ac_automaton *a, const ac_build *b)
{
    a->state_out = calloc(a->n_states, sizeof *a->state_out);
    if (!a->state_out)
        return RD_ERR_NOMEM;
    size_t total = 0;
    for (size_t k = 0; k < a->n_states; k++) {
        uint32_t s = b->order[k];
        size_t own = 0;
        for (uint32_t p = b->own_head[s]; p != NO_STATE; p = b->own_next[p])
            own++;
        size_t n = own + (s == 0 ? 0 : a->state_out[b->fail[s]].n);
        if (n > UINT32_MAX || total > UINT32_MAX - n)
            return RD_ERR_EXHAUSTED;
        a->state_out[s] = (state_outputs){(uint32_t)total, (uint32_t)n};
        total += n;
    }
    a->outputs = calloc(total ? total : 1, sizeof *a->outputs);
    if (!a->outputs)
        return RD_ERR_NOMEM;
    for (size_t k = 1; k < a->n_states; k++) {
        uint32_t s = b->order[k];
        uint32_t *dst = a->outputs + a->state_out[s].at;
        for (uint32_t p = b->own_head[s]; p != NO_STATE; p = b->own_next[p])
            *dst++ = p;
        const state_outputs *f = &a->state_out[b->fail[s]];
        memcpy(dst, a->outputs + f->at, f->n * sizeof *dst);
    }
    return RD_OK;
}

/* The final table: row offsets instead of state numbers, output bit set. */
static void finish_delta(ac_automaton *a, ac_build *b)
{
    size_t nc = a->n_classes, n = a->n_states * nc;
    for (size_t i = 0; i < n; i++) {
        uint32_t t = b->tab[i];
        b->tab[i] = (uint32_t)(t * nc) | (a->state_out[t].n ? HAS_OUTPUT : 0);
    }
    a->delta = b->tab;
    b->tab = NULL;
}

/* The automaton of the patterns of the rules in [from, to). */
static int build_automaton(ac_automaton *a, const rd_ruleset *rs, size_t from, size_t to)
{
    pattern_ref *refs = NULL;
    const rd_pattern **texts = NULL;
    ac_build b = {0};
    size_t n_refs;
    int rc = collect_pattern_refs(rs, from, to, &refs, &n_refs);
    if (rc == RD_OK)
        rc = group_patterns(a, refs, n_refs, &texts);
    if (rc == RD_OK) {
        assign_byte_classes(a, texts);
        rc = build_trie(a, texts, &b);
    }
    if (rc == RD_OK) {
        complete_transitions(a, &b);
        rc = collect_outputs(a, &b);
    }
    if (rc == RD_OK)
        finish_delta(a, &b);
    free_ac_build(&b);
    free(texts);
    free(refs);
    return rc;
}

/* The first of the weak-word rules when every rule from it on that has
 * patterns is a message rule (they are the last ones the message pass
 * reads), else n_rules: then there is no late automaton. */
static size_t late_rules_from(const rd_matcher *m, const rd_ruleset *rs)
{
    size_t from = rs->n_rules;
    for (size_t i = 0; i < rs->n_rules && from == rs->n_rules; i++)
        if (rd_rule_is_weak(&rs->rules[i]))
            from = i;
    for (size_t i = from; i < rs->n_rules; i++)
        if (rs->rules[i].when.n_patterns > 0 && m->pass[i] != PASS_MESSAGE)
            return rs->n_rules;
    return from;
}

static void free_automaton(ac_automaton *a)
{
    free(a->delta);
    free(a->state_out);
    free(a->outputs);
    free(a->patterns);
    free(a->pattern_rules);
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
    if (rc == RD_OK) {
        m->late_from = late_rules_from(m, rs);
        rc = build_automaton(&m->text, rs, 0, m->late_from);
    }
    if (rc == RD_OK)
        rc = build_automaton(&m->late, rs, m->late_from, rs->n_rules);
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
    free(m->tier);
    free(m->http_span);
    free(m->lists);
    free_name_index(&m->codes);
    free_name_index(&m->exception_types);
    free_automaton(&m->text);
    free_automaton(&m->late);
    free(m);
}

size_t rd_matcher_pattern_count(const rd_matcher *m)
{
    return m ? m->text.n_patterns + m->late.n_patterns : 0;
}

size_t rd_matcher_state_count(const rd_matcher *m)
{
    return m ? m->text.n_states + m->late.n_states : 0;
}
