/* Error classification: rules from the loaded rules file applied to one
 * error report. See classify.h for the order of evaluation.
 *
 * Everything here reads caller memory only within the bounds it was given
 * (message_len for the message, NUL termination for the short strings),
 * allocates nothing and keeps no state, so any number of threads may call
 * it at once. */
#include "domain/classify.h"
#include "domain/type_in_text.h"

#include <string.h>

#include "domain/matcher.h"
#include "domain/trace.h"
#include "domain/word_weights.h"
#include "domain/words.h"

#ifdef __SSE2__
#include <emmintrin.h>
#endif

/* Retry hints above one hour are either bogus or useless to an agent turn. */
#define RETRY_HINT_MAX_MS INT64_C(3600000)

/* U+FFFD, written in place of NUL bytes and invalid UTF-8 in model text. */
static const char REPLACEMENT_CHAR[] = "\xEF\xBF\xBD";

/* ---- byte helpers (ASCII folding only: rules are ASCII, messages any bytes) ---- */

static inline unsigned char fold(unsigned char c)
{
    return (c >= 'A' && c <= 'Z') ? (unsigned char)(c + ('a' - 'A')) : c;
}

static inline bool is_digit(unsigned char c) { return c >= '0' && c <= '9'; }

static inline bool is_alpha(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* A "token" byte for boundary checks: [A-Za-z0-9_]. */
static inline bool is_word(unsigned char c) { return is_alpha(c) || is_digit(c) || c == '_'; }

static bool eq_fold_n(const unsigned char *a, const unsigned char *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (fold(a[i]) != fold(b[i]))
            return false;
    return true;
}

static inline const char *or_empty(const char *s) { return s ? s : ""; }

/* Position of the first case-insensitive occurrence of pat[0..m) in
 * hay[from..n), or SIZE_MAX. Compares in place: no lowered copy of a
 * 64 KiB message is ever made. */
static size_t find_fold(const unsigned char *hay, size_t n, size_t from,
                        const unsigned char *pat, size_t m)
{
    if (m == 0 || m > n)
        return SIZE_MAX;
    unsigned char first = fold(pat[0]);
    for (size_t i = from; i + m <= n; i++) {
        if (fold(hay[i]) == first && eq_fold_n(hay + i + 1, pat + 1, m - 1))
            return i;
    }
    return SIZE_MAX;
}

/* ---- message patterns ---- */

static bool boundaries_hold(const unsigned char *msg, size_t len, size_t at,
                            const rd_pattern *p)
{
    if (p->boundary_start && at > 0 && is_word(msg[at - 1]))
        return false;
    size_t end = at + p->len;
    if (p->boundary_end && end < len && is_word(msg[end]))
        return false;
    return true;
}

/* An empty pattern never matches: it would otherwise match every message. */
static bool pattern_matches(const unsigned char *msg, size_t len, const rd_pattern *p)
{
    if (!p->text || p->len == 0)
        return false;
    const unsigned char *pat = (const unsigned char *)p->text;
    for (size_t at = find_fold(msg, len, 0, pat, p->len); at != SIZE_MAX;
         at = find_fold(msg, len, at + 1, pat, p->len)) {
        if (boundaries_hold(msg, len, at, p))
            return true;
    }
    return false;
}

static bool match_patterns(const rd_pattern *patterns, size_t n, const rd_tool_error *err)
{
    if (n == 0)
        return true;
    const unsigned char *msg = (const unsigned char *)err->message;
    size_t len = msg ? err->message_len : 0;
    for (size_t i = 0; i < n; i++)
        if (pattern_matches(msg, len, &patterns[i]))
            return true;
    return false;
}

/* Cheap field checks first; the message scan is the only costly one. */
bool rd_match_error(const rd_match *m, const char *tool_id, const rd_tool_error *err)
{
    return rd_match_fields_hold(m, tool_id, err) && match_patterns(m->patterns, m->n_patterns, err);
}

/* ---- rule selection ---- */

/* The rules one at a time, for rulesets without a compiled matcher (built
 * by hand, as in tests): the same order as rd_matcher_winner, with every
 * pattern searched separately. */
typedef enum { EVAL_STRUCTURED, EVAL_MESSAGE, EVAL_GENERIC } eval_pass;

static eval_pass pass_of(const rd_rule *r)
{
    if (rd_rule_is_generic(r))
        return EVAL_GENERIC;
    return rd_match_is_structured(&r->when) ? EVAL_STRUCTURED : EVAL_MESSAGE;
}

static const rd_rule *first_match(const rd_ruleset *rules, eval_pass pass, const char *tool_id,
                                  const rd_tool_error *err)
{
    for (size_t i = 0; i < rules->n_rules; i++) {
        const rd_rule *r = &rules->rules[i];
        if (pass_of(r) == pass && rd_match_error(&r->when, tool_id, err))
            return r;
    }
    return NULL;
}

static const rd_rule *winning_rule(const rd_ruleset *rules, const char *tool_id,
                                   const rd_tool_error *err)
{
    if (!rules || !rules->rules)
        return NULL;
    if (rules->matcher)
        return rd_matcher_winner(rules->matcher, rules, tool_id, err);
    const rd_rule *r = first_match(rules, EVAL_STRUCTURED, tool_id, err);
    if (!r)
        r = first_match(rules, EVAL_MESSAGE, tool_id, err);
    return r ? r : first_match(rules, EVAL_GENERIC, tool_id, err);
}

/* The structured pass alone, with the same semantics on both paths. */
static const rd_rule *structured_rule(const rd_ruleset *rules, const char *tool_id,
                                      const rd_tool_error *err)
{
    if (!rules || !rules->rules)
        return NULL;
    if (rules->matcher)
        return rd_matcher_structured_winner(rules->matcher, rules, tool_id, err);
    return first_match(rules, EVAL_STRUCTURED, tool_id, err);
}

static const rd_override *winning_override(const rd_tool_config *tool, const char *tool_id,
                                           const rd_tool_error *err)
{
    if (!tool || !tool->overrides)
        return NULL;
    for (size_t i = 0; i < tool->n_overrides; i++)
        if (rd_match_error(&tool->overrides[i].when, tool_id, err))
            return &tool->overrides[i];
    return NULL;
}

static const char *category_suggestion(const rd_ruleset *rules, rd_category c)
{
    if (!rules || (int)c < 0 || c >= RD_CAT_COUNT || !rules->category_suggestion[c])
        return "";
    return rules->category_suggestion[c];
}

static int64_t cap_hint(int64_t ms) { return ms > RETRY_HINT_MAX_MS ? RETRY_HINT_MAX_MS : ms; }

/* Given hints are capped like extracted ones: the decision core must never
 * be told to wait longer than any turn could last. The text is only read
 * for a hint when the answer is transient: nothing retries a permanent
 * error, so its hint would be unused work. */
static int64_t retry_after_of(const rd_tool_error *err, rd_retryability final)
{
    if (err->retry_after_ms > 0)
        return cap_hint(err->retry_after_ms);
    if (final != RD_TRANSIENT || !err->message)
        return 0;
    return rd_retry_hint_from_text(err->message, err->message_len);
}

/* The suggestion follows the final answer: the override's own text, else
 * the base rule's own text, else the default of the final category (so an
 * override that moves an error to another category also moves the generic
 * advice with it).
 *
 * rule_id keeps naming the base rule when an override applies; `overridden`
 * says the manifest changed fields, and the manifest itself is found from
 * tool_id, so both halves of the explanation stay available. */
void rd_classify(const rd_ruleset *rules, const rd_tool_config *tool, const char *tool_id,
                 const rd_tool_error *err, rd_classification *out)
{
    static const rd_tool_error no_error = {.message = "", .code = "", .exception_type = ""};
    if (!err)
        err = &no_error;

    const rd_rule *rule = winning_rule(rules, tool_id, err);
    /* No type given, and nothing decided or only a weak word: a type the
     * text names stands for the field (domain/type_in_text.h). It replaces
     * a weak word only when a specific type's table holds it, as a
     * specific type given as the field outranks the text. Only these
     * errors pay for it. */
    char named[RD_TYPE_IN_TEXT_MAX];
    if ((!rule || rd_rule_is_weak(rule))
        && (!err->exception_type || !err->exception_type[0])
        && rd_type_named_in_text(err->message, err->message_len, named, sizeof named)) {
        rd_tool_error typed = *err;
        typed.exception_type = named;
        if (!rule) {
            rule = winning_rule(rules, tool_id, &typed);
        } else {
            /* Only the structured pass can hold a specific type's rule; the
             * text was read once already. */
            const rd_rule *by_type = structured_rule(rules, tool_id, &typed);
            if (by_type && rd_rule_tier(by_type->id) == RD_TIER_EXCEPTION)
                rule = by_type;
        }
    }
    const char *own_suggestion = NULL;
    rd_error_kind rule_kind = RD_KIND_UNSPECIFIED;
    if (rule) {
        out->retryability = rule->retryability;
        out->category = rule->category;
        out->rule_id = or_empty(rule->id);
        out->decided_by = rules->matcher
                              ? rd_matcher_rule_tier(rules->matcher, (size_t)(rule - rules->rules))
                              : rd_rule_tier(rule->id);
        own_suggestion = rule->suggestion;
        rule_kind = rule->kind;
        /* A rule whose word carries its retryability less surely gives way
         * when the words make the other one likely and name its category; a
         * rule whose errors spread over categories keeps its retryability
         * and takes the category the words name clearly. Either way its own
         * suggestion was written for its own answer. */
        rd_retryability r_words;
        rd_category by_words;
        if (rule->retryability_from_words &&
            rd_word_weights_answer(rules->word_weights, err->message, err->message_len,
                                   &r_words, &by_words, NULL) &&
            r_words != out->retryability && by_words != RD_CAT_UNKNOWN) {
            out->retryability = r_words;
            out->category = by_words;
            own_suggestion = NULL;
        } else if (rule->category_from_words &&
                   rd_word_weights_decide(rules->word_weights, err->message, err->message_len,
                                          out->retryability, &by_words, NULL) &&
                   by_words != out->category) {
            out->category = by_words;
            own_suggestion = NULL;
        }
    } else if (rules && (rd_words_decide(rules->words, err->message, err->message_len,
                                         &out->retryability, &out->category, NULL) ||
                         rd_word_weights_answer_named(rules->word_weights, err->message,
                                                      err->message_len, &out->retryability,
                                                      &out->category))) {
        /* the words' counts when they are sure, else their weights: both
         * the words tier's answer; a category the weights name unsurely
         * still beats `unknown` once the words decided the retryability */
        out->rule_id = RD_WORDS_RULE_ID;
        out->decided_by = RD_TIER_WORDS;
    } else {
        /* 000 section 1.3: an unknown error is transient unless configured. */
        out->retryability = (rules && rules->unknown_retryability == RD_PERMANENT) ? RD_PERMANENT
                                                                                   : RD_TRANSIENT;
        out->category = RD_CAT_UNKNOWN;
        out->rule_id = "unknown";
        out->decided_by = RD_TIER_DEFAULT;
    }

    const rd_override *ov = winning_override(tool, tool_id, err);
    out->overridden = ov != NULL;
    if (ov) {
        if (ov->retryability != RD_RETRYABILITY_UNSPECIFIED)
            out->retryability = ov->retryability;
        if (ov->category != RD_CAT_UNSPECIFIED)
            out->category = ov->category;
        if (ov->suggestion)
            own_suggestion = ov->suggestion;
    }

    out->suggestion = own_suggestion ? own_suggestion : category_suggestion(rules, out->category);
    out->kind = err->kind != RD_KIND_UNSPECIFIED ? err->kind : rule_kind;
    out->executed = rd_kind_executed(out->kind);
    out->retry_after_ms = retry_after_of(err, out->retryability);
    /* judged later, and only for a tool of declared effects (domain/effects.h) */
    out->effects = RD_EFFECTS_UNSPECIFIED;
    out->effect_safety = RD_EFFECT_SAFETY_UNSPECIFIED;
    out->effect_reason = NULL;
}

/* ---- tiers ---- */

static bool has_prefix(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

rd_tier rd_rule_tier(const char *rule_id)
{
    if (!rule_id || !*rule_id || strcmp(rule_id, "unknown") == 0
        || strcmp(rule_id, "unspecified") == 0)
        return RD_TIER_DEFAULT;
    if (has_prefix(rule_id, "learned:"))
        return RD_TIER_LEARNED;
    if (strcmp(rule_id, RD_WORDS_RULE_ID) == 0)
        return RD_TIER_WORDS;
    if (has_prefix(rule_id, "text."))
        return RD_TIER_MESSAGE;
    if (has_prefix(rule_id, RD_GENERIC_PREFIX))
        return RD_TIER_GENERIC;
    if (has_prefix(rule_id, "exception."))
        return RD_TIER_EXCEPTION;
    return RD_TIER_STRUCTURED;
}

const char *rd_tier_name(rd_tier t)
{
    static const char *const names[RD_TIER_COUNT] = {
        "unspecified", "structured", "exception", "message", "generic", "learned", "default",
        "words"};
    return (int)t >= 0 && t < RD_TIER_COUNT ? names[t] : "unspecified";
}

/* ---- retry hints in text ---- */

typedef struct hint_trigger {
    const char *text;
    size_t len;
    int64_t unitless_ms;   /* what a bare number after the trigger means */
} hint_trigger;

#define TRIGGER(text, unitless_ms) {text, sizeof text - 1, unitless_ms}

/* Longer spellings first so "retry-after-ms" is not read as "retry-after". */
static const hint_trigger HINT_TRIGGERS[] = {
    TRIGGER("retry-after-ms", 1),     TRIGGER("retry_after_ms", 1),
    TRIGGER("retry-after", 1000),     TRIGGER("retry_after", 1000),
    TRIGGER("retry after", 1000),     TRIGGER("retrydelay", 1000),
    TRIGGER("try again in", 1000),    TRIGGER("try again after", 1000),
    TRIGGER("retry in", 1000),
};

typedef struct time_unit {
    const char *word;
    int64_t ms;
} time_unit;

/* Milliseconds before minutes so "ms" is never read as "m" + "s". */
static const time_unit TIME_UNITS[] = {
    {"milliseconds", 1}, {"millisecond", 1}, {"msecs", 1},      {"msec", 1},
    {"ms", 1},           {"seconds", 1000},  {"second", 1000},  {"secs", 1000},
    {"sec", 1000},       {"s", 1000},        {"minutes", 60000}, {"minute", 60000},
    {"mins", 60000},     {"min", 60000},     {"m", 60000},      {"hours", 3600000},
    {"hour", 3600000},   {"hrs", 3600000},   {"hr", 3600000},   {"h", 3600000},
};

/* Length of the unit word at s (0 if none); a unit must not run on into
 * more letters ("5 more minutes" has no unit right after the number). */
static size_t parse_unit(const unsigned char *s, size_t n, int64_t *unit_ms)
{
    for (size_t i = 0; i < sizeof TIME_UNITS / sizeof TIME_UNITS[0]; i++) {
        size_t w = strlen(TIME_UNITS[i].word);
        if (w <= n && eq_fold_n(s, (const unsigned char *)TIME_UNITS[i].word, w)
            && (w == n || !is_alpha(s[w]))) {
            *unit_ms = TIME_UNITS[i].ms;
            return w;
        }
    }
    return 0;
}

/* A decimal number at s[*i] in thousandths ("1.898" -> 1898). The whole
 * part saturates so no digit string can overflow. */
static int64_t parse_thousandths(const unsigned char *s, size_t n, size_t *i)
{
    const int64_t whole_max = INT64_C(1000000000);
    int64_t whole = 0;
    for (; *i < n && is_digit(s[*i]); (*i)++)
        if (whole < whole_max)
            whole = whole * 10 + (s[*i] - '0');
    int64_t frac = 0, scale = 100;
    if (*i + 1 < n && s[*i] == '.' && is_digit(s[*i + 1])) {
        for ((*i)++; *i < n && is_digit(s[*i]); (*i)++, scale /= 10)
            frac += scale > 0 ? (s[*i] - '0') * scale : 0;
    }
    return whole * 1000 + frac;
}

/* A duration such as "30", "1.8s", "20 seconds" or Go's "7m12.5s". */
static int64_t parse_duration_ms(const unsigned char *s, size_t n, int64_t unitless_ms)
{
    size_t i = 0;
    int64_t total = 0;
    while (i < n && is_digit(s[i]) && total < RETRY_HINT_MAX_MS) {
        int64_t thousandths = parse_thousandths(s, n, &i);
        size_t j = (i < n && s[i] == ' ') ? i + 1 : i;
        int64_t unit_ms = unitless_ms;
        size_t unit_len = parse_unit(s + j, n - j, &unit_ms);
        total += thousandths / 1000 * unit_ms + thousandths % 1000 * unit_ms / 1000;
        if (unit_len == 0)
            break; /* a bare number ends the duration */
        i = j + unit_len;
    }
    return cap_hint(total);
}

/* Separators between a trigger and its number: "Retry-After: 30",
 * "retry_after=2", "\"retryDelay\": \"22s\"". */
static bool is_hint_separator(unsigned char c)
{
    return c == ' ' || c == '\t' || c == ':' || c == '=' || c == '"' || c == '\'';
}

static int64_t hint_after_trigger(const unsigned char *msg, size_t len, size_t at,
                                  const hint_trigger *t)
{
    size_t i = at + t->len;
    for (int skipped = 0; i < len && skipped < 8 && is_hint_separator(msg[i]); skipped++)
        i++;
    if (i >= len || !is_digit(msg[i]))
        return 0;
    return parse_duration_ms(msg + i, len - i, t->unitless_ms);
}

/* Tries every trigger listed before `*best` at m[at]; a match with a
 * number there becomes the new best. */
static void try_triggers_at(const unsigned char *m, size_t len, size_t at, size_t *best,
                            int64_t *best_ms)
{
    for (size_t k = 0; k < *best; k++) {
        const hint_trigger *t = &HINT_TRIGGERS[k];
        if (t->len > len - at || !eq_fold_n(m + at, (const unsigned char *)t->text, t->len))
            continue;
        int64_t ms = hint_after_trigger(m, len, at, t);
        if (ms > 0) {
            *best = k;
            *best_ms = ms;
            return;
        }
    }
}

static inline bool folds_to(const unsigned char *s, const char *lower, size_t n)
{
    return eq_fold_n(s, (const unsigned char *)lower, n);
}

/* Position of the next 'y' or 'Y' in m[from..len), or len. Most error
 * text has none, so many bytes are looked at a time: sixteen with SSE2
 * (every x86-64), eight otherwise, where a word folded to lower case and
 * xor'ed with "yyyyyyyy" has a zero byte where a 'y' was. Setting bit 5
 * folds only 'Y' onto 'y'. */
static size_t next_y(const unsigned char *m, size_t from, size_t len)
{
    const uint64_t ones = UINT64_C(0x0101010101010101), tops = UINT64_C(0x8080808080808080);
    const uint64_t lower = UINT64_C(0x2020202020202020), ys = UINT64_C(0x7979797979797979);
    size_t i = from;
#ifdef __SSE2__
    const __m128i fold = _mm_set1_epi8(0x20), y = _mm_set1_epi8('y');
    for (; i < len && len - i >= 16; i += 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(m + i));
        unsigned hits = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_or_si128(v, fold), y));
        if (hits)
            return i + (size_t)__builtin_ctz(hits);
    }
