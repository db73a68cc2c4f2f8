/* The multi-pattern matcher (server/domain/matcher.c): on hand-built
 * rules, every overlapping occurrence found in one pass, word boundaries,
 * the bound on the rules visited, NULs and lengths, linear time on 64 KiB
 * and the walks side by side that read a text; on the shipped rules, the same rule
 * as the rules evaluated one by one, and a 64 KiB message in linear time. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "config/config.h"
#include "domain/classify.h"
#include "domain/err.h"
#include "domain/matcher.h"
#include "classify_fixture.h"
#include "classify_shipped.h"

/* ---- hand-built rules ---- */

static rd_pattern MP_HERS[] = {{(char *)"hers", 4, false, false}};
static rd_pattern MP_HIS[] = {{(char *)"his", 3, false, false}};
static rd_pattern MP_SHE[] = {{(char *)"she", 3, false, false}};
static rd_pattern MP_HE[] = {{(char *)"he", 2, false, false}};
static rd_pattern MP_ABC[] = {{(char *)"abc", 3, false, false}};
static rd_pattern MP_BC[] = {{(char *)"bc", 2, false, false}};
static rd_pattern MP_CAT[] = {{(char *)"cat", 3, true, true}};
static rd_pattern MP_429[] = {{(char *)"429", 3, true, true}};
static rd_pattern MP_END[] = {{(char *)"end", 3, false, true}};
/* longer than the second walk's lead-in (matcher.c), one inside another,
 * and one whose first bytes repeat, so a walk started inside a run of them
 * takes many bytes to reach the state of one started before it */
static rd_pattern MP_RESET[] = {{(char *)"connection reset by peer during tls", 35, false, false}};
static rd_pattern MP_PEER[] = {{(char *)"peer during", 11, false, false}};
static rd_pattern MP_RUN[] = {{(char *)"aaaaaaaaaaaaaaaaaaab", 20, false, false}};
/* longer than a third of the longest text below: a walk started inside
 * its run meets the exact state in no part */
#define A10 "aaaaaaaaaa"
static rd_pattern MP_LONG_RUN[] = {{(char *)A10 A10 A10 A10 A10 A10 A10 "c", 71, false, false}};
/* the same text twice in one rule, and shared with another rule */
static rd_pattern MP_SHARED[] = {{(char *)"bc", 2, false, false}, {(char *)"bc", 2, false, false}};

static rd_rule MATCHER_RULES[] = {
    {.id = (char *)"hers", .when = {.patterns = MP_HERS, .n_patterns = 1}},
    {.id = (char *)"his", .when = {.patterns = MP_HIS, .n_patterns = 1}},
    {.id = (char *)"she", .when = {.patterns = MP_SHE, .n_patterns = 1}},
    {.id = (char *)"he", .when = {.patterns = MP_HE, .n_patterns = 1}},
    {.id = (char *)"abc", .when = {.patterns = MP_ABC, .n_patterns = 1}},
    {.id = (char *)"bc", .when = {.patterns = MP_BC, .n_patterns = 1}},
    {.id = (char *)"cat", .when = {.patterns = MP_CAT, .n_patterns = 1}},
    {.id = (char *)"429", .when = {.patterns = MP_429, .n_patterns = 1}},
    {.id = (char *)"end", .when = {.patterns = MP_END, .n_patterns = 1}},
    {.id = (char *)"shared", .when = {.patterns = MP_SHARED, .n_patterns = 2}},
    {.id = (char *)"reset", .when = {.patterns = MP_RESET, .n_patterns = 1}},
    {.id = (char *)"peer", .when = {.patterns = MP_PEER, .n_patterns = 1}},
    {.id = (char *)"run", .when = {.patterns = MP_RUN, .n_patterns = 1}},
    {.id = (char *)"long_run", .when = {.patterns = MP_LONG_RUN, .n_patterns = 1}},
};

typedef struct hit_log {
    unsigned seen;    /* bit per rule index */
    size_t visits;
    size_t bound;     /* what visit returns */
} hit_log;

