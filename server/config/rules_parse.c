#include "config/rules_parse.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "config/words_parse.h"
#include "domain/err.h"
#include "domain/matcher.h"

/* ---- names ---- */

typedef struct name_value {
    const char *name;
    int value;
} name_value;

static const name_value RETRYABILITY_NAMES[] = {
    {"transient", RD_TRANSIENT}, {"permanent", RD_PERMANENT}, {NULL, 0}};

static const name_value CATEGORY_NAMES[] = {
    {"transient", RD_CAT_TRANSIENT},   {"input_validation", RD_CAT_INPUT_VALIDATION},
    {"external_service", RD_CAT_EXTERNAL_SERVICE}, {"permission", RD_CAT_PERMISSION},
    {"logic", RD_CAT_LOGIC},           {"resource", RD_CAT_RESOURCE},
    {"unknown", RD_CAT_UNKNOWN},       {NULL, 0}};

static const name_value KIND_NAMES[] = {
    {"unknown_tool", RD_KIND_UNKNOWN_TOOL},       {"not_permitted", RD_KIND_NOT_PERMITTED},
    {"invalid_parameters", RD_KIND_INVALID_PARAMETERS},
    {"limit_exceeded", RD_KIND_LIMIT_EXCEEDED},   {"canceled", RD_KIND_CANCELED},
    {"timeout", RD_KIND_TIMEOUT},                 {"transport_error", RD_KIND_TRANSPORT_ERROR},
    {"execution_error", RD_KIND_EXECUTION_ERROR}, {"internal_error", RD_KIND_INTERNAL_ERROR},
    {NULL, 0}};

static const name_value SOURCE_NAMES[] = {
    {"tool", RD_SOURCE_TOOL}, {"llm", RD_SOURCE_LLM}, {"mcp", RD_SOURCE_MCP}, {NULL, 0}};

/* The canonical gRPC status names (codes 1..16). */
static const name_value GRPC_NAMES[] = {
    {"CANCELLED", 1},          {"UNKNOWN", 2},          {"INVALID_ARGUMENT", 3},
    {"DEADLINE_EXCEEDED", 4},  {"NOT_FOUND", 5},        {"ALREADY_EXISTS", 6},
    {"PERMISSION_DENIED", 7},  {"RESOURCE_EXHAUSTED", 8}, {"FAILED_PRECONDITION", 9},
    {"ABORTED", 10},           {"OUT_OF_RANGE", 11},    {"UNIMPLEMENTED", 12},
    {"INTERNAL", 13},          {"UNAVAILABLE", 14},     {"DATA_LOSS", 15},
    {"UNAUTHENTICATED", 16},   {NULL, 0}};

static void list_names(const name_value *table, char *buf, size_t cap)
{
    size_t used = 0;
    buf[0] = '\0';
    for (; table->name && used < cap; table++) {
        int n = snprintf(buf + used, cap - used, "%s%s", used ? ", " : "", table->name);
        if (n < 0)
            return;
        used += (size_t)n;
    }
}

static int parse_name(const rd_yctx *c, const rd_ynode *node, const char *path,
                      const name_value *table, const char *what, int *out)
{
    const char *text;
    int rc = rd_yscalar_str(c, node, path, RD_ID_MAX, &text);
    if (rc != RD_OK)
        return rc;
    for (const name_value *e = table; e->name; e++) {
        if (strcmp(e->name, text) == 0) {
            *out = e->value;
            return RD_OK;
        }
    }
    char names[512];
    list_names(table, names, sizeof names);
    return rd_yerr(c, node->line, path, "unknown %s \"%s\" (expected one of: %s)", what, text,
                   names);
}

int rd_parse_retryability(const rd_yctx *c, const rd_ynode *node, const char *path,
                          rd_retryability *out)
{
    int v;
    int rc = parse_name(c, node, path, RETRYABILITY_NAMES, "retryability", &v);
    if (rc == RD_OK)
        *out = (rd_retryability)v;
    return rc;
}

