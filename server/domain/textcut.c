/* Head-and-tail cuts of long texts (see textcut.h). */
#include "domain/textcut.h"

#include <stdio.h>
#include <string.h>

static int is_continuation(unsigned char c)
{
    return (c & 0xC0) == 0x80;
}

/* A head end that does not split a character (at most 3 bytes back). */
static size_t head_end(const char *s, size_t end)
{
    size_t back = 0;
    while (end > 0 && back < 3 && is_continuation((unsigned char)s[end]))
        end--, back++;
    return end;
}

/* A tail start that does not split a character. */
static size_t tail_start(const char *s, size_t len, size_t start)
{
    size_t ahead = 0;
    while (start < len && ahead < 3 && is_continuation((unsigned char)s[start]))
        start++, ahead++;
    return start;
}

static size_t join(char *dst, const char *src, size_t len, size_t head, size_t tail)
{
    size_t h = head_end(src, head);
    size_t t = tail_start(src, len, len - tail);
    memcpy(dst, src, h);
    int m = snprintf(dst + h, RD_TEXTCUT_MARKER_MAX, "\n[... %zu bytes cut ...]\n", t - h);
    size_t n = h + (m > 0 && m < RD_TEXTCUT_MARKER_MAX ? (size_t)m : 0);
    memcpy(dst + n, src + t, len - t);
    return n + (len - t);
}

const char *rd_text_cut(rd_arena *a, const char *src, size_t len, size_t head, size_t tail,
                        size_t *out_len)
{
    if (!rd_text_needs_cut(len, head, tail)) {
        *out_len = len;
        return src;
    }
    char *dst = rd_arena_alloc_uninit(a, head + tail + RD_TEXTCUT_MARKER_MAX + 1);
    if (!dst)
        return NULL;
    *out_len = join(dst, src, len, head, tail);
    dst[*out_len] = '\0';
    return dst;
}

size_t rd_text_cut_into(char *dst, size_t cap, const char *src, size_t len)
{
    if (len <= cap) {
        memcpy(dst, src, len);
        return len;
    }
    size_t room = cap - RD_TEXTCUT_MARKER_MAX;
    size_t head = room / 3;
    return join(dst, src, len, head, room - head);
}
