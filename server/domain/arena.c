#include "domain/arena.h"

#include <stdarg.h>
#include <stdalign.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


struct rd_arena_chunk {
    rd_arena_chunk *next;
    size_t used;
    size_t cap;
    alignas(max_align_t) unsigned char data[];
};

static const size_t ALIGN = alignof(max_align_t);

void rd_arena_init(rd_arena *a, size_t chunk_size)
{
    a->head = NULL;
    a->chunk_size = chunk_size ? chunk_size : 16384;
}

static rd_arena_chunk *chunk_new(size_t cap, rd_arena_chunk *next)
{
    rd_arena_chunk *c = malloc(sizeof *c + cap);
    if (!c)
        return NULL;
    c->next = next;
    c->used = 0;
    c->cap = cap;
    return c;
}

void *rd_arena_alloc_uninit(rd_arena *a, size_t size)
{
    size_t need = (size + ALIGN - 1) & ~(ALIGN - 1);
    if (need < size)
        return NULL; /* overflow */
    rd_arena_chunk *c = a->head;
    if (!c || c->cap - c->used < need) {
        size_t cap = need > a->chunk_size ? need : a->chunk_size;
        c = chunk_new(cap, a->head);
        if (!c)
            return NULL;
        a->head = c;
    }
    void *p = c->data + c->used;
    c->used += need;
    return p;
}

void *rd_arena_alloc(rd_arena *a, size_t size)
{
    void *p = rd_arena_alloc_uninit(a, size);
    if (p)
        memset(p, 0, size);
    return p;
}

char *rd_arena_strndup(rd_arena *a, const char *s, size_t n)
{
    char *p = rd_arena_alloc_uninit(a, n + 1);
    if (p) {
        memcpy(p, s, n);
        p[n] = '\0';
    }
    return p;
}

char *rd_arena_strdup(rd_arena *a, const char *s)
{
    return rd_arena_strndup(a, s, strlen(s));
}

char *rd_arena_printf(rd_arena *a, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0)
        return NULL;
    char *p = rd_arena_alloc(a, (size_t)n + 1);
    if (!p)
        return NULL;
    va_start(ap, fmt);
    vsnprintf(p, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return p;
}

static void free_chain(rd_arena_chunk *c)
{
    while (c) {
        rd_arena_chunk *next = c->next;
        free(c);
        c = next;
    }
}

void rd_arena_reset(rd_arena *a)
{
    if (!a || !a->head)
        return;
    /* keep the oldest chunk (sized by chunk_size) and drop the rest */
    rd_arena_chunk *c = a->head, *keep = NULL;
    while (c) {
        rd_arena_chunk *next = c->next;
        if (!next && c->cap == a->chunk_size)
            keep = c;
        else
            free(c);
        c = next;
    }
    a->head = keep;
    if (keep) {
        keep->used = 0;
        keep->next = NULL;
    }
}

void rd_arena_free(rd_arena *a)
{
    if (!a)
        return;
    free_chain(a->head);
    a->head = NULL;
}