int rd_parse_category(const rd_yctx *c, const rd_ynode *node, const char *path,
                      rd_category *out)
{
    int v;
    int rc = parse_name(c, node, path, CATEGORY_NAMES, "category", &v);
    if (rc == RD_OK)
        *out = (rd_category)v;
    return rc;
}

bool rd_valid_tool_id(const char *s, bool allow_prefix)
{
    size_t len = strlen(s);
    if (allow_prefix && len > 1 && s[len - 1] == '*')
        len--;
    if (len == 0 || len > RD_ID_MAX)
        return false;
    for (size_t i = 0; i < len; i++)
        if (!isalnum((unsigned char)s[i]) && !strchr("_.:/-", s[i]))
            return false;
    return true;
}

/* ---- condition list items ---- */

typedef int (*item_parser)(const rd_yctx *c, const rd_ynode *item, const char *path,
                           void *slot);

static bool all_digits(const char *s, size_t len)
{
    if (len == 0)
        return false;
    for (size_t i = 0; i < len; i++)
        if (!isdigit((unsigned char)s[i]))
            return false;
    return true;
}

/* "503", "5xx" or "500-504", all within 100..599. */
static bool parse_status_text(const char *s, rd_int_range *r)
{
    size_t len = strlen(s);
    if (len == 3 && s[0] >= '1' && s[0] <= '5' && tolower((unsigned char)s[1]) == 'x' &&
        tolower((unsigned char)s[2]) == 'x') {
        r->lo = (s[0] - '0') * 100;
        r->hi = r->lo + 99;
        return true;
    }
    const char *dash = strchr(s, '-');
    if (dash && all_digits(s, (size_t)(dash - s)) && dash - s <= 3 &&
        all_digits(dash + 1, strlen(dash + 1)) && strlen(dash + 1) <= 3) {
        r->lo = atoi(s);
        r->hi = atoi(dash + 1);
    } else if (all_digits(s, len) && len <= 3) {
        r->lo = r->hi = atoi(s);
    } else {
        return false;
    }
    return r->lo >= 100 && r->hi <= 599 && r->lo <= r->hi;
}

static int parse_http_status_item(const rd_yctx *c, const rd_ynode *item, const char *path,
                                  void *slot)
{
    rd_int_range *r = slot;
    const char *text;
    int rc = rd_yscalar_str(c, item, path, 16, &text);
    if (rc != RD_OK && item->type == RD_YSCALAR && !rd_yis_null(item))
        return rd_yerr(c, item->line, path,
                       "expected a status 100..599, \"Nxx\" or \"lo-hi\", got \"%s\"",
                       item->text);
    if (rc != RD_OK)
        return rc;
    if (!parse_status_text(text, r))
        return rd_yerr(c, item->line, path,
                       "expected a status 100..599, \"Nxx\" or \"lo-hi\", got \"%s\"", text);
    return RD_OK;
}

static int parse_grpc_code_item(const rd_yctx *c, const rd_ynode *item, const char *path,
                                void *slot)
{
    rd_int_range *r = slot;
    if (item->type == RD_YSCALAR && item->plain && all_digits(item->text, item->len)) {
        int64_t v;
        int rc = rd_yscalar_int(c, item, path, 1, 16, &v);
        if (rc == RD_OK)
            r->lo = r->hi = (int32_t)v;
        return rc;
    }
    const char *text;
    int rc = rd_yscalar_str(c, item, path, RD_ID_MAX, &text);
    if (rc != RD_OK)
        return rc;
    for (const name_value *e = GRPC_NAMES; e->name; e++) {
        if (strcasecmp(e->name, text) == 0) {
            r->lo = r->hi = e->value;
            return RD_OK;
        }
    }
    return rd_yerr(c, item->line, path,
                   "unknown gRPC code \"%s\" (1..16 or a name such as UNAVAILABLE)", text);
}