static size_t log_hit(void *ctx, size_t rule)
{
    hit_log *h = ctx;
    h->seen |= 1u << rule;
    h->visits++;
    return h->bound;
}

#define BIT(name) (1u << rule_index(name))

static unsigned rule_index(const char *id)
{
    for (unsigned i = 0; i < LEN(MATCHER_RULES); i++)
        if (strcmp(MATCHER_RULES[i].id, id) == 0)
            return i;
    fail_msg("no rule %s", id);
    return 0;
}

/* Rules hit in bytes[0..len), from a heap copy of exactly len bytes so
 * ASan sees any read past the end. */
static hit_log scan_bytes(const rd_matcher *m, const char *bytes, size_t len, size_t bound)
{
    char *copy = malloc(len ? len : 1);
    assert_non_null(copy);
    memcpy(copy, bytes, len);
    hit_log h = {0, 0, bound};
    rd_matcher_scan(m, copy, len, bound, log_hit, &h);
    free(copy);
    return h;
}

static unsigned hits(const rd_matcher *m, const char *text)
{
    return scan_bytes(m, text, strlen(text), SIZE_MAX).seen;
}

static int build_matcher_rules(void **state)
{
    rd_ruleset rs = {.rules = MATCHER_RULES, .n_rules = LEN(MATCHER_RULES)};
    rd_matcher *m = NULL;
    if (rd_matcher_build(&rs, &m) != RD_OK)
        return -1;
    *state = m;
    return 0;
}

static int free_matcher_rules(void **state)
{
    rd_matcher_free(*state);
    return 0;
}

static void test_matcher_overlapping_and_suffix_patterns(void **state)
{
    const rd_matcher *m = *state;
    assert_int_equal(rd_matcher_pattern_count(m), 13); /* "bc" twice in one rule counts once */
    /* every overlapping occurrence is found in one pass */
    assert_int_equal(hits(m, "ushers"), BIT("she") | BIT("he") | BIT("hers"));
    assert_int_equal(hits(m, "USHERS"), BIT("she") | BIT("he") | BIT("hers"));
    assert_int_equal(hits(m, "this"), BIT("his"));
    /* a pattern that is a suffix of another is reported with it */
    assert_int_equal(hits(m, "abc"), BIT("abc") | BIT("bc") | BIT("shared"));
    assert_int_equal(hits(m, "xbc"), BIT("bc") | BIT("shared"));
    assert_int_equal(hits(m, "ab c"), 0);
    assert_int_equal(hits(m, ""), 0);
    /* a rule listing the same pattern twice is visited once per occurrence */
    hit_log h = scan_bytes(m, "bc", 2, SIZE_MAX);
    assert_int_equal(h.visits, 2); /* rules "bc" and "shared" */
}

static void test_matcher_boundaries(void **state)
{
    const rd_matcher *m = *state;
    /* at the start and end of the buffer, and between non-token bytes */
    assert_int_equal(hits(m, "cat"), BIT("cat"));
    assert_int_equal(hits(m, "a cat."), BIT("cat"));
    assert_int_equal(hits(m, "(CAT)"), BIT("cat"));
    assert_int_equal(hits(m, "concat"), 0);
    assert_int_equal(hits(m, "cats"), 0);
    assert_int_equal(hits(m, "_cat"), 0);
    assert_int_equal(hits(m, "cat9"), 0);
    /* a rejected occurrence does not hide a later one */
    assert_int_equal(hits(m, "cats and a cat"), BIT("cat"));
    assert_int_equal(hits(m, "x4290 or 429"), BIT("429"));
    assert_int_equal(hits(m, "4290"), 0);
    /* boundary at one end only */
    assert_int_equal(hits(m, "weekend"), BIT("end"));
    assert_int_equal(hits(m, "endless"), 0);
    /* bytes >= 0x80 and NUL are not token bytes */
    assert_int_equal(scan_bytes(m, "\xC3" "cat\xA9", 5, SIZE_MAX).seen, BIT("cat"));
    assert_int_equal(scan_bytes(m, "\0cat\0", 5, SIZE_MAX).seen, BIT("cat"));
    /* NUL inside a would-be match breaks it; text after NUL is read */
    assert_int_equal(scan_bytes(m, "he\0rs", 5, SIZE_MAX).seen, BIT("he"));
    assert_int_equal(scan_bytes(m, "\0\0\0his", 6, SIZE_MAX).seen, BIT("his"));
    /* only len bytes are read */
    assert_int_equal(scan_bytes(m, "hers", 3, SIZE_MAX).seen, BIT("he"));
}

