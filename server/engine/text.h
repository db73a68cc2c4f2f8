/* Texts without printf: details and reasons joined from pieces (engine
 * internal). Header-only, so the pieces of a literal fold at compile time. */
#ifndef RD_ENGINE_TEXT_H
#define RD_ENGINE_TEXT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "domain/arena.h"

/* Details and reasons are written on every Decide; joining their pieces
 * costs a fraction of formatting them with printf, for the same bytes. */

/* A piece of text and its length. Inlined, txt() of a literal costs
 * nothing at run time: the compiler folds its length. */
typedef struct piece {
    const char *s;
    size_t n;
} piece;

static inline __attribute__((always_inline)) piece txt(const char *s)
{
    return (piece){s, strlen(s)};
}
/* An array of pieces and its length, as two arguments. */
#define PIECES(...) \
    (const piece[]){__VA_ARGS__}, sizeof((const piece[]){__VA_ARGS__}) / sizeof(piece)

typedef struct num_text {
    char s[24]; /* "-9223372036854775808" and its NUL */
} num_text;

/* The decimal text of v (as printf's %d, %u or PRId64 writes it), in t. */
static inline piece num(num_text *t, int64_t v)
{
    char *end = t->s + sizeof t->s - 1, *p = end;
    uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
    *p = '\0';
    do {
        *--p = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0)
        *--p = '-';
    return (piece){p, (size_t)(end - p)};
}

/* The pieces one after another into buf, which has room for them and a
 * NUL. Inlined and unrolled where the pieces are known, a literal piece
 * becomes a copy of a fixed size: no loop and no choice of copy. */
static inline __attribute__((always_inline)) size_t put_pieces(char *buf, const piece *pieces,
                                                               size_t n_pieces)
{
    size_t len = 0;
#pragma GCC unroll 12
    for (size_t i = 0; i < n_pieces; i++) {
        memcpy(buf + len, pieces[i].s, pieces[i].n);
        len += pieces[i].n;
    }
    buf[len] = '\0';
    return len;
}

static inline __attribute__((always_inline)) size_t pieces_len(const piece *pieces,
                                                               size_t n_pieces)
{
    size_t len = 0;
#pragma GCC unroll 12
    for (size_t i = 0; i < n_pieces; i++)
        len += pieces[i].n;
    return len;
}

/* As put_pieces, cut at cap - 1 bytes as snprintf cuts (rare: a detail
 * with a long tool id or text). */
static inline size_t put_pieces_cut(char *buf, size_t cap, const piece *pieces, size_t n_pieces)
{
    size_t len = 0;
    for (size_t i = 0; i < n_pieces; i++) {
        size_t n = pieces[i].n;
        if (n > cap - 1 - len)
            n = cap - 1 - len;
        memcpy(buf + len, pieces[i].s, n);
        len += n;
    }
    buf[len] = '\0';
    return len;
}

/* Writes the pieces one after another into buf, cut at cap - 1 bytes as
 * snprintf cuts. Returns the length written. */
static inline __attribute__((always_inline)) size_t join_pieces(char *buf, size_t cap,
                                                                const piece *pieces,
                                                                size_t n_pieces)
{
    if (pieces_len(pieces, n_pieces) < cap)
        return put_pieces(buf, pieces, n_pieces);
    return put_pieces_cut(buf, cap, pieces, n_pieces);
}

/* The pieces joined into a string in the arena, or NULL (out of memory). */
static inline __attribute__((always_inline)) const char *arena_join(rd_arena *a,
                                                                    const piece *pieces,
                                                                    size_t n_pieces)
{
    char *s = rd_arena_alloc_uninit(a, pieces_len(pieces, n_pieces) + 1);
    if (s)
        put_pieces(s, pieces, n_pieces);
    return s;
}

#define ARENA_JOIN(a, ...) arena_join((a), PIECES(__VA_ARGS__))

#endif
