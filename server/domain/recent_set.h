/* A capped set of keys by when they were last used: the count behind a
 * limit such as a tenant's max_tools, where a key unused for the idle time
 * no longer counts. Not thread-safe: its owner locks. */
#ifndef RD_DOMAIN_RECENT_SET_H
#define RD_DOMAIN_RECENT_SET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct rd_recent_key {
    char *key;                   /* NULL = free slot; owned */
    int64_t used_ms;
} rd_recent_key;

/* Zero-initialised = empty. An open-addressing table, rebuilt without its
 * aged-out keys when full. */
typedef struct rd_recent_set {
    rd_recent_key *slots;
    size_t cap, n;               /* cap: a power of two, at least twice n */
} rd_recent_set;

/* Marks `key` used at now_ms: RD_OK when it is known, or new and fewer than
 * max keys were used within ttl_ms (ttl_ms <= 0: keys never age out);
 * RD_ERR_EXHAUSTED when full; RD_ERR_NOMEM. The key is copied. */
int rd_recent_set_use(rd_recent_set *s, const char *key, size_t max, int64_t now_ms,
                      int64_t ttl_ms);

/* Whether `key` is in the set and was used less than within_ms before
 * now_ms (within_ms <= 0: at any time). Changes nothing. */
bool rd_recent_set_used_within(const rd_recent_set *s, const char *key, int64_t now_ms,
                               int64_t within_ms);

/* Frees every key; the set is empty and reusable. */
void rd_recent_set_clear(rd_recent_set *s);

#endif
