#include "core/log.h"

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/trace.h"

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

/* JSON string escaping into dst; stops early rather than overflow. */
static size_t json_escape(char *dst, size_t cap, const char *s)
{
    size_t o = 0;
    for (; *s && o + 7 < cap; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') {
            dst[o++] = '\\';
            dst[o++] = (char)c;
        } else if (c < 0x20) {
            o += (size_t)snprintf(dst + o, cap - o, "\\u%04x", c);
        } else {
            dst[o++] = (char)c;
        }
    }
    dst[o] = '\0';
    return o;
}

void rd_log_kv(char *buf, size_t cap, const char *key, const char *value)
{
    size_t len = strlen(buf);
    if (len + 8 >= cap)
        return;
    char esc[1024];
    json_escape(esc, sizeof esc, value ? value : "");
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
    char esc[1024];
    json_escape(esc, sizeof esc, msg);
    char line[4096];
    int n = snprintf(line, sizeof line, "{\"ts\":\"%s\",\"level\":\"%s\",\"msg\":\"%s\"%s%s}\n",
                     when, level_name(level), esc, fields_json && *fields_json ? "," : "",
                     fields_json ? fields_json : "");
    if (n < 0)
        return;
    if ((size_t)n >= sizeof line) { /* keep the line valid JSON when cut */
        n = snprintf(line, sizeof line, "{\"ts\":\"%s\",\"level\":\"%s\",\"msg\":\"%s\",\"truncated\":true}\n",
                     when, level_name(level), esc);
    }
    ssize_t w = write(STDOUT_FILENO, line, (size_t)n);
    (void)w;
}
