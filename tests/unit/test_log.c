/* Every log line is valid JSON whatever goes into it (domain/log.h): control
 * characters, quotes, bytes that are not UTF-8, values and messages too
 * long for their room, cut exactly where an escape or a character would be
 * split. Lines are captured from stdout and parsed with jansson. */
#include <jansson.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "domain/log.h"

/* The lines rd_log writes while `fn` runs, in a malloc'd string. */
static char *capture(void (*fn)(void *), void *arg)
{
    fflush(stdout);
    FILE *tmp = tmpfile();
    assert_non_null(tmp);
    int saved = dup(STDOUT_FILENO);
    dup2(fileno(tmp), STDOUT_FILENO);
    fn(arg);
    dup2(saved, STDOUT_FILENO);
    close(saved);
    long n = ftell(tmp);
    if (n < 0)
        n = lseek(fileno(tmp), 0, SEEK_END);
    char *out = calloc(1, (size_t)n + 1);
    lseek(fileno(tmp), 0, SEEK_SET);
    size_t got = fread(out, 1, (size_t)n, tmp);
    out[got] = '\0';
    fclose(tmp);
    return out;
}

/* Parses one line (with its newline) as a JSON object; fails the test if
 * it is not one. The caller decrefs. */
static json_t *parse_line(const char *line)
{
    json_error_t err;
    json_t *j = json_loads(line, JSON_REJECT_DUPLICATES, &err);
    if (!j)
        fail_msg("not valid JSON (%s at %d): %s", err.text, err.position, line);
    assert_true(json_is_object(j));
    return j;
}

typedef struct {
    const char *msg;
    const char *values[4];
    size_t cap;
} log_case;

static void write_case(void *arg)
{
    const log_case *lc = arg;
    char fields[4096] = "";
    static const char *const keys[] = {"a", "tool_id", "reason", "error"};
    for (int i = 0; i < 4 && lc->values[i]; i++)
        rd_log_kv(fields, lc->cap, keys[i], lc->values[i]);
    rd_log(RD_LOG_WARN, lc->msg, fields);
}

static json_t *log_one(const log_case *lc)
{
    char *text = capture(write_case, (void *)lc);
    size_t len = strlen(text);
    assert_true(len > 0 && text[len - 1] == '\n');
    assert_null(memchr(text, '\n', len - 1)); /* exactly one line */
    json_t *j = parse_line(text);
    free(text);
    return j;
}

static char *repeat(const char *unit, size_t times)
{
    size_t n = strlen(unit);
    char *s = malloc(n * times + 1);
    for (size_t i = 0; i < times; i++)
        memcpy(s + i * n, unit, n);
    s[n * times] = '\0';
    return s;
}

static void test_control_characters_and_quotes_are_escaped(void **state)
{
    (void)state;
    log_case lc = {.msg = "m\"sg\n", .values = {"tab\there", "\x01\x1f\x7f\"\\"}, .cap = 2048};
    json_t *j = log_one(&lc);
    assert_string_equal(json_string_value(json_object_get(j, "msg")), "m\"sg\n");
    assert_string_equal(json_string_value(json_object_get(j, "a")), "tab\there");
    assert_string_equal(json_string_value(json_object_get(j, "tool_id")), "\x01\x1f\x7f\"\\");
    json_decref(j);
}

static void test_bytes_that_are_not_utf8_become_replacement_characters(void **state)
{
    (void)state;
    /* a stray continuation byte, a cut 3-byte sequence, an overlong '/',
     * a surrogate, and a valid 4-byte character */
    log_case lc = {.msg = "ok", .values = {"a\x80z", "\xe2\x82", "\xc0\xaf", "\xed\xa0\x80\xf0\x9f\x98\x80"},
                   .cap = 2048};
    json_t *j = log_one(&lc);
    assert_string_equal(json_string_value(json_object_get(j, "a")), "a\xef\xbf\xbdz");
    assert_string_equal(json_string_value(json_object_get(j, "tool_id")), "\xef\xbf\xbd\xef\xbf\xbd");
    assert_string_equal(json_string_value(json_object_get(j, "error")),
                        "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xf0\x9f\x98\x80");
    json_decref(j);
}

/* The cut falls at every possible offset of escapes and multi-byte
 * characters; each line must parse and end the value with the marker. */
static void test_long_values_are_cut_between_characters_with_a_marker(void **state)
{
    (void)state;
    const char *units[] = {"\x01", "\"", "\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80", "ab"};
    for (size_t u = 0; u < sizeof units / sizeof *units; u++)
        for (size_t cap = 40; cap < 90; cap++) {
            char *value = repeat(units[u], 600);
            log_case lc = {.msg = "trace event", .values = {"x", value}, .cap = cap};
            json_t *j = log_one(&lc);
            const char *got = json_string_value(json_object_get(j, "tool_id"));
            if (got) {
                size_t n = strlen(got), m = strlen(RD_LOG_CUT);
                assert_true(n >= m);
                assert_string_equal(got + n - m, RD_LOG_CUT);
            }
            json_decref(j);
            free(value);
        }
}

static void test_a_value_longer_than_the_value_room_is_cut(void **state)
{
    (void)state;
    char *reason = repeat("\\\x02", 3000); /* every byte escapes */
    log_case lc = {.msg = "breaker forced by an operator", .values = {"t", reason}, .cap = 2048};
    json_t *j = log_one(&lc);
    const char *got = json_string_value(json_object_get(j, "tool_id"));
    assert_non_null(got);
    assert_non_null(strstr(got, RD_LOG_CUT));
    json_decref(j);
    free(reason);
}

static void test_a_long_message_and_fields_still_make_one_valid_line(void **state)
{
    (void)state;
    char *msg = repeat("\xe2\x82\xac\"", 2000);
    char *v = repeat("y", 1000);
    log_case lc = {.msg = msg, .values = {v, v, v, v}, .cap = 4096};
    json_t *j = log_one(&lc);
    assert_non_null(strstr(json_string_value(json_object_get(j, "msg")), RD_LOG_CUT));
    json_decref(j);
    free(msg);
    free(v);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_control_characters_and_quotes_are_escaped),
        cmocka_unit_test(test_bytes_that_are_not_utf8_become_replacement_characters),
        cmocka_unit_test(test_long_values_are_cut_between_characters_with_a_marker),
        cmocka_unit_test(test_a_value_longer_than_the_value_room_is_cut),
        cmocka_unit_test(test_a_long_message_and_fields_still_make_one_valid_line),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
