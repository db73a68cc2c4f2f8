/* The local cache of breakers (redis_cache.c): a table, no I/O. */
#ifndef RD_STORE_REDIS_CACHE_H
#define RD_STORE_REDIS_CACHE_H

#include "store/redis_types.h"

/* The hash of a tool id (domain/hash.h): the slot of the cache and batch tables. */
uint64_t rd_redis_tool_hash(const char *tool_id);

void rd_redis_cache_init(redis_cache *c);
void rd_redis_cache_destroy(redis_cache *c);
/* An answer from the cache: true and *out filled when tool_id is known OPEN
 * (refused) or, within closed_cache_ms of a reply, CLOSED (admitted). */
bool rd_redis_cache_admit(redis_store *r, const char *tool_id, int64_t now_ms,
                          rd_store_result *out);
/* A read of tool_id from the cache: true and *out filled while an entry
 * noted within read_cache_ms still holds. The caller asks only while this
 * replica has no outcome of the tool waiting in the batch table. */
bool rd_redis_cache_read(redis_store *r, const char *tool_id, int64_t now_ms, rd_breaker *out,
                         bool *found);
/* The same answer without counting it as an admission served. */
bool rd_redis_cache_lookup(redis_store *r, const char *tool_id, int64_t now_ms,
                           rd_store_result *out);
/* Remembers (OPEN and not yet half-open, or CLOSED) or forgets the breaker
 * seen in Redis. */
/* seq_sent: rd_redis_cache_seq() read before the command was sent. */
void rd_redis_cache_note(redis_store *r, const char *tool_id, const rd_breaker *b,
                         int64_t version, int64_t redis_now_ms, int64_t mono_sent_ms,
                         uint64_t seq_sent);
/* A read found no breaker for tool_id: later reads may say so for
 * read_cache_ms (admission checks never use this). */
void rd_redis_cache_note_absent(redis_store *r, const char *tool_id, int64_t redis_now_ms,
                                int64_t mono_sent_ms, uint64_t seq_sent);
uint64_t rd_redis_cache_seq(redis_store *r);
void rd_redis_cache_forget(redis_store *r, const char *tool_id, int64_t version);
void rd_redis_cache_clear(redis_cache *c);

#endif