#endif
    for (; i < len && len - i >= 8; i += 8) {
        uint64_t w;
        memcpy(&w, m + i, sizeof w);
        uint64_t x = (w | lower) ^ ys;
        if ((x - ones) & ~x & tops)
            break;
    }
    while (i < len && (m[i] | 0x20) != 'y')
        i++;
    return i;
}

/* One pass over the text. Every trigger contains "try", at its start
 * ("try again in") or after "re" ("retry-after"), and 'y' is rare in
 * error text, so only the places around a "try" are compared. The answer
 * is the same as trying the triggers one by one in table order: the first
 * occurrence, with a number, of the earliest trigger that has one. */
int64_t rd_retry_hint_from_text(const char *msg, size_t len)
{
    if (!msg || len == 0)
        return 0;
    const unsigned char *m = (const unsigned char *)msg;
    size_t best = sizeof HINT_TRIGGERS / sizeof HINT_TRIGGERS[0];
    int64_t best_ms = 0;
    for (size_t y = next_y(m, 2, len); y < len && best > 0; y = next_y(m, y + 1, len)) {
        if (!folds_to(m + y - 2, "tr", 2))
            continue;
        if (y >= 4 && folds_to(m + y - 4, "re", 2))
            try_triggers_at(m, len, y - 4, &best, &best_ms);
        try_triggers_at(m, len, y - 2, &best, &best_ms);
    }
    return best_ms;
}