static void test_matcher_bound_limits_visits(void **state)
{
    const rd_matcher *m = *state;
    /* rules at or past the bound are not visited */
    hit_log h = scan_bytes(m, "ushers abc", 10, rule_index("he"));
    assert_int_equal(h.seen, BIT("she") | BIT("hers"));
}

static void test_matcher_64k_is_linear(void **state)
{
    const rd_matcher *m = *state;
    size_t len = 65536;
    char *big = malloc(len);
    assert_non_null(big);
    /* a hit at every other byte: each occurrence visits its rules once */
    for (size_t i = 0; i < len; i += 2)
        memcpy(big + i, "he", 2);
    hit_log h = scan_bytes(m, big, len, SIZE_MAX);
    assert_int_equal(h.seen, BIT("he"));
    assert_int_equal(h.visits, len / 2);
    /* the pattern at the very end of the buffer */
    memset(big, 'x', len);
    memcpy(big + len - 3, "cat", 3);
    big[len - 4] = ' ';
    assert_int_equal(scan_bytes(m, big, len, SIZE_MAX).seen, BIT("cat"));
    free(big);
}

/* `pattern` at every offset of texts of every length up to well past the
 * one from which four walks read them (matcher.c), the rest `filler`: the
 * rules `expect` are found, each occurrence visited once, wherever the
 * walks' parts meet. */
static void every_offset_of(const rd_matcher *m, const char *pattern, char filler,
                            unsigned expect, size_t visits)
{
    char text[160];
    size_t n = strlen(pattern);
    for (size_t len = n; len <= sizeof text; len++)
        for (size_t at = 0; at + n <= len; at++) {
            memset(text, filler, sizeof text);
            memcpy(text + at, pattern, n);
            hit_log h = scan_bytes(m, text, len, SIZE_MAX);
            if (h.seen != expect || h.visits != visits)
                fail_msg("\"%s\" at %zu of %zu bytes: rules %#x, %zu visits", pattern, at, len,
                         h.seen, h.visits);
        }
}

static void test_matcher_walks_find_every_offset(void **state)
{
    const rd_matcher *m = *state;
    every_offset_of(m, "hers", ' ', BIT("he") | BIT("hers"), 2);
    /* longer than the lead-in: where the walks meet inside it, the first
     * walk's state carries it across */
    every_offset_of(m, "connection reset by peer during tls", ' ', BIT("reset") | BIT("peer"), 2);
    /* a later walk starting inside the run of "a" reaches the exact state
     * only at its end; a "b" after fewer than 19 is no occurrence */
    char run[160];
    for (size_t len = 1; len <= sizeof run; len++)
        for (size_t b = 0; b < len; b++) {
            memset(run, 'a', sizeof run);
            run[b] = 'b';
            hit_log h = scan_bytes(m, run, len, SIZE_MAX);
            unsigned expect = b >= 19 ? BIT("run") : 0;
            if (h.seen != expect || h.visits != (b >= 19))
                fail_msg("b at %zu of %zu bytes of a: rules %#x, %zu visits", b, len, h.seen,
                         h.visits);
            /* and 70 of them before a "c": the exact state is carried
             * through whole parts to the next */
            run[b] = 'c';
            h = scan_bytes(m, run, len, SIZE_MAX);
            expect = b >= 70 ? BIT("long_run") : 0;
            if (h.seen != expect || h.visits != (b >= 70))
                fail_msg("c at %zu of %zu bytes of a: rules %#x, %zu visits", b, len, h.seen,
                         h.visits);
        }
}