/* Free text such as an error code: an unquoted number is taken as its text,
 * so code: [-32602] and code: ["-32602"] mean the same. */
static int parse_text_item(const rd_yctx *c, const rd_ynode *item, const char *path,
                           void *slot)
{
    const char *text;
    int rc = rd_yscalar_str(c, item, path, RD_SHORT_FIELD_MAX, &text);
    if (rc != RD_OK)
        return rc;
    char *copy = strdup(text);
    if (!copy)
        return rd_yerr(c, item->line, path, "out of memory");
    *(char **)slot = copy;
    return RD_OK;
}

static int parse_tool_item(const rd_yctx *c, const rd_ynode *item, const char *path,
                           void *slot)
{
    int rc = parse_text_item(c, item, path, slot);
    if (rc != RD_OK)
        return rc;
    if (!rd_valid_tool_id(*(char **)slot, true))
        return rd_yerr(c, item->line, path,
                       "\"%s\" is not a tool id ([A-Za-z0-9_.:/-], optional trailing *)",
                       item->text);
    return RD_OK;
}

static int parse_kind_item(const rd_yctx *c, const rd_ynode *item, const char *path,
                           void *slot)
{
    int v;
    int rc = parse_name(c, item, path, KIND_NAMES, "kind", &v);
    if (rc == RD_OK)
        *(rd_error_kind *)slot = (rd_error_kind)v;
    return rc;
}

static int parse_source_item(const rd_yctx *c, const rd_ynode *item, const char *path,
                             void *slot)
{
    int v;
    int rc = parse_name(c, item, path, SOURCE_NAMES, "source", &v);
    if (rc == RD_OK)
        *(rd_error_source *)slot = (rd_error_source)v;
    return rc;
}

/* A "\b" marker at one end of a pattern: the two characters backslash and
 * 'b' (plain or single-quoted YAML, or "\\b" double-quoted), or the single
 * backspace byte that a double-quoted "\b" decodes to. Neither occurs in
 * real error text, so both are read as the boundary marker. */
static size_t boundary_marker_at_start(const char *s, size_t len)
{
    if (len >= 2 && s[0] == '\\' && s[1] == 'b')
        return 2;
    return len >= 1 && s[0] == '\b' ? 1 : 0;
}

static size_t boundary_marker_at_end(const char *s, size_t len)
{
    if (len >= 2 && s[len - 2] == '\\' && s[len - 1] == 'b')
        return 2;
    return len >= 1 && s[len - 1] == '\b' ? 1 : 0;
}

static int parse_pattern_item(const rd_yctx *c, const rd_ynode *item, const char *path,
                              void *slot)
{
    rd_pattern *p = slot;
    if (item->type != RD_YSCALAR || rd_yis_null(item))
        return rd_yerr(c, item->line, path, "expected text, got %s", rd_ytype_name(item));
    const char *text = item->text;
    size_t len = item->len;
    size_t head = boundary_marker_at_start(text, len);
    size_t tail = head < len ? boundary_marker_at_end(text + head, len - head) : 0;
    size_t body = len - head - tail;
    if (body == 0)
        return rd_yerr(c, item->line, path, "empty pattern");
    if (body > RD_PATTERN_MAX)
        return rd_yerr(c, item->line, path, "pattern longer than %d bytes", RD_PATTERN_MAX);
    p->text = malloc(body + 1);
    if (!p->text)
        return rd_yerr(c, item->line, path, "out of memory");
    for (size_t i = 0; i < body; i++)
        p->text[i] = (char)tolower((unsigned char)text[head + i]);
    p->text[body] = '\0';
    p->len = body;
    /* A bare number is a token: "429" must not match inside "4290". */
    bool numeric = all_digits(p->text, body);
    p->boundary_start = head > 0 || numeric;
    p->boundary_end = tail > 0 || numeric;
    return RD_OK;
}

/* ---- lists ---- */