/* ---- the fixed meaning of kinds (004 decision A) ---- */

typedef struct kind_meaning {
    const char *name;
    bool executed;
} kind_meaning;

/* UNSPECIFIED counts as executed: an executor reports an error after it
 * tried the call, and only a kind that says otherwise (refused before it
 * ran) may make a turn look as if no tool was executed (004 decision B).
 * Guessing "not executed" would fail turns whose tools did run. */
static const kind_meaning KIND_MEANINGS[RD_KIND_COUNT] = {
    [RD_KIND_UNSPECIFIED] = {"", true},
    [RD_KIND_UNKNOWN_TOOL] = {"unknown_tool", false},
    [RD_KIND_NOT_PERMITTED] = {"not_permitted", false},
    [RD_KIND_INVALID_PARAMETERS] = {"invalid_parameters", false},
    [RD_KIND_LIMIT_EXCEEDED] = {"limit_exceeded", false},
    [RD_KIND_CANCELED] = {"canceled", false},
    [RD_KIND_TIMEOUT] = {"timeout", true},
    [RD_KIND_TRANSPORT_ERROR] = {"transport_error", true},
    [RD_KIND_EXECUTION_ERROR] = {"execution_error", true},
    [RD_KIND_INTERNAL_ERROR] = {"internal_error", true},
};