/* rd_matcher_build on an empty ruleset and on rules without patterns */
static void test_matcher_without_patterns(void **state)
{
    rd_ruleset empty = {0};
    rd_matcher *m = NULL;
    assert_int_equal(rd_matcher_build(&empty, &m), RD_OK);
    assert_int_equal(rd_matcher_pattern_count(m), 0);
    hit_log h = {0, 0, SIZE_MAX};
    rd_matcher_scan(m, "anything", 8, SIZE_MAX, log_hit, &h);
    assert_int_equal(h.visits, 0);
    rd_matcher_free(m);
    rd_matcher_free(NULL);
}

/* ---- the shipped rules ---- */

/* xorshift: a fixed, portable sequence */
static uint32_t next_random(uint32_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 17;
    *s ^= *s << 5;
    return *s;
}

/* src into dst with each letter's case flipped at random (names compare
 * without regard to case), and now and then its last byte dropped (a name
 * that is a prefix of one a rule holds matches nothing). */
static const char *recased(char *dst, size_t size, const char *src, uint32_t *seed)
{
    size_t n = strlen(src);
    if (n >= size)
        return src;
    for (size_t i = 0; i < n; i++) {
        char c = src[i];
        if ((next_random(seed) & 1) && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')))
            c = (char)(c ^ 0x20);
        dst[i] = c;
    }
    if (n > 0 && next_random(seed) % 8 == 0)
        n--;
    dst[n] = '\0';
    return dst;
}

/* Messages stitched from the shipped patterns, cased at random, joined by
 * token and non-token bytes, with random structured fields: the compiled
 * matcher and the rule-by-rule evaluation must pick the same rule. */
static void test_shipped_matcher_agrees_with_rule_by_rule(void **state)
{
    const rd_config *cfg = *state;
    const rd_ruleset *rules = &cfg->rules;
    assert_non_null(rules->matcher);
    rd_ruleset plain = *rules;
    plain.matcher = NULL;
    static const char *const tools[] = {"bash", "read_file", "web_fetch", "flight_search"};
    static const char *const codes[] = {"", "-32602", "ECONNRESET", "E1", "insufficient_quota",
                                        "-32000", "api_error", "card_declined", "53300"};
    static const char *const excs[] = {"", "ValueError", "requests.exceptions.ReadTimeout",
                                       "TypeError", "KeyError", "x.errors.GraphRecursionError"};
    static const char separators[] = " _x9.\0:\xC3";
    uint32_t seed = 12345;
    char msg[512];
    for (int round = 0; round < 20000; round++) {
        size_t len = 0;
        int parts = 1 + (int)(next_random(&seed) % 4);
        for (int k = 0; k < parts; k++) {
            const rd_rule *r = &rules->rules[next_random(&seed) % rules->n_rules];
            if (r->when.n_patterns == 0)
                continue;
            const rd_pattern *p = &r->when.patterns[next_random(&seed) % r->when.n_patterns];
            if (len + p->len + 2 > sizeof msg)
                break;
            msg[len++] = separators[next_random(&seed) % (sizeof separators - 1)];
            for (size_t i = 0; i < p->len; i++) {
                char c = p->text[i];
                msg[len++] = (next_random(&seed) & 1) && c >= 'a' && c <= 'z' ? (char)(c - 32) : c;
            }
            if (next_random(&seed) & 1)
                msg[len++] = separators[next_random(&seed) % (sizeof separators - 1)];
        }
        static const int32_t statuses[] = {0, 0, 400, 402, 403, 404, 409, 429, 503};
        static const int32_t grpc_codes[] = {0, 0, 8, 14};
        /* half the time a code and an exception type some shipped rule
         * names (the type under a package prefix or not), so every rule on
         * names is reached, whatever pass it belongs to */
        const rd_match *named = &rules->rules[next_random(&seed) % rules->n_rules].when;
        const char *code = codes[next_random(&seed) % LEN(codes)];
        if (named->n_codes && (next_random(&seed) & 1))
            code = named->codes[next_random(&seed) % named->n_codes];
        char code_buf[160], exc_buf[160], dotted[160];
        code = recased(code_buf, sizeof code_buf, code, &seed);
        const char *exc = excs[next_random(&seed) % LEN(excs)];
        if (named->n_exception_types && (next_random(&seed) & 1)) {
            exc = named->exception_types[next_random(&seed) % named->n_exception_types];
            exc = recased(exc_buf, sizeof exc_buf, exc, &seed);
            if (next_random(&seed) & 1) {
                snprintf(dotted, sizeof dotted, "pkg.mod.%s", exc);
                exc = dotted;
            }
        }
        int32_t status = statuses[next_random(&seed) % LEN(statuses)];
        if (named->n_http_status && (next_random(&seed) & 1))
            status = named->http_status[next_random(&seed) % named->n_http_status].lo;
        rd_tool_error e = {.message = msg, .message_len = len,
                           .http_status = status,
                           .grpc_code = grpc_codes[next_random(&seed) % LEN(grpc_codes)],
                           .code = code,
                           .exception_type = exc,
                           .kind = (rd_error_kind)(next_random(&seed) % RD_KIND_COUNT),
                           .source = (rd_error_source)(next_random(&seed) % RD_SOURCE_COUNT)};
        const char *tool = tools[next_random(&seed) % LEN(tools)];
        rd_classification a, b;
        rd_classify(rules, NULL, tool, &e, &a);
        rd_classify(&plain, NULL, tool, &e, &b);
        if (strcmp(a.rule_id, b.rule_id) != 0)
            fail_msg("round %d: matcher %s, rule by rule %s, message \"%.*s\"", round, a.rule_id,
                     b.rule_id, (int)len, msg);
        assert_int_equal(a.retry_after_ms, b.retry_after_ms);
    }
}

static void test_shipped_64k_message_is_fast(void **state)
{
    const rd_config *cfg = *state;
    size_t len = 65536;
    char *big = malloc(len);
    assert_non_null(big);
    for (size_t i = 0; i < len; i++)
        big[i] = "timeout rate limit 503 not found invalid \0\xFF"[i % 44];
    rd_tool_error e = {.message = big, .message_len = len, .code = "", .exception_type = ""};
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    rd_classification c;
    for (int i = 0; i < 20; i++)
        rd_classify(&cfg->rules, NULL, "t", &e, &c);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double ms = ((double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6) / 20;
    assert_string_equal(c.rule_id, "text.timeout");
    /* linear: far below this even under sanitizers; a quadratic scan of
     * 64 KiB would take seconds */
    assert_true(ms < 200.0);
    free(big);
}

int main(void)
{
    const struct CMUnitTest hand_built[] = {
        cmocka_unit_test_setup_teardown(test_matcher_overlapping_and_suffix_patterns,
                                        build_matcher_rules, free_matcher_rules),
        cmocka_unit_test_setup_teardown(test_matcher_boundaries, build_matcher_rules,
                                        free_matcher_rules),
        cmocka_unit_test_setup_teardown(test_matcher_bound_limits_visits, build_matcher_rules,
                                        free_matcher_rules),
        cmocka_unit_test_setup_teardown(test_matcher_walks_find_every_offset,
                                        build_matcher_rules, free_matcher_rules),
        cmocka_unit_test_setup_teardown(test_matcher_64k_is_linear, build_matcher_rules,
                                        free_matcher_rules),
        cmocka_unit_test(test_matcher_without_patterns),
    };
    const struct CMUnitTest shipped[] = {
        cmocka_unit_test(test_shipped_matcher_agrees_with_rule_by_rule),
        cmocka_unit_test(test_shipped_64k_message_is_fast),
    };
    int failed = cmocka_run_group_tests_name("matcher", hand_built, NULL, NULL);
    failed += cmocka_run_group_tests_name("matcher on the shipped rules", shipped, load_shipped,
                                          free_shipped);
    return failed ? 1 : 0;
}
