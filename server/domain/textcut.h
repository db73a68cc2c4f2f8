/* Long texts cut to their head and tail.
 *
 * An error message may be as long as a request (a 90 KB traceback). The
 * classifier reads a bounded part of it and the model is handed a bounded
 * part; both keep the beginning (what failed) and the end (a traceback's
 * cause is its last line), joined by a marker that says how much was left
 * out, so a reader never takes the cut text for the whole. */
#ifndef RD_DOMAIN_TEXTCUT_H
#define RD_DOMAIN_TEXTCUT_H

#include <stddef.h>

#include "domain/arena.h"

/* The marker written between head and tail: "\n[... N bytes cut ...]\n". */
#define RD_TEXTCUT_MARKER_MAX 48 /* room for any size_t, and the NUL */

/* Whether a text of len bytes is cut by rd_text_cut(head, tail). */
static inline int rd_text_needs_cut(size_t len, size_t head, size_t tail)
{
    return len > head + tail + RD_TEXTCUT_MARKER_MAX;
}

/* src[0, len) when it needs no cut; else its first <= head and last <=
 * tail bytes (neither splits a UTF-8 character) around the marker, written
 * into the arena and NUL-terminated. *out_len receives the length. NULL
 * when out of memory. src may hold any bytes. */
const char *rd_text_cut(rd_arena *a, const char *src, size_t len, size_t head, size_t tail,
                        size_t *out_len);

/* The same into dst (cap bytes, cap > RD_TEXTCUT_MARKER_MAX), always: the
 * head and tail get what the marker leaves, in proportion 1:2. Returns the
 * length written (not terminated). */
size_t rd_text_cut_into(char *dst, size_t cap, const char *src, size_t len);

#endif
