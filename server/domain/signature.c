/* Error signatures for learning (see signature.h). A left-to-right scan:
 * at each position the first placeholder rule that matches consumes its
 * text; anything else is copied lower-cased. */
#include "domain/signature.h"

#include <stdio.h>
#include <string.h>

typedef struct scan {
    const char *s;
    size_t len;
    size_t i;
    char *out;
    size_t cap;
    size_t n;
} scan;

static char lower(char c)
{
    return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

static char at(const scan *sc, size_t i)
{
    return i < sc->len ? lower(sc->s[i]) : '\0';
}

static bool is_digit(char c) { return c >= '0' && c <= '9'; }
static bool is_hex(char c) { return is_digit(c) || (c >= 'a' && c <= 'f'); }
static bool is_alpha(char c) { return c >= 'a' && c <= 'z'; }
static bool is_word(char c) { return is_alpha(c) || is_digit(c) || c == '_'; }
static bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

static bool path_char(char c)
{
    return is_word(c) || c == '/' || c == '.' || c == '-' || c == '~' || c == '%' || c == '+';
}

static void emit(scan *sc, const char *text)
{
    for (; *text && sc->n + 1 < sc->cap; text++)
        sc->out[sc->n++] = *text;
}

static void emit_char(scan *sc, char c)
{
    if (sc->n + 1 < sc->cap)
        sc->out[sc->n++] = c;
}

/* A rule matches at sc->i: returns the bytes it consumes, 0 = no match. */
typedef size_t (*rule_fn)(const scan *sc);

static bool word_start(const scan *sc)
{
    return sc->i == 0 || !is_word(at(sc, sc->i - 1));
}

static size_t match_quoted(const scan *sc)
{
    char q = at(sc, sc->i);
    if (q != '\'' && q != '"' && q != '`')
        return 0;
    /* An apostrophe inside a word ("can't") is not a quote. */
    if (q == '\'' && !word_start(sc))
        return 0;
    for (size_t j = sc->i + 1; j < sc->len; j++)
        if (at(sc, j) == q)
            return j + 1 - sc->i;
    return 0;
}

static size_t match_url(const scan *sc)
{
    if (!word_start(sc))
        return 0;
    size_t j = sc->i;
    while (is_alpha(at(sc, j)))
        j++;
    if (j == sc->i || at(sc, j) != ':' || at(sc, j + 1) != '/' || at(sc, j + 2) != '/')
        return 0;
    j += 3;
    while (j < sc->len && !is_space(at(sc, j)) && at(sc, j) != '"' && at(sc, j) != '\'')
        j++;
    return j - sc->i;
}

static size_t match_path(const scan *sc)
{
    size_t j = sc->i;
    if (at(sc, j) == '~' || (at(sc, j) == '.' && at(sc, j + 1) == '/'))
        j++;
    else if (at(sc, j) == '.' && at(sc, j + 1) == '.' && at(sc, j + 2) == '/')
        j += 2;
    if (at(sc, j) != '/' || (j == sc->i && !word_start(sc)) || !path_char(at(sc, j + 1)) ||
        at(sc, j + 1) == '/')
        return 0;
    while (path_char(at(sc, j)))
        j++;
    /* A sentence's full stop is not part of the path. */
    while (j > sc->i + 2 && at(sc, j - 1) == '.')
        j--;
    return j - sc->i;
}

/* Exactly n hex digits at j. */
static bool hex_run(const scan *sc, size_t j, size_t n)
{
    for (size_t k = 0; k < n; k++)
        if (!is_hex(at(sc, j + k)))
            return false;
    return true;
}

static size_t match_uuid(const scan *sc)
{
    static const size_t groups[] = {8, 4, 4, 4, 12};
    if (!word_start(sc))
        return 0;
    size_t j = sc->i;
    for (size_t g = 0; g < 5; g++) {
        if (!hex_run(sc, j, groups[g]))
            return 0;
        j += groups[g];
        if (g < 4 && at(sc, j++) != '-')
            return 0;
    }
    return is_word(at(sc, j)) ? 0 : j - sc->i;
}

static size_t digits(const scan *sc, size_t j, size_t max)
{
    size_t n = 0;
    while (n < max && is_digit(at(sc, j + n)))
        n++;
    return n;
}

/* ":<digits>" at j ending at a word boundary; returns its length or 0. */
static size_t port_at(const scan *sc, size_t j)
{
    if (at(sc, j) != ':')
        return 0;
    size_t d = digits(sc, j + 1, 5);
    return d > 0 && !is_word(at(sc, j + 1 + d)) ? d + 1 : 0;
}

static size_t match_ipv4(const scan *sc)
{
    if (!word_start(sc))
        return 0;
    size_t j = sc->i;
    for (int part = 0; part < 4; part++) {
        size_t d = digits(sc, j, 3);
        if (d == 0)
            return 0;
        j += d;
        if (part < 3 && at(sc, j++) != '.')
            return 0;
    }
    if (is_word(at(sc, j)))
        return 0;
    return j + port_at(sc, j) - sc->i;
}

/* name:port where the name is "localhost" or has a dot and a letter. */
static size_t match_host_port(const scan *sc)
{
    if (!word_start(sc))
        return 0;
    size_t j = sc->i;
    bool dot = false, letter = false;
    while (is_word(at(sc, j)) || at(sc, j) == '.' || at(sc, j) == '-') {
        dot |= at(sc, j) == '.';
        letter |= is_alpha(at(sc, j));
        j++;
    }
    size_t name_len = j - sc->i;
    bool localhost = name_len == 9 && strncmp(sc->s + sc->i, "localhost", 9) == 0;
    if (name_len == 0 || !(localhost || (dot && letter)))
        return 0;
    size_t port = port_at(sc, j);
    return port ? name_len + port : 0;
}

/* 0x-prefixed, or 8+ hex digits with at least one digit and one letter. */
static size_t match_hex(const scan *sc)
{
    if (!word_start(sc))
        return 0;
    size_t j = sc->i;
    if (at(sc, j) == '0' && at(sc, j + 1) == 'x' && is_hex(at(sc, j + 2))) {
        j += 2;
        while (is_hex(at(sc, j)))
            j++;
        return is_word(at(sc, j)) ? 0 : j - sc->i;
    }
    bool digit = false, letter = false;
    while (is_hex(at(sc, j))) {
        digit |= is_digit(at(sc, j));
        letter |= is_alpha(at(sc, j));
        j++;
    }
    if (j - sc->i < 8 || !digit || !letter || is_word(at(sc, j)))
        return 0;
    return j - sc->i;
}

static size_t match_number(const scan *sc)
{
    size_t d = digits(sc, sc->i, SIZE_MAX);
    if (d == 0)
        return 0;
    /* 1.5 and 1,000 are one number */
    size_t j = sc->i + d;
    while ((at(sc, j) == '.' || at(sc, j) == ',') && is_digit(at(sc, j + 1)))
        j += 1 + digits(sc, j + 1, SIZE_MAX);
    return j - sc->i;
}

static const struct {
    rule_fn match;
    const char *placeholder;
} RULES[] = {
    {match_quoted, "<str>"}, {match_url, "<url>"},   {match_path, "<path>"},
    {match_uuid, "<uuid>"},  {match_ipv4, "<ip>"},   {match_host_port, "<host>"},
    {match_hex, "<hex>"},    {match_number, "<n>"},
};

size_t rd_signature_normalise(const char *in, size_t len, char *out, size_t cap)
{
    if (cap == 0)
        return 0;
    scan sc = {.s = in ? in : "", .len = in ? len : 0, .out = out, .cap = cap};
    while (sc.i < sc.len && sc.n + 1 < sc.cap) {
        char c = at(&sc, sc.i);
        if (is_space(c)) {
            if (sc.n > 0 && out[sc.n - 1] != ' ')
                emit_char(&sc, ' ');
            sc.i++;
            continue;
        }
        size_t used = 0;
        size_t r = 0;
        for (; r < sizeof RULES / sizeof RULES[0] && !used; r++)
            used = RULES[r].match(&sc);
        if (used) {
            emit(&sc, RULES[r - 1].placeholder);
            sc.i += used;
        } else {
            emit_char(&sc, c);
            sc.i++;
        }
    }
    while (sc.n > 0 && out[sc.n - 1] == ' ')
        sc.n--;
    out[sc.n] = '\0';
    return sc.n;
}

static uint64_t fnv1a(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 0x100000001b3ULL;
    }
    return h;
}

void rd_signature_of(const char *tool_id, const char *message, size_t len, rd_signature *out)
{
    int n = snprintf(out->text, sizeof out->text, "%s|", tool_id ? tool_id : "");
    size_t used = n < 0 ? 0 : (size_t)n < sizeof out->text ? (size_t)n : sizeof out->text - 1;
    rd_signature_normalise(message, message ? len : 0, out->text + used,
                           sizeof out->text - used);
    out->hash = fnv1a(out->text);
    snprintf(out->id, sizeof out->id, "%016llx", (unsigned long long)out->hash);
}

rd_retryability rd_learned_retryability(const rd_learning_policy *p, uint64_t successes,
                                        uint64_t failures)
{
    uint64_t total = successes + failures;
    if (total == 0 || total < p->min_samples)
        return RD_RETRYABILITY_UNSPECIFIED;
    double ratio = (double)successes / (double)total;
    if (ratio >= RD_LEARN_TRANSIENT_RATIO)
        return RD_TRANSIENT;
    if (ratio <= RD_LEARN_PERMANENT_RATIO)
        return RD_PERMANENT;
    return RD_RETRYABILITY_UNSPECIFIED;
}