/* Parses map[key] as a non-empty list into a calloc'd array. *arr and *n are
 * set even on error so the caller can release what was filled. */
static int parse_list(const rd_yctx *c, const rd_ynode *map, const char *path, const char *key,
                      size_t elem_size, item_parser parse_item, void **arr, size_t *n)
{
    *arr = NULL;
    *n = 0;
    const rd_ynode *list = rd_ymap_get(map, key);
    if (!list)
        return RD_OK;
    char p[RD_YPATH_MAX];
    rd_ypath(p, path, key);
    int rc = rd_yexpect(c, list, p, RD_YSEQ);
    if (rc != RD_OK)
        return rc;
    if (list->n == 0)
        return rd_yerr(c, list->line, p, "empty list (leave the key out instead)");
    if (list->n > RD_CONDITION_LIST_MAX)
        return rd_yerr(c, list->line, p, "more than %d entries", RD_CONDITION_LIST_MAX);
    *arr = calloc(list->n, elem_size);
    if (!*arr)
        return rd_yerr(c, list->line, p, "out of memory");
    *n = list->n;
    for (size_t i = 0; i < list->n && rc == RD_OK; i++) {
        char pi[RD_YPATH_MAX];
        rc = parse_item(c, list->items[i], rd_ypath_index(pi, p, i),
                        (char *)*arr + i * elem_size);
    }
    return rc;
}

/* Assigns through a void * so each field keeps its own type. */
#define PARSE_CONDITION(field, count, key, parser)                                            \
    do {                                                                                      \
        void *arr_;                                                                           \
        size_t n_;                                                                            \
        int rc_ = parse_list(c, when, path, key, sizeof *m->field, parser, &arr_, &n_);       \
        m->field = arr_;                                                                      \
        m->count = n_;                                                                        \
        if (rc_ != RD_OK)                                                                     \
            return rc_;                                                                       \
    } while (0)

static const char *const WHEN_KEYS[] = {"http_status", "grpc_code", "code", "exception_type",
                                        "kind", "source", "tool", "message", NULL};

int rd_match_parse(const rd_yctx *c, const rd_ynode *when, const char *path, rd_match *m)
{
    int rc = rd_ymap_check(c, when, path, WHEN_KEYS);
    if (rc != RD_OK)
        return rc;
    if (when->n == 0)
        return rd_yerr(c, when->key_line, path, "at least one condition is required");
    PARSE_CONDITION(http_status, n_http_status, "http_status", parse_http_status_item);
    PARSE_CONDITION(grpc_code, n_grpc_code, "grpc_code", parse_grpc_code_item);
    PARSE_CONDITION(codes, n_codes, "code", parse_text_item);
    PARSE_CONDITION(exception_types, n_exception_types, "exception_type", parse_text_item);
    PARSE_CONDITION(kinds, n_kinds, "kind", parse_kind_item);
    PARSE_CONDITION(sources, n_sources, "source", parse_source_item);
    PARSE_CONDITION(tools, n_tools, "tool", parse_tool_item);
    PARSE_CONDITION(patterns, n_patterns, "message", parse_pattern_item);
    return RD_OK;
}

static void free_strings(char **v, size_t n)
{
    for (size_t i = 0; v && i < n; i++)
        free(v[i]);
    free(v);
}

void rd_match_clear(rd_match *m)
{
    free(m->http_status);
    free(m->grpc_code);
    free_strings(m->codes, m->n_codes);
    free_strings(m->exception_types, m->n_exception_types);
    free(m->kinds);
    free(m->sources);
    free_strings(m->tools, m->n_tools);
    for (size_t i = 0; m->patterns && i < m->n_patterns; i++)
        free(m->patterns[i].text);
    free(m->patterns);
    memset(m, 0, sizeof *m);
}

/* ---- one rule ---- */

static bool valid_rule_id(const char *s)
{
    for (; *s; s++)
        if (!islower((unsigned char)*s) && !isdigit((unsigned char)*s) && !strchr("_.-", *s))
            return false;
    return true;
}

