/* Test text that mixes ASCII runs, control bytes, NULs, well-formed UTF-8
 * and ill-formed bytes, and a per-character reference for what the UTF-8
 * helpers of domain/trace.h must make of it. Shared by the trace and
 * classification tests, which check the fast paths against the reference. */
#ifndef RD_TEST_MIXED_TEXT_H
#define RD_TEST_MIXED_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef struct mixed_rng {
    uint64_t s;
} mixed_rng;

static inline uint32_t mixed_next(mixed_rng *r, uint32_t below)
{
    r->s ^= r->s << 13;
    r->s ^= r->s >> 7;
    r->s ^= r->s << 17;
    return (uint32_t)(r->s % below);
}

/* Pieces other than plain ASCII runs; a cut-off sequence may end the text. */
static const char *const MIXED_PIECES[] = {
    "\t", "\n", "\r", "\x01", "\x1F", "\x7F", "\xC2\x80", "\xC3\xA9", "\xDF\xBF",
    "\xE0\xA0\x80", "\xE2\x82\xAC", "\xED\x9F\xBF", "\xEF\xBF\xBF", "\xF0\x9F\x98\x80",
    "\xF4\x8F\xBF\xBF",
    /* ill-formed: stray continuations, overlongs, surrogates, past U+10FFFF,
     * bytes that never start a character, sequences cut short */
    "\x80", "\xBF", "\xC0\xAF", "\xC1\xBF", "\xE0\x80\x80", "\xED\xA0\x80", "\xF0\x80\x80\x80",
    "\xF4\x90\x80\x80", "\xF5", "\xFE", "\xFF", "\xE2\x82", "\xF0\x9F\x98", "\xC3",
};

/* Fills buf[0..cap) with mixed text and returns its length (<= cap). */
static inline size_t mixed_text(mixed_rng *r, char *buf, size_t cap)
{
    size_t n = 0, want = mixed_next(r, (uint32_t)cap + 1);
    while (n < want) {
        uint32_t pick = mixed_next(r, 10);
        if (pick < 5) { /* printable ASCII, often longer than a word */
            for (uint32_t k = mixed_next(r, 24) + 1; k > 0 && n < want; k--)
                buf[n++] = (char)(' ' + mixed_next(r, 95));
        } else if (pick == 5) {
            buf[n++] = '\0';
        } else {
            const char *p = MIXED_PIECES[mixed_next(r, sizeof MIXED_PIECES / sizeof *MIXED_PIECES)];
            for (; *p && n < want; p++)
                buf[n++] = *p;
        }
    }
    return n;
}

/* Length of the well-formed character at s[0..avail), decoded to its code
 * point and checked against the shortest form, or 0 (NUL included). */
static inline size_t ref_utf8_char_len(const unsigned char *s, size_t avail)
{
    if (s[0] == 0)
        return 0;
    if (s[0] < 0x80)
        return 1;
    size_t k = (s[0] & 0xE0) == 0xC0 ? 2 : (s[0] & 0xF0) == 0xE0 ? 3 : (s[0] & 0xF8) == 0xF0 ? 4 : 0;
    if (k == 0 || avail < k)
        return 0;
    uint32_t cp = s[0] & (0x7F >> k);
    for (size_t i = 1; i < k; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0;
        cp = cp << 6 | (s[i] & 0x3F);
    }
    static const uint32_t shortest[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < shortest[k] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
        return 0;
    return k;
}

/* The reference sanitizer: one character at a time, stopping at the first
 * one (or replacement) that does not fit. */
static inline size_t ref_utf8_sanitize(char *dst, size_t room, const char *src, size_t len,
                                       const char *repl, size_t repl_len, size_t *used)
{
    const unsigned char *s = (const unsigned char *)src;
    size_t out = 0, i = 0;
    while (i < len) {
        size_t k = ref_utf8_char_len(s + i, len - i);
        size_t width = k ? k : repl_len;
        if (width > room - out)
            break;
        memcpy(dst + out, k ? src + i : repl, width);
        out += width;
        i += k ? k : 1;
    }
    *used = i;
    return out;
}

#endif
