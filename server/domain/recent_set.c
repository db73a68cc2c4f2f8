/* The capped set of recently used keys (domain/recent_set.h). */
#include "domain/recent_set.h"

#include <stdlib.h>
#include <string.h>

#include "domain/err.h"
#include "domain/hash.h"

static rd_recent_key *slot_of(const rd_recent_set *s, const char *key)
{
    size_t i = (size_t)rd_hash_text(key, 0) & (s->cap - 1);
    while (s->slots[i].key && strcmp(s->slots[i].key, key) != 0)
        i = (i + 1) & (s->cap - 1);
    return &s->slots[i];
}

/* Rebuilds the set with room for `want` keys, keeping the ones used since
 * `since` (all of them when since is INT64_MIN). */
static bool rebuild(rd_recent_set *s, size_t want, int64_t since)
{
    size_t cap = 16;
    while (cap < 2 * want)
        cap *= 2;
    rd_recent_set fresh = {calloc(cap, sizeof *fresh.slots), cap, 0};
    if (!fresh.slots)
        return false;
    for (size_t i = 0; i < s->cap; i++) {
        rd_recent_key *k = &s->slots[i];
        if (!k->key)
            continue;
        if (k->used_ms < since) {
            free(k->key);
            continue;
        }
        *slot_of(&fresh, k->key) = *k;
        fresh.n++;
    }
    free(s->slots);
    *s = fresh;
    return true;
}

int rd_recent_set_use(rd_recent_set *s, const char *key, size_t max, int64_t now_ms,
                      int64_t ttl_ms)
{
    if (s->cap) {
        rd_recent_key *k = slot_of(s, key);
        if (k->key) {
            k->used_ms = now_ms;
            return RD_OK;
        }
    }
    /* a key used exactly ttl_ms ago has aged out, as everywhere else */
    if (s->n >= max && !rebuild(s, max, ttl_ms > 0 ? now_ms - ttl_ms + 1 : INT64_MIN))
        return RD_ERR_NOMEM;
    if (s->n >= max)
        return RD_ERR_EXHAUSTED;
    if (2 * (s->n + 1) > s->cap && !rebuild(s, s->n + 1, INT64_MIN))
        return RD_ERR_NOMEM;
    char *copy = strdup(key);
    if (!copy)
        return RD_ERR_NOMEM;
    *slot_of(s, key) = (rd_recent_key){copy, now_ms};
    s->n++;
    return RD_OK;
}

bool rd_recent_set_used_within(const rd_recent_set *s, const char *key, int64_t now_ms,
                               int64_t within_ms)
{
    if (!s->cap)
        return false;
    const rd_recent_key *k = slot_of(s, key);
    return k->key && (within_ms <= 0 || now_ms - k->used_ms < within_ms);
}

void rd_recent_set_clear(rd_recent_set *s)
{
    for (size_t i = 0; i < s->cap; i++)
        free(s->slots[i].key);
    free(s->slots);
    *s = (rd_recent_set){0};
}
