/* The worker's lists of calls: the streams it serves, the calls woken from
 * other threads, and the cohort's bookkeeping (replies held until the
 * cohort's handlers have run, calls owed a new request, calls to free).
 * Everything here runs on the call's worker thread, except rd_call_wake. */
#include <grpc/support/alloc.h>
#include <pthread.h>
#include <string.h>

#include "domain/log.h"
#include "platform/clock.h"
#include "transport/call_internal.h"

/* ---- streams list and wake list (worker bookkeeping) ---- */

void rd_call_streams_link(rd_call *c)
{
    rd_worker *w = c->worker;
    c->stream_next = w->streams;
    if (w->streams)
        w->streams->stream_prev = c;
    w->streams = c;
    c->in_streams = true;
}

void rd_call_streams_unlink(rd_call *c)
{
    if (!c->in_streams)
        return;
    rd_worker *w = c->worker;
    if (c->stream_prev)
        c->stream_prev->stream_next = c->stream_next;
    else
        w->streams = c->stream_next;
    if (c->stream_next)
        c->stream_next->stream_prev = c->stream_prev;
    c->in_streams = false;
}

/* From any thread: the call's source has something. */
void rd_call_wake(void *arg)
{
    rd_call *c = arg;
    rd_worker *w = c->worker;
    pthread_mutex_lock(&w->wake_lock);
    if (!c->wake_queued) {
        c->wake_queued = true;
        c->wake_next = w->woken;
        w->woken = c;
        atomic_store_explicit(&w->wake_pending, true, memory_order_release);
    }
    pthread_mutex_unlock(&w->wake_lock);
}

void rd_call_wake_list_remove(rd_call *c)
{
    rd_worker *w = c->worker;
    pthread_mutex_lock(&w->wake_lock);
    if (c->wake_queued) {
        for (rd_call **p = &w->woken; *p; p = &(*p)->wake_next) {
            if (*p == c) {
                *p = c->wake_next;
                break;
            }
        }
        c->wake_queued = false;
    }
    pthread_mutex_unlock(&w->wake_lock);
}

/* ---- batches ---- */

bool rd_call_start_batch(rd_call *c, grpc_op *ops, size_t n, tag_kind tag)
{
    if (grpc_call_start_batch(c->call, ops, n, &c->tags[tag], NULL) != GRPC_CALL_OK) {
        rd_log(RD_LOG_ERROR, "cannot start a batch", "");
        return false;
    }
    c->in_flight++;
    return true;
}

/* A one-batch reply made during a cohort waits until the cohort's handlers
 * have all run (rd_worker_end_cohort), so the handlers run back to back
 * with their code and data in the caches. It counts as in flight, so
 * nothing frees the call meanwhile. */
void rd_call_defer_batch(rd_call *c, const grpc_op *ops, size_t n)
{
    rd_worker *w = c->worker;
    memcpy(c->deferred_ops, ops, n * sizeof *ops);
    c->n_deferred_ops = n;
    c->in_flight++;
    c->deferred_next = NULL;
    *w->deferred_tail = c;
    w->deferred_tail = &c->deferred_next;
}

/* The replies of the cohort, in the order they were made. */
static void start_deferred_batches(rd_worker *w)
{
    rd_call *c = w->deferred;
    w->deferred = NULL;
    w->deferred_tail = &w->deferred;
    int64_t handed_us = c ? rd_call_monotonic_us() : 0; /* one clock read for them all */
    while (c) {
        rd_call *next = c->deferred_next;
        c->in_flight--;
        if (c->metrics_owed)
            rd_call_record_metrics(c, handed_us);
        rd_call_start_batch(c, c->deferred_ops, c->n_deferred_ops, TAG_STATUS);
        rd_call_maybe_free(c);
        c = next;
    }
}

/* As many calls requested as arrived in the cohort, per method. */
static void request_owed_calls(rd_worker *w)
{
    for (int m = 0; m <= RD_MAX_METHODS; m++) {
        for (; w->owed[m]; w->owed[m]--)
            rd_call_request(w, m == RD_MAX_METHODS ? RD_GENERIC_METHOD : m);
    }
}

static void free_dead_calls(rd_worker *w)
{
    rd_call *c = w->dead;
    w->dead = NULL;
    while (c) {
        rd_call *next = c->dead_next;
        rd_call_free(c);
        c = next;
    }
}

/* A clock read costs about as much as a small handler step; a cohort's
 * calls were all taken off the queue at this moment, so they share it. */
void rd_worker_begin_cohort(rd_worker *w)
{
    w->deferring = true;
    w->cohort_mono_us = rd_call_monotonic_us();
    w->cohort_unix_ms = rd_clock_unix_ms();
}

void rd_worker_end_cohort(rd_worker *w)
{
    w->deferring = false;
    start_deferred_batches(w);
    request_owed_calls(w);
    free_dead_calls(w);
}
