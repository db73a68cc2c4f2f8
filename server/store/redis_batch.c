/* Outcomes on CLOSED breakers, recorded in batches.
 *
 * In the consecutive mode, an outcome on a CLOSED breaker changes the
 * breaker only by its streak: a success or a permanent failure ends it, a
 * transient failure adds to it, and the breaker opens when it reaches
 * failure_threshold. So when the local cache knows the breaker CLOSED (see
 * redis_cache.c) and the outcome cannot bring the streak to the threshold
 * by what this replica knows (the streak of the last reply, plus what this
 * replica has counted since), it is answered at once and counted here, per
 * tool; a flusher thread sends each tool's outcomes every batch_ms as one
 * run of the record script. What that changes, and what it does not:
 *
 * - This replica sees its own outcomes at once: every other operation on
 *   the tool (admission from Redis, an outcome recorded at once, operator
 *   commands, reads) first sends the tool's pending outcomes
 *   (rd_redis_batch_flush_tool), and the outcome that would reach the
 *   threshold is recorded at once, so one replica opens the breaker on the
 *   same failure as the memory store.
 * - Other replicas see the outcomes at most batch_ms late (plus the
 *   round trip). When replicas' failures together reach the threshold, the
 *   breaker opens when the batch lands, not on the failure that crossed it:
 *   opening can be late by batch_ms, never early, and a success can end a
 *   streak late by as much.
 * - A batch carries the generation it was counted in; the script drops it
 *   if the breaker has opened (or been reset) since, or is held.
 * - If Redis fails a batch, its outcomes are dropped and counted
 *   (deferred_dropped).
 * - Probes (a permit token), the failure-rate mode and quorum tripping are
 *   always recorded at once.
 *
 * The table is direct-mapped like the cache: a tool whose slot another tool
 * holds is recorded at once, so memory stays fixed. */
#include <errno.h>
#include <string.h>
#include <time.h>

#include "store/redis_batch.h"

static size_t slot_of(const char *tool_id)
{
    return (size_t)(rd_redis_tool_hash(tool_id) % RD_REDIS_BATCH_SLOTS);
}

static bool deferrable(const redis_store *r, const rd_breaker_policy *p,
                       const rd_call_report *call)
{
    return r->batch_ms > 0 && r->batch.started && call->permit_token == 0 &&
           p->mode == RD_BREAKER_MODE_CONSECUTIVE && p->quorum_min_executors <= 1;
}

static uint32_t add_sat(uint32_t a, uint32_t b)
{
    return a > UINT32_MAX - b ? UINT32_MAX : a + b;
}

/* The streak after `run` follows a streak of `cf`. */
static uint32_t streak_after(uint32_t cf, const outcome_run *run)
{
    return add_sat(run->reset ? 0 : cf, run->trailing);
}

static void run_add(outcome_run *run, rd_outcome outcome, bool slow)
{
    run->calls = add_sat(run->calls, 1);
    run->slow = add_sat(run->slow, slow);
    if (outcome == RD_OUTCOME_TRANSIENT_FAILURE) {
        run->failures = add_sat(run->failures, 1);
        run->trailing = add_sat(run->trailing, 1);
    } else {
        run->reset = true;
        run->trailing = 0;
    }
}

static bool is_slow(const rd_breaker_policy *p, const rd_call_report *call)
{
    return p->slow_call_ms > 0 && call->latency_ms >= 0 && call->latency_ms >= p->slow_call_ms;
}

/* Takes the slot for tool_id if it is free; true when it is the tool's. */
static bool claim_slot(batch_entry *e, const char *tool_id)
{
    if (e->tool_id[0] != '\0' && strcmp(e->tool_id, tool_id) == 0)
        return true;
    if (e->pending.calls != 0 || e->flushing)
        return false;
    strcpy(e->tool_id, tool_id); /* checked to fit by the caller */
    return true;
}

/* Counts the outcome unless it could open the breaker (or the slot is
 * another tool's, or holds another epoch); *cf is the streak after it. */
