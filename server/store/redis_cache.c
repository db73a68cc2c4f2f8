/* The local cache of breakers and the subscriber that keeps it honest.
 *
 * An entry says "this tool's breaker is OPEN until T" or "this tool's
 * breaker was CLOSED at time S", learnt from a Redis reply. An admission
 * check is answered here without a round trip: refused until T, or
 * admitted until S + closed_cache_ms. By the breaker's own rules nothing
 * closes an OPEN breaker before T (outcomes while OPEN are stale); a CLOSED
 * one opens by a transition. Every transition, operator command and
 * eviction is published on <prefix>breaker-events as
 * "<version> <generation> <tool_id>" and the subscriber drops the entry.
 * If a message is lost, the entry still ends: at T (refusing calls until
 * then at worst) or closed_cache_ms after it was read (admitting calls to
 * a breaker that opened elsewhere, at worst, for that long). The cache is
 * only used while the subscriber is connected, and is emptied whenever it
 * (or any pool connection) reconnects.
 *
 * Reads of a named tool (GetBreakerState) use the same entries for
 * read_cache_ms after their reply, and only while this replica has no
 * outcome of the tool waiting in the batch table: what changes without an
 * event (a CLOSED breaker's streak moved by other replicas) is then at most
 * read_cache_ms old, and a replica always reads its own writes. A read
 * that finds no breaker leaves an absent entry, which only reads use.
 *
 * The table is direct-mapped (a colliding tool simply replaces the entry),
 * so its size is fixed. One mutex guards it; the critical sections copy a
 * few hundred bytes. */
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "domain/hash.h"
#include "platform/clock.h"
#include "store/redis_cache.h"

uint64_t rd_redis_tool_hash(const char *tool_id)
{
    return rd_hash_text(tool_id, 0);
}

static size_t slot_of(const char *tool_id)
{
    return (size_t)(rd_redis_tool_hash(tool_id) % RD_REDIS_CACHE_SLOTS);
}

void rd_redis_cache_init(redis_cache *c)
{
    pthread_mutex_init(&c->lock, NULL);
    memset(c->slots, 0, sizeof c->slots);
    atomic_init(&c->usable, false);
    atomic_init(&c->event_seq, 0);
}

void rd_redis_cache_destroy(redis_cache *c)
{
    pthread_mutex_destroy(&c->lock);
}

void rd_redis_cache_clear(redis_cache *c)
{
    pthread_mutex_lock(&c->lock);
    for (size_t i = 0; i < RD_REDIS_CACHE_SLOTS; i++) {
        c->slots[i].valid = false;
        c->slots[i].tool_id[0] = '\0';
    }
    pthread_mutex_unlock(&c->lock);
}

/* The slot holds tool_id, valid or as a tombstone. */
static bool holds_tool(const cache_entry *e, const char *tool_id)
{
    return e->tool_id[0] != '\0' && strcmp(e->tool_id, tool_id) == 0;
}

/* Still OPEN at now_ms (caller's time) or at the monotonic clock. */
static bool open_entry_holds(const redis_store *r, const cache_entry *e, int64_t now_ms,
                             int64_t *redis_now)
{
    if (r->use_caller_time) {
        *redis_now = now_ms;
        return now_ms < e->breaker.open_until_ms;
    }
    int64_t left = e->local_deadline_ms - rd_clock_mono_ms();
    *redis_now = e->breaker.open_until_ms - left;
    return left > 0;
}

/* A CLOSED entry answers for closed_cache_ms after its command was sent;
 * Redis time is estimated from the local clock's progress since then. */
static bool closed_entry_holds(const cache_entry *e, int64_t *redis_now)
{
    int64_t mono = rd_clock_mono_ms();
    *redis_now = e->redis_seen_ms + (mono - e->mono_sent_ms);
    return mono < e->local_deadline_ms;
}

static bool entry_holds(const redis_store *r, const cache_entry *e, int64_t now_ms,
                        int64_t *redis_now)
{
    return e->breaker.stored == RD_BREAKER_OPEN ? open_entry_holds(r, e, now_ms, redis_now)
                                                : closed_entry_holds(e, redis_now);
}