bool rd_kind_executed(rd_error_kind kind)
{
    if ((int)kind < 0 || kind >= RD_KIND_COUNT)
        return true; /* same reasoning as UNSPECIFIED */
    return KIND_MEANINGS[kind].executed;
}

const char *rd_kind_name(rd_error_kind kind)
{
    if ((int)kind < 0 || kind >= RD_KIND_COUNT)
        return "";
    return KIND_MEANINGS[kind].name;
}

const char *rd_category_name(rd_category c)
{
    switch (c) {
    case RD_CAT_TRANSIENT: return "transient";
    case RD_CAT_INPUT_VALIDATION: return "input_validation";
    case RD_CAT_EXTERNAL_SERVICE: return "external_service";
    case RD_CAT_PERMISSION: return "permission";
    case RD_CAT_LOGIC: return "logic";
    case RD_CAT_RESOURCE: return "resource";
    case RD_CAT_UNKNOWN: return "unknown";
    case RD_CAT_UNSPECIFIED: break;
    }
    return "";
}

rd_text rd_retryability_text(rd_retryability r)
{
    switch (r) {
    case RD_TRANSIENT: return RD_TEXT("transient");
    case RD_PERMANENT: return RD_TEXT("permanent");
    case RD_RETRYABILITY_UNSPECIFIED: break;
    }
    return RD_TEXT("");
}