static bool count_outcome(redis_batch *b, const char *tool_id, const rd_breaker_policy *p,
                          const rd_call_report *call, const rd_breaker *cached, uint32_t *cf)
{
    batch_entry *e = &b->slots[slot_of(tool_id)];
    uint32_t threshold = p->failure_threshold ? p->failure_threshold : 1;
    bool counted = false;
    pthread_mutex_lock(&b->lock);
    if (claim_slot(e, tool_id) &&
        (e->pending.calls == 0 || e->generation == cached->generation)) {
        /* The cached streak may or may not include a batch in flight:
         * counting it again errs towards recording at once. */
        uint32_t known = cached->consecutive_failures;
        if (e->flushing)
            known = streak_after(known, &e->in_flight);
        outcome_run next = e->pending.calls ? e->pending : (outcome_run){0};
        run_add(&next, call->outcome, is_slow(p, call));
        *cf = streak_after(known, &next);
        if (call->outcome != RD_OUTCOME_TRANSIENT_FAILURE || *cf < threshold) {
            e->pending = next;
            e->generation = cached->generation;
            e->policy = *p;
            counted = true;
            atomic_store(&b->dirty, true);
        }
    }
    pthread_mutex_unlock(&b->lock);
    return counted;
}

bool rd_redis_batch_outcome(redis_store *r, const char *tool_id, const rd_breaker_policy *p,
                            const rd_call_report *call, int64_t now_ms, rd_store_result *out)
{
    if (!deferrable(r, p, call))
        return false;
    rd_store_result cached;
    uint32_t cf;
    if (!rd_redis_cache_lookup(r, tool_id, now_ms, &cached) ||
        cached.breaker.stored != RD_BREAKER_CLOSED ||
        !count_outcome(&r->batch, tool_id, p, call, &cached.breaker, &cf))
        return false;
    atomic_fetch_add(&r->deferred, 1);
    cached.breaker.consecutive_failures = cf;
    cached.breaker.last_seen_ms = cached.now_ms;
    cached.admission = 0;
    *out = cached;
    return true;
}

/* Takes slot i's pending run (under the lock); false when none. */
static bool take(redis_batch *b, size_t i, batch_entry *taken)
{
    batch_entry *e = &b->slots[i];
    if (e->pending.calls == 0 || e->flushing)
        return false;
    e->in_flight = e->pending;
    e->pending = (outcome_run){0};
    e->flushing = true;
    *taken = *e;
    return true;
}

/* Sends a taken batch (without the table lock), then frees its slot. */
static int send_taken(redis_store *r, conn_slot *slot, size_t i, const batch_entry *taken,
                      rd_status *st)
{
    int rc = r->batch.send_run(r, slot, taken->tool_id, &taken->policy, &taken->in_flight,
                               taken->generation, st);
    if (rc != RD_OK)
        atomic_fetch_add(&r->deferred_dropped, taken->in_flight.calls);
    redis_batch *b = &r->batch;
    pthread_mutex_lock(&b->lock);
    b->slots[i].flushing = false;
    pthread_cond_broadcast(&b->changed);
    pthread_mutex_unlock(&b->lock);
    return rc;
}

int rd_redis_batch_flush_tool(redis_store *r, conn_slot *slot, const char *tool_id,
                              rd_status *st)
{
    if (!r->batch.started)
        return RD_OK;
    redis_batch *b = &r->batch;
    size_t i = slot_of(tool_id);
    batch_entry taken;
    bool have = false;
    pthread_mutex_lock(&b->lock);
    /* A batch of this tool in flight must land before what follows. */
    while (b->slots[i].flushing && strcmp(b->slots[i].tool_id, tool_id) == 0)
        pthread_cond_wait(&b->changed, &b->lock);
    if (strcmp(b->slots[i].tool_id, tool_id) == 0)
        have = take(b, i, &taken);
    pthread_mutex_unlock(&b->lock);
    return have ? send_taken(r, slot, i, &taken, st) : RD_OK;
}