static int parse_rule_id(const rd_yctx *c, const rd_ynode *map, const char *path, rd_rule *r)
{
    const rd_ynode *id = rd_ymap_get(map, "id");
    char p[RD_YPATH_MAX];
    rd_ypath(p, path, "id");
    if (!id)
        return rd_yerr(c, map->line, p, "missing (every rule needs an id)");
    const char *text;
    int rc = rd_yscalar_str(c, id, p, RD_ID_MAX, &text);
    if (rc != RD_OK)
        return rc;
    if (!valid_rule_id(text))
        return rd_yerr(c, id->line, p, "\"%s\" is not a rule id ([a-z0-9_.-]+)", text);
    /* the answers no rule gives carry these (domain/classify.h, tiers) */
    if (strcmp(text, "unknown") == 0 || strcmp(text, "unspecified") == 0 ||
        strcmp(text, RD_WORDS_RULE_ID) == 0)
        return rd_yerr(c, id->line, p, "\"%s\" is reserved for answers no rule gives", text);
    r->id = strdup(text);
    r->line = id->line;
    return r->id ? RD_OK : rd_yerr(c, id->line, p, "out of memory");
}

static const char *const RESULT_KEYS[] = {
    "retryability", "category", "category_from_words", "retryability_from_words",
    "kind",         "suggestion", NULL};

static int parse_rule_result(const rd_yctx *c, const rd_ynode *map, const char *path,
                             rd_rule *r)
{
    const rd_ynode *res = rd_ymap_get(map, "result");
    char p[RD_YPATH_MAX], pk[RD_YPATH_MAX];
    rd_ypath(p, path, "result");
    if (!res)
        return rd_yerr(c, map->line, p, "missing (retryability and category are required)");
    int rc = rd_ymap_check(c, res, p, RESULT_KEYS);
    const rd_ynode *retry = rd_ymap_get(res, "retryability");
    const rd_ynode *cat = rd_ymap_get(res, "category");
    const rd_ynode *kind = rd_ymap_get(res, "kind");
    const rd_ynode *from_words = rd_ymap_get(res, "category_from_words");
    const rd_ynode *retry_from_words = rd_ymap_get(res, "retryability_from_words");
    if (rc == RD_OK && !retry)
        rc = rd_yerr(c, res->key_line, rd_ypath(pk, p, "retryability"), "missing (required)");
    if (rc == RD_OK && !cat)
        rc = rd_yerr(c, res->key_line, rd_ypath(pk, p, "category"), "missing (required)");
    if (rc == RD_OK)
        rc = rd_parse_retryability(c, retry, rd_ypath(pk, p, "retryability"), &r->retryability);
    if (rc == RD_OK)
        rc = rd_parse_category(c, cat, rd_ypath(pk, p, "category"), &r->category);
    if (rc == RD_OK && kind)
        rc = parse_kind_item(c, kind, rd_ypath(pk, p, "kind"), &r->kind);
    if (rc == RD_OK && from_words)
        rc = rd_yscalar_bool(c, from_words, rd_ypath(pk, p, "category_from_words"),
                             &r->category_from_words);
    if (rc == RD_OK && retry_from_words)
        rc = rd_yscalar_bool(c, retry_from_words, rd_ypath(pk, p, "retryability_from_words"),
                             &r->retryability_from_words);
    if (rc == RD_OK)
        rc = rd_yget_str(c, res, p, "suggestion", RD_SUGGESTION_MAX, &r->suggestion);
    return rc;
}

static const char *const RULE_KEYS[] = {"id", "when", "result", NULL};

