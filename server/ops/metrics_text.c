/* The text of the Prometheus exposition (see metrics_text.h). */
#include "ops/metrics_text.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool sb_reserve(strbuf *sb, size_t extra)
{
    if (sb->failed)
        return false;
    if (sb->len + extra + 1 <= sb->cap)
        return true;
    size_t cap = sb->cap ? sb->cap : 4096;
    while (cap < sb->len + extra + 1)
        cap *= 2;
    char *p = realloc(sb->data, cap);
    if (!p) {
        sb->failed = true;
        return false;
    }
    sb->data = p;
    sb->cap = cap;
    return true;
}

void sb_append(strbuf *sb, const char *s, size_t n)
{
    if (!sb_reserve(sb, n))
        return;
    memcpy(sb->data + sb->len, s, n);
    sb->len += n;
    sb->data[sb->len] = '\0';
}

void sb_puts(strbuf *sb, const char *s)
{
    sb_append(sb, s, strlen(s));
}

void sb_printf(strbuf *sb, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0 || !sb_reserve(sb, (size_t)n))
        return;
    va_start(ap, fmt);
    vsnprintf(sb->data + sb->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    sb->len += (size_t)n;
}

/* Length of the well-formed UTF-8 sequence at s, or 0 if it is not one. */
static size_t utf8_seq_len(const unsigned char *s)
{
    if (s[0] < 0x80)
        return 1;
    size_t n;
    unsigned lo = 0x80, hi = 0xBF;       /* allowed range of the second byte */
    if (s[0] >= 0xC2 && s[0] <= 0xDF)
        n = 2;
    else if (s[0] >= 0xE0 && s[0] <= 0xEF) {
        n = 3;
        if (s[0] == 0xE0) lo = 0xA0;
        if (s[0] == 0xED) hi = 0x9F;     /* no surrogates */
    } else if (s[0] >= 0xF0 && s[0] <= 0xF4) {
        n = 4;
        if (s[0] == 0xF0) lo = 0x90;
        if (s[0] == 0xF4) hi = 0x8F;
    } else
        return 0;
    if (s[1] < lo || s[1] > hi)
        return 0;
    for (size_t i = 2; i < n; i++)
        if (s[i] < 0x80 || s[i] > 0xBF)
            return 0;
    return n;
}

/* A label value: backslash, quote and newline escaped; bytes that are not
 * UTF-8 become U+FFFD so one odd tool id cannot break the whole scrape. */
void sb_label_value(strbuf *sb, const char *value)
{
    const unsigned char *s = (const unsigned char *)value;
    while (*s) {
        size_t n = utf8_seq_len(s);
        if (n == 0) {
            sb_puts(sb, "\xEF\xBF\xBD");
            s++;
        } else if (*s == '\\') {
            sb_puts(sb, "\\\\");
            s++;
        } else if (*s == '"') {
            sb_puts(sb, "\\\"");
            s++;
        } else if (*s == '\n') {
            sb_puts(sb, "\\n");
            s++;
        } else {
            sb_append(sb, (const char *)s, n);
            s += n;
        }
    }
}

void sb_family(strbuf *sb, const char *name, const char *type, const char *help)
{
    sb_printf(sb, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}
