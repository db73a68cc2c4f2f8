/* A growing text buffer for the Prometheus text exposition, and the
 * pieces of the format (families, escaped label values). A failed
 * allocation marks the buffer failed and every later append is a no-op, so
 * the renderer checks once at the end. */
#ifndef RD_OPS_METRICS_TEXT_H
#define RD_OPS_METRICS_TEXT_H

#include <stdbool.h>
#include <stddef.h>

typedef struct strbuf {
    char *data;
    size_t len, cap;
    bool failed;                         /* out of memory: the result is dropped */
} strbuf;

bool sb_reserve(strbuf *sb, size_t extra);
void sb_append(strbuf *sb, const char *s, size_t n);
void sb_puts(strbuf *sb, const char *s);
__attribute__((format(printf, 2, 3))) void sb_printf(strbuf *sb, const char *fmt, ...);
/* A label value: backslash, quote and newline escaped; bytes that are not
 * UTF-8 become U+FFFD so one odd tool id cannot break the whole scrape. */
void sb_label_value(strbuf *sb, const char *value);
/* # HELP and # TYPE of a family. */
void sb_family(strbuf *sb, const char *name, const char *type, const char *help);

#endif