static void answer_from(const cache_entry *e, int64_t redis_now, rd_store_result *out)
{
    bool open = e->breaker.stored == RD_BREAKER_OPEN;
    *out = (rd_store_result){
        .breaker = e->breaker,
        .transition = RD_TRANSITION_NONE,
        .admission = open ? RD_ADMIT_NO : RD_ADMIT_YES,
        .permit_token = 0,
        .now_ms = redis_now,
    };
}

bool rd_redis_cache_lookup(redis_store *r, const char *tool_id, int64_t now_ms,
                           rd_store_result *out)
{
    if (!r->local_cache || !atomic_load(&r->cache.usable))
        return false;
    redis_cache *c = &r->cache;
    cache_entry *e = &c->slots[slot_of(tool_id)];
    bool hit = false;
    pthread_mutex_lock(&c->lock);
    if (e->valid && !e->absent && holds_tool(e, tool_id)) {
        int64_t redis_now;
        hit = entry_holds(r, e, now_ms, &redis_now);
        if (hit)
            answer_from(e, redis_now, out);
        else
            e->valid = false; /* past its time: from now on Redis decides */
    }
    pthread_mutex_unlock(&c->lock);
    return hit;
}

/* Reads need more than admission: every field as of the reply, so the
 * entry must be recent enough (read_until_ms) and no outcome of this
 * replica may be waiting in the batch table (those are not in the reply;
 * a read after them goes to Redis, which flushes them first). */
bool rd_redis_cache_read(redis_store *r, const char *tool_id, int64_t now_ms, rd_breaker *out,
                         bool *found)
{
    if (r->read_cache_ms <= 0 || !atomic_load(&r->cache.usable))
        return false;
    redis_cache *c = &r->cache;
    const cache_entry *e = &c->slots[slot_of(tool_id)];
    bool hit = false;
    pthread_mutex_lock(&c->lock);
    if (e->valid && holds_tool(e, tool_id) && rd_clock_mono_ms() < e->read_until_ms) {
        int64_t redis_now;
        hit = entry_holds(r, e, now_ms, &redis_now);
        if (hit) {
            *found = !e->absent;
            if (e->absent)
                rd_breaker_init(out, now_ms); /* as a read that finds none */
            else
                *out = e->breaker;
        }
    }
    pthread_mutex_unlock(&c->lock);
    if (hit)
        atomic_fetch_add(&r->read_hits, 1);
    return hit;
}

bool rd_redis_cache_admit(redis_store *r, const char *tool_id, int64_t now_ms,
                          rd_store_result *out)
{
    bool hit = rd_redis_cache_lookup(r, tool_id, now_ms, out);
    if (hit)
        atomic_fetch_add(&r->cache_hits, 1);
    return hit;
}

/* What a reply may teach the cache: the breaker's own OPEN period, or
 * CLOSED. An operator's hold can end at any moment by a command elsewhere,
 * so it is always asked of Redis. */
static bool cacheable(const redis_store *r, const rd_breaker *b, int64_t redis_now_ms)
{
    if (rd_breaker_hold_live(b, redis_now_ms))
        return false;
    if (b->stored == RD_BREAKER_OPEN)
        return redis_now_ms < b->open_until_ms;
    return b->stored == RD_BREAKER_CLOSED && r->closed_cache_ms > 0;
}

uint64_t rd_redis_cache_seq(redis_store *r)
{
    return atomic_load(&r->cache.event_seq);
}

/* Whether the slot knows better than a reply (or, absent, a read that
 * found nothing) to a command sent at seq_sent and mono_sent_ms. A lower
 * version is stale if an event for the tool came in after the command was
 * sent, or a newer reply is held (versions only restart after an eviction,
 * whose event leaves the slot invalid). A reply of the held version to a
 * command sent earlier than the held one's is older too: a streak moves
 * without moving the version, and a read sent before this replica's batch
 * landed must not hide the batch's reply from this replica's reads. An
 * absent entry is not a reply: it never stands in the way of one, and
 * never replaces one. */