const char *rd_retryability_name(rd_retryability r)
{
    return rd_retryability_text(r).s;
}

/* ---- the "Tool Execution Failed" text (001) ---- */

/* Output that stops at the first piece that does not fit, so truncation
 * never splits a UTF-8 sequence and never resumes with a later, shorter one. */
typedef struct text_out {
    char *buf;
    size_t cap;   /* bytes available including the terminating NUL */
    size_t len;
    bool full;
} text_out;

/* Caller bytes as valid UTF-8 without NULs: the result goes into a proto
 * string field and to a model, and both need valid text. */
static void put_sanitized(text_out *o, const char *s, size_t n)
{
    if (o->full)
        return;
    size_t used;
    o->len += rd_utf8_sanitize(o->buf + o->len, o->cap - 1 - o->len, s, n, REPLACEMENT_CHAR,
                               sizeof REPLACEMENT_CHAR - 1, &used);
    o->full = used < n;
}

/* The fixed lines: ASCII needs no check, and may be cut at any byte. */
static void put_ascii(text_out *o, const char *s)
{
    if (o->full)
        return;
    size_t n = strlen(s), room = o->cap - 1 - o->len;
    if (n > room) {
        n = room;
        o->full = true;
    }
    memcpy(o->buf + o->len, s, n);
    o->len += n;
}