static int parse_rule(const rd_yctx *c, const rd_ynode *map, const char *path, rd_rule *r)
{
    int rc = rd_ymap_check(c, map, path, RULE_KEYS);
    if (rc == RD_OK)
        rc = parse_rule_id(c, map, path, r);
    if (rc != RD_OK)
        return rc;
    r->file = strdup(c->file);
    if (!r->file)
        return rd_yerr(c, map->line, path, "out of memory");
    const rd_ynode *when = rd_ymap_get(map, "when");
    char p[RD_YPATH_MAX];
    rd_ypath(p, path, "when");
    if (!when)
        return rd_yerr(c, map->line, p, "missing (at least one condition is required)");
    rc = rd_match_parse(c, when, p, &r->when);
    if (rc == RD_OK)
        rc = parse_rule_result(c, map, path, r);
    r->structured = r->when.n_patterns == 0;
    /* "generic." rules are read after the message pass (domain/matcher.h):
     * a pattern there would only repeat the message pass. */
    if (rc == RD_OK && strncmp(r->id, "generic.", 8) == 0 && !r->structured)
        rc = rd_yerr(c, when->line, p, "a generic.* rule takes no message patterns");
    return rc;
}

/* ---- the rules file ---- */

static int compare_rules_by_id(const void *a, const void *b)
{
    const rd_rule *ra = *(const rd_rule *const *)a, *rb = *(const rd_rule *const *)b;
    int cmp = strcmp(ra->id, rb->id);
    return cmp ? cmp : (ra < rb ? -1 : ra > rb);
}

/* Sorting pointers (ties kept in file order) finds duplicates in n log n;
 * the later definition is the one reported. */
static int check_unique_rule_ids(const rd_yctx *c, const rd_ruleset *rs)
{
    if (rs->n_rules < 2)
        return RD_OK;
    const rd_rule **byid = malloc(rs->n_rules * sizeof *byid);
    if (!byid)
        return rd_yerr(c, 0, "rules", "out of memory");
    for (size_t i = 0; i < rs->n_rules; i++)
        byid[i] = &rs->rules[i];
    qsort(byid, rs->n_rules, sizeof *byid, compare_rules_by_id);
    int rc = RD_OK;
    for (size_t i = 1; i < rs->n_rules && rc == RD_OK; i++) {
        if (strcmp(byid[i - 1]->id, byid[i]->id) == 0) {
            char p[RD_YPATH_MAX];
            snprintf(p, sizeof p, "rules[%zu].id", (size_t)(byid[i] - rs->rules));
            rc = rd_yerr(c, byid[i]->line, p, "duplicate rule id \"%s\" (first at line %d)",
                         byid[i]->id, byid[i - 1]->line);
        }
    }
    free(byid);
    return rc;
}

static int parse_rules_list(const rd_yctx *c, const rd_ynode *list, rd_ruleset *rs)
{
    int rc = rd_yexpect(c, list, "rules", RD_YSEQ);
    if (rc != RD_OK)
        return rc;
    if (list->n > RD_RULES_MAX)
        return rd_yerr(c, list->line, "rules", "more than %d rules", RD_RULES_MAX);
    if (list->n == 0)
        return RD_OK;
    rs->rules = calloc(list->n, sizeof *rs->rules);
    if (!rs->rules)
        return rd_yerr(c, list->line, "rules", "out of memory");
    rs->n_rules = list->n;
    for (size_t i = 0; i < list->n && rc == RD_OK; i++) {
        char p[RD_YPATH_MAX];
        rc = parse_rule(c, list->items[i], rd_ypath_index(p, "rules", i), &rs->rules[i]);
    }
    return rc == RD_OK ? check_unique_rule_ids(c, rs) : rc;
}