bool rd_redis_batch_idle(redis_store *r, const char *tool_id)
{
    if (!r->batch.started)
        return true;
    redis_batch *b = &r->batch;
    const batch_entry *e = &b->slots[slot_of(tool_id)];
    pthread_mutex_lock(&b->lock);
    bool idle = strcmp(e->tool_id, tool_id) != 0 || (e->pending.calls == 0 && !e->flushing);
    pthread_mutex_unlock(&b->lock);
    return idle;
}

#define RD_BATCH_TAKE_MAX 32

/* Takes up to max pending runs, starting at *next; their slots go to idx. */
static size_t take_some(redis_batch *b, size_t *next, batch_entry *taken, size_t *idx,
                        size_t max)
{
    size_t n = 0;
    pthread_mutex_lock(&b->lock);
    for (; *next < RD_REDIS_BATCH_SLOTS && n < max; (*next)++) {
        if (take(b, *next, &taken[n]))
            idx[n++] = *next;
        else if (b->slots[*next].pending.calls)
            atomic_store(&b->dirty, true); /* its earlier run is in flight: next pass */
    }
    pthread_mutex_unlock(&b->lock);
    return n;
}

/* The connection is taken before any run is: a worker waiting in
 * rd_redis_batch_flush_tool holds one, and must not wait on a run that
 * waits for a connection. */
static void flush_all(redis_store *r)
{
    if (!atomic_exchange(&r->batch.dirty, false))
        return;
    conn_slot *slot = rd_redis_slot_take(r);
    batch_entry taken[RD_BATCH_TAKE_MAX];
    size_t idx[RD_BATCH_TAKE_MAX], next = 0, n;
    while ((n = take_some(&r->batch, &next, taken, idx, RD_BATCH_TAKE_MAX)) > 0) {
        for (size_t i = 0; i < n; i++) {
            rd_status st = {0};
            (void)send_taken(r, slot, idx[i], &taken[i], &st); /* counted as dropped */
        }
    }
    rd_redis_slot_give(slot);
}

static struct timespec deadline_after(int64_t ms)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    t.tv_sec += (time_t)(ms / 1000);
    t.tv_nsec += (long)(ms % 1000) * 1000000L;
    if (t.tv_nsec >= 1000000000L) {
        t.tv_sec++;
        t.tv_nsec -= 1000000000L;
    }
    return t;
}

static void *flusher_main(void *arg)
{
    redis_store *r = arg;
    redis_batch *b = &r->batch;
    pthread_mutex_lock(&b->lock);
    while (!b->stopping) {
        struct timespec until = deadline_after(r->batch_ms);
        while (!b->stopping && pthread_cond_timedwait(&b->wake, &b->lock, &until) != ETIMEDOUT)
            ;
        pthread_mutex_unlock(&b->lock);
        flush_all(r);
        pthread_mutex_lock(&b->lock);
    }
    pthread_mutex_unlock(&b->lock);
    flush_all(r); /* what was counted before the stop still reaches Redis */
    return NULL;
}

int rd_redis_batch_start(redis_store *r, rd_redis_send_run_fn send_run, rd_status *st)
{
    redis_batch *b = &r->batch;
    b->send_run = send_run;
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_mutex_init(&b->lock, NULL);
    pthread_cond_init(&b->changed, NULL);
    pthread_cond_init(&b->wake, &attr);
    pthread_condattr_destroy(&attr);
    atomic_init(&b->dirty, false);
    b->initialized = true;
    if (r->batch_ms <= 0)
        return RD_OK;
    if (pthread_create(&b->flusher, NULL, flusher_main, r) != 0)
        return rd_status_set(st, RD_ERR_INTERNAL, "store: cannot start the redis batch flusher");
    b->started = true;
    return RD_OK;
}

void rd_redis_batch_stop(redis_store *r)
{
    redis_batch *b = &r->batch;
    if (!b->initialized)
        return;
    if (b->started) {
        pthread_mutex_lock(&b->lock);
        b->stopping = true;
        pthread_cond_signal(&b->wake);
        pthread_mutex_unlock(&b->lock);
        pthread_join(b->flusher, NULL);
        b->started = false;
    }
    pthread_cond_destroy(&b->wake);
    pthread_cond_destroy(&b->changed);
    pthread_mutex_destroy(&b->lock);
    b->initialized = false;
}