#define LLM_HEAD "Tool Execution Failed\nTool: "
#define LLM_TYPE "\nError Type: "
#define LLM_MESSAGE "\nMessage: "
#define LLM_TAIL RD_LLM_TAIL
#define LIT(s) (s), sizeof(s) - 1

static char *put_bytes(char *p, const char *s, size_t n)
{
    memcpy(p, s, n);
    return p + n;
}

/* The text with the caller's pieces copied unchecked, or SIZE_MAX when it
 * would not fit in cap - 1 bytes. Unterminated. */
static size_t llm_message_unchecked(char *buf, size_t cap, rd_text tool, rd_text type,
                                    const char *message, size_t message_len)
{
    size_t fixed = sizeof LLM_HEAD + sizeof LLM_TYPE + sizeof LLM_MESSAGE + sizeof LLM_TAIL - 4;
    if (message_len > cap - 1 || tool.len + type.len + fixed > cap - 1 - message_len)
        return SIZE_MAX;
    char *p = put_bytes(buf, LIT(LLM_HEAD));
    p = put_bytes(p, tool.s, tool.len);
    p = put_bytes(p, LIT(LLM_TYPE));
    p = put_bytes(p, type.s, type.len);
    p = put_bytes(p, LIT(LLM_MESSAGE));
    p = put_bytes(p, message, message_len);
    p = put_bytes(p, LIT(LLM_TAIL));
    return (size_t)(p - buf);
}