static int parse_suggestions(const rd_yctx *c, const rd_ynode *root, rd_ruleset *rs)
{
    static const char *const keys[] = {"transient", "input_validation", "external_service",
                                       "permission", "logic", "resource", "unknown", NULL};
    const rd_ynode *map = rd_ymap_get(root, "suggestions");
    if (!map)
        return rd_yerr(c, root->line, "suggestions",
                       "missing (a suggestion for each of the 7 categories is required)");
    int rc = rd_ymap_check(c, map, "suggestions", keys);
    for (size_t i = 0; keys[i] && rc == RD_OK; i++) {
        char p[RD_YPATH_MAX];
        if (!rd_ymap_get(map, keys[i]))
            return rd_yerr(c, map->key_line, rd_ypath(p, "suggestions", keys[i]),
                           "missing (all 7 categories need a suggestion)");
        /* keys[] lists the categories in enum order, starting at 1. */
        rc = rd_yget_str(c, map, "suggestions", keys[i], RD_SUGGESTION_MAX,
                         &rs->category_suggestion[i + 1]);
    }
    if (rc != RD_OK)
        return rc;
    /* Slot 0 (unspecified) gets the unknown text so no entry is ever NULL. */
    rs->category_suggestion[0] = strdup(rs->category_suggestion[RD_CAT_UNKNOWN]);
    if (!rs->category_suggestion[0])
        return rd_yerr(c, map->key_line, "suggestions", "out of memory");
    return RD_OK;
}

static int parse_unknown(const rd_yctx *c, const rd_ynode *root, rd_ruleset *rs)
{
    static const char *const keys[] = {"retryability", NULL};
    rs->unknown_retryability = RD_TRANSIENT; /* 000 section 1.3 */
    const rd_ynode *map = rd_ymap_get(root, "unknown");
    if (!map)
        return RD_OK;
    int rc = rd_ymap_check(c, map, "unknown", keys);
    const rd_ynode *r = rd_ymap_get(map, "retryability");
    if (rc == RD_OK && r)
        rc = rd_parse_retryability(c, r, "unknown.retryability", &rs->unknown_retryability);
    return rc;
}

/* The compiled matcher that rd_classify uses; built once here so no call
 * pays for it. */
static int compile_rules(const rd_yctx *c, rd_ruleset *rs)
{
    int rc = rd_matcher_build(rs, &rs->matcher);
    if (rc == RD_ERR_NOMEM)
        return rd_yerr(c, 0, "rules", "out of memory compiling the message patterns");
    if (rc != RD_OK)
        return rd_yerr(c, 0, "rules", "too many message patterns to compile");
    return RD_OK;
}

int rd_rules_load(const rd_yctx *c, rd_ruleset *rs)
{
    static const char *const keys[] = {"unknown", "suggestions", "rules", "word_weights",
                                       "words", NULL};
    rd_ynode *root;
    int rc = rd_yaml_load(c, &root);
    if (rc != RD_OK)
        return rc;
    rc = rd_yexpect(c, root, "(file)", RD_YMAP);
    if (rc == RD_OK)
        rc = rd_ymap_check(c, root, "", keys);
    if (rc == RD_OK)
        rc = parse_unknown(c, root, rs);
    if (rc == RD_OK)
        rc = parse_suggestions(c, root, rs);
    const rd_ynode *rules = rd_ymap_get(root, "rules");
    if (rc == RD_OK && rules)
        rc = parse_rules_list(c, rules, rs);
    if (rc == RD_OK)
        rc = rd_words_parse(c, root, &rs->words);
    if (rc == RD_OK)
        rc = rd_word_weights_parse(c, root, &rs->word_weights);
    rd_yaml_free(root);
    return rc == RD_OK ? compile_rules(c, rs) : rc;
}

void rd_ruleset_clear(rd_ruleset *rs)
{
    rd_matcher_free(rs->matcher); /* refers to the rules: freed before them */
    rd_word_model_free(rs->words);
    rd_word_weights_free(rs->word_weights);
    for (size_t i = 0; rs->rules && i < rs->n_rules; i++) {
        rd_rule *r = &rs->rules[i];
        free(r->id);
        rd_match_clear(&r->when);
        free(r->suggestion);
        free(r->file);
    }
    free(rs->rules);
    for (size_t i = 0; i < RD_CAT_COUNT; i++)
        free(rs->category_suggestion[i]);
    memset(rs, 0, sizeof *rs);
}