static bool slot_knows_better(const cache_entry *e, bool same_tool, bool absent,
                              int64_t version, uint64_t seq_sent, int64_t mono_sent_ms)
{
    if (!same_tool)
        return false;
    bool reply_held = e->valid && !e->absent;
    if (absent)
        return reply_held || e->event_seq > seq_sent;
    if (reply_held && version == e->version && mono_sent_ms < e->mono_sent_ms)
        return true;
    return version < e->version && (reply_held || e->event_seq > seq_sent);
}

static void note_entry(redis_store *r, const char *tool_id, const rd_breaker *b, bool absent,
                       int64_t version, int64_t redis_now_ms, int64_t mono_sent_ms,
                       uint64_t seq_sent)
{
    if (!r->local_cache)
        return;
    bool keep = absent ? r->read_cache_ms > 0 : cacheable(r, b, redis_now_ms);
    redis_cache *c = &r->cache;
    cache_entry *e = &c->slots[slot_of(tool_id)];
    pthread_mutex_lock(&c->lock);
    bool same_tool = holds_tool(e, tool_id);
    if (slot_knows_better(e, same_tool, absent, version, seq_sent, mono_sent_ms)) {
        /* keep what the slot knows */
    } else if (keep) {
        e->valid = true;
        e->absent = absent;
        strcpy(e->tool_id, tool_id); /* checked to fit before any command */
        e->breaker = *b;
        /* an absent entry keeps the tombstone's version, which guards
         * against replies to commands sent before that event */
        e->version = absent ? (same_tool ? e->version : 0) : version;
        e->redis_seen_ms = redis_now_ms;
        e->mono_sent_ms = mono_sent_ms;
        /* Counted from before the command was sent, so an OPEN entry ends
         * no later than T on this host's clock, whatever the skew to Redis. */
        e->local_deadline_ms = b->stored == RD_BREAKER_OPEN
                                   ? mono_sent_ms + (b->open_until_ms - redis_now_ms)
                                   : mono_sent_ms + (absent ? r->read_cache_ms : r->closed_cache_ms);
        e->read_until_ms = r->read_cache_ms > 0 ? mono_sent_ms + r->read_cache_ms : 0;
    } else if (same_tool && !absent) {
        e->valid = false;
        e->version = version;
    }
    pthread_mutex_unlock(&c->lock);
}

void rd_redis_cache_note(redis_store *r, const char *tool_id, const rd_breaker *b,
                         int64_t version, int64_t redis_now_ms, int64_t mono_sent_ms,
                         uint64_t seq_sent)
{
    note_entry(r, tool_id, b, false, version, redis_now_ms, mono_sent_ms, seq_sent);
}

void rd_redis_cache_note_absent(redis_store *r, const char *tool_id, int64_t redis_now_ms,
                                int64_t mono_sent_ms, uint64_t seq_sent)
{
    rd_breaker none;
    rd_breaker_init(&none, redis_now_ms);
    note_entry(r, tool_id, &none, true, 0, redis_now_ms, mono_sent_ms, seq_sent);
}

/* An event ends the tool's entry and leaves a tombstone, unless the entry
 * already holds that version or a newer one (the echo of a change whose
 * reply was noted first). */
void rd_redis_cache_forget(redis_store *r, const char *tool_id, int64_t version)
{
    if (strlen(tool_id) > RD_ID_MAX)
        return; /* not a tool of ours: ids are checked before any command */
    redis_cache *c = &r->cache;
    cache_entry *e = &c->slots[slot_of(tool_id)];
    pthread_mutex_lock(&c->lock);
    bool same_tool = holds_tool(e, tool_id);
    /* an absent entry always ends: its version is an older event's */
    if (same_tool && e->valid && !e->absent && version <= e->version) {
        pthread_mutex_unlock(&c->lock);
        return;
    }
    bool dropped = same_tool && e->valid;
    strcpy(e->tool_id, tool_id); /* the publisher checked it fits */
    e->valid = false;
    e->version = version;
    e->event_seq = atomic_fetch_add(&c->event_seq, 1) + 1;
    pthread_mutex_unlock(&c->lock);
    if (dropped)
        atomic_fetch_add(&r->invalidations, 1);
}