size_t rd_llm_message(char *buf, size_t cap, const char *tool_id, const char *error_type,
                      const char *message, size_t message_len)
{
    if (!buf || cap == 0)
        return 0;
    const char *tool = or_empty(tool_id), *type = or_empty(error_type);
    if (!message)
        message_len = 0;
    /* The usual case: the whole text fits and the caller's pieces are
     * valid UTF-8 without NULs, so the checked writing below would give
     * the same bytes; one check of the result costs less. */
    rd_text tool_text = {tool, strlen(tool)}, type_text = {type, strlen(type)};
    size_t len = llm_message_unchecked(buf, cap, tool_text, type_text, message ? message : "",
                                       message_len);
    if (len != SIZE_MAX && rd_utf8_valid_len(buf, len) == len) {
        buf[len] = '\0';
        return len;
    }
    text_out o = {.buf = buf, .cap = cap, .len = 0, .full = false};
    put_ascii(&o, LLM_HEAD);
    put_sanitized(&o, tool, tool_text.len);
    put_ascii(&o, LLM_TYPE);
    put_sanitized(&o, type, type_text.len);
    put_ascii(&o, LLM_MESSAGE);
    put_sanitized(&o, message ? message : "", message_len);
    put_ascii(&o, LLM_TAIL);
    buf[o.len] = '\0';
    return o.len;
}

size_t rd_llm_message_valid(char *buf, size_t cap, rd_text tool, rd_text type,
                            const char *message, size_t message_len)
{
    if (!buf || cap == 0 || !message || !tool.s || !type.s)
        return rd_llm_message(buf, cap, tool.s, type.s, message, message_len);
    size_t len = llm_message_unchecked(buf, cap, tool, type, message, message_len);
    if (len == SIZE_MAX) /* cut: rd_llm_message knows where */
        return rd_llm_message(buf, cap, tool.s, type.s, message, message_len);
    buf[len] = '\0';
    return len;
}
