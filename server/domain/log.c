#include "domain/log.h"

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "domain/trace.h"

/* Atomic: a reload may change the level while workers log. */
static atomic_int min_level = RD_LOG_INFO;

void rd_log_set_level(rd_log_level min)
{
    atomic_store_explicit(&min_level, (int)min, memory_order_relaxed);
}

bool rd_log_enabled(rd_log_level level)
{
    return (int)level >= atomic_load_explicit(&min_level, memory_order_relaxed);
}

static const char *level_name(rd_log_level l)
{
    static const char *names[] = {"debug", "info", "warn", "error"};
    return (unsigned)l < 4 ? names[l] : "info";
}

/* Length of the valid UTF-8 sequence at s (1..4), or 0 when it is not one
 * (a stray continuation byte, an overlong form, a surrogate, a cut). */
static size_t utf8_len(const unsigned char *s)
{
    unsigned c = s[0];
    size_t n = c < 0xC2 ? 0 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : c < 0xF5 ? 4 : 0;
    for (size_t k = 1; k < n; k++)
        if ((s[k] & 0xC0) != 0x80)
            return 0;
    if ((c == 0xE0 && s[1] < 0xA0) || (c == 0xED && s[1] > 0x9F) || (c == 0xF0 && s[1] < 0x90) ||
        (c == 0xF4 && s[1] > 0x8F))
        return 0;
    return n;
}

/* One unit of s (a character, its escape, or U+FFFD for a byte that is not
 * UTF-8) into out (at least 7 bytes); returns its length and sets *used to
 * the input bytes it stands for. */
static size_t escape_unit(const unsigned char *s, char *out, size_t *used)
{
    unsigned char c = s[0];
    *used = 1;
    if (c == '"' || c == '\\') {
        out[0] = '\\';
        out[1] = (char)c;
        return 2;
    }
    if (c < 0x20 || c == 0x7F)
        return (size_t)snprintf(out, 7, "\\u%04x", c);
    if (c < 0x80) {
        out[0] = (char)c;
        return 1;
    }
    size_t n = utf8_len(s);
    if (n == 0)
        return (size_t)snprintf(out, 7, "\\ufffd");
    memcpy(out, s, n);
    *used = n;
    return n;
}

/* s as the inside of a JSON string into dst (cap bytes with the NUL).
 * Never cuts an escape or a character: when s does not fit whole, it ends
 * at a unit boundary followed by RD_LOG_CUT, and *cut is set. */
static size_t json_escape(char *dst, size_t cap, const char *s, bool *cut)
{
    const size_t marker = sizeof RD_LOG_CUT - 1;
    const unsigned char *p = (const unsigned char *)s;
    size_t o = 0, keep = 0;       /* keep: where the text ends if it must be cut */
    bool fits_marker = cap > marker;
    *cut = false;
    while (*p) {
        char unit[8];
        size_t used;
        size_t n = escape_unit(p, unit, &used);
        if (o + n + 1 > cap) {
            *cut = true;
            break;
        }
        memcpy(dst + o, unit, n);
        o += n;
        p += used;
        if (o + marker + 1 <= cap)
            keep = o;
    }
    if (*cut) {
        o = fits_marker ? keep : 0;
        if (fits_marker) {
            memcpy(dst + o, RD_LOG_CUT, marker);
            o += marker;
        }
    }
    if (cap > 0)
        dst[o] = '\0';
    return o;
}

void rd_log_kv(char *buf, size_t cap, const char *key, const char *value)
{
    size_t len = strlen(buf);
    /* ,"key":"" and the NUL */
    size_t frame = (len ? 1 : 0) + strlen(key) + 6;
    if (len + frame + sizeof RD_LOG_CUT > cap)
        return; /* not even a cut value fits: the field is left out whole */
    bool cut;
    char esc[RD_LOG_VALUE_MAX];
    size_t room = cap - len - frame + 1;
    json_escape(esc, room < sizeof esc ? room : sizeof esc, value ? value : "", &cut);
    snprintf(buf + len, cap - len, "%s\"%s\":\"%s\"", len ? "," : "", key, esc);
}

void rd_log(rd_log_level level, const char *msg, const char *fields_json)
{
    if (!rd_log_enabled(level))
        return;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    char when[40];
    rd_format_rfc3339(when, sizeof when, (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
    bool cut;
    char esc[1024];
    json_escape(esc, sizeof esc, msg ? msg : "", &cut);
    char line[RD_LOG_LINE_MAX];
    int n = snprintf(line, sizeof line, "{\"ts\":\"%s\",\"level\":\"%s\",\"msg\":\"%s\"%s%s}\n",
                     when, level_name(level), esc, fields_json && *fields_json ? "," : "",
                     fields_json ? fields_json : "");
    if (n < 0)
        return;
    /* Fields are whole (rd_log_kv); a line too long for them all keeps
     * none of them rather than a cut one. */
    if ((size_t)n >= sizeof line)
        n = snprintf(line, sizeof line,
                     "{\"ts\":\"%s\",\"level\":\"%s\",\"msg\":\"%s\",\"truncated\":true}\n",
                     when, level_name(level), esc);
    ssize_t w = write(STDOUT_FILENO, line, (size_t)n);
    (void)w;
}
