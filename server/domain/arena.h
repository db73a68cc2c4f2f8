/* A per-call bump allocator. A worker owns one arena, hands it to the
 * decision core for every call, and resets it once the response is sent, so
 * the hot path allocates nothing after warm-up.
 *
 * Ownership: memory from an arena belongs to the arena; never free() it. */
#ifndef RD_DOMAIN_ARENA_H
#define RD_DOMAIN_ARENA_H

#include <stddef.h>

typedef struct rd_arena_chunk rd_arena_chunk;

typedef struct rd_arena {
    rd_arena_chunk *head;   /* chunk being filled; older chunks follow */
    size_t chunk_size;
} rd_arena;

void rd_arena_init(rd_arena *a, size_t chunk_size);
/* Returns zeroed memory aligned for any type, or NULL when out of memory. */
void *rd_arena_alloc(rd_arena *a, size_t size);
/* The same without zeroing, for large records whose every field the
 * caller sets (strings need only their terminator). */
void *rd_arena_alloc_uninit(rd_arena *a, size_t size);
char *rd_arena_strdup(rd_arena *a, const char *s);
char *rd_arena_strndup(rd_arena *a, const char *s, size_t n);
char *rd_arena_printf(rd_arena *a, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Keeps the first chunk for reuse and frees the rest. */
void rd_arena_reset(rd_arena *a);
/* Frees everything; a NULL or never-used arena is fine. */
void rd_arena_free(rd_arena *a);

#endif
