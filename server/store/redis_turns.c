/* The Redis store's outcome ids and turns, and the capped indexes
 * (max_turns, max_outcomes) they share. */
#include "store/redis_ops.h"

/* ---- capped indexes (max_turns, max_outcomes) ---- */

/* Adds member to P{index} at the script's time and returns in *removed the
 * oldest members past cap (a reply the caller frees; NULL when none). */
static int index_trim(redis_store *r, conn_slot *slot, const char *index, const char *member,
                      int64_t now_ms, size_t cap, redisReply **removed, rd_status *st)
{
    char idx[RD_KEY_MAX], now[24], cap_text[24];
    size_t shard_cap = key_index(r, index, member, cap, idx);
    time_arg(r, now_ms, now);
    fmt_i64(cap_text, (int64_t)shard_cap);
    const char *argv[] = {idx, now, member, cap_text, "0"};
    redisReply *reply = rd_redis_eval(r, slot, RD_SCRIPT_INDEX_TRIM, 1, 5, argv, NULL, st);
    if (!reply)
        return st ? st->code : RD_ERR_UNAVAILABLE;
    if (reply->type != REDIS_REPLY_ARRAY || reply->elements == 0) {
        freeReplyObject(reply);
        reply = NULL;
    }
    *removed = reply;
    return RD_OK;
}

/* DEL of keys one command each (they live in different Cluster slots). */
static int delete_keys(redis_store *r, conn_slot *slot, const char *const *keys, size_t n,
                       rd_status *st)
{
    for (size_t i = 0; i < n; i++) {
        const char *argv[] = {"DEL", keys[i]};
        redisReply *reply = rd_redis_command(r, slot, 2, argv, st);
        if (!reply)
            return st ? st->code : RD_ERR_UNAVAILABLE;
        freeReplyObject(reply);
    }
    return RD_OK;
}

/* ---- outcome ids ---- */

static int forget_outcomes(redis_store *r, conn_slot *slot, const redisReply *ids, rd_status *st)
{
    for (size_t i = 0; ids && i < ids->elements; i++) {
        char key[RD_KEY_MAX];
        key_outcome(r, ids->element[i]->str, key);
        const char *keys[] = {key};
        int rc = delete_keys(r, slot, keys, 1, st);
        if (rc != RD_OK)
            return rc;
    }
    return RD_OK;
}

/* Runs an outcome script (claim or expire) over the outcome's key with
 * the time and outcome_ttl_ms; the caller frees the reply. */
redisReply *rd_redis_eval_outcome(redis_store *r, conn_slot *slot, rd_script_id script,
                                  const char *outcome_id, int64_t now_ms, rd_status *st)
{
    char key[RD_KEY_MAX], now[24], ttl[24];
    key_outcome(r, outcome_id, key);
    time_arg(r, now_ms, now);
    fmt_i64(ttl, r->base.limits.outcome_ttl_ms);
    const char *argv[] = {key, now, ttl};
    return rd_redis_eval(r, slot, script, 1, 3, argv, NULL, st);
}

static int claim_on(redis_store *r, conn_slot *slot, const char *outcome_id, int64_t now_ms,
                    bool *duplicate, rd_status *st)
{
    redisReply *reply = rd_redis_eval_outcome(r, slot, RD_SCRIPT_CLAIM, outcome_id, now_ms, st);
    if (!reply)
        return st ? st->code : RD_ERR_UNAVAILABLE;
    bool ok = reply->type == REDIS_REPLY_ARRAY && reply->elements == 2;
    *duplicate = ok && int_at(reply, 0) == 1;
    freeReplyObject(reply);
    if (!ok)
        return rd_status_set(st, RD_ERR_INTERNAL, "store: redis claim script: bad reply");
    size_t cap = r->base.limits.max_outcomes;
    if (*duplicate || cap == 0)
        return RD_OK;
    redisReply *removed;
    int rc = index_trim(r, slot, "outcomes", outcome_id, now_ms, cap, &removed, st);
    if (rc == RD_OK && removed)
        rc = forget_outcomes(r, slot, removed, st);
    if (removed)
        freeReplyObject(removed);
    return rc;
}

int rd_redis_op_claim_outcome(rd_store *s, const char *outcome_id, int64_t now_ms,
                              bool *duplicate, rd_status *st)
{
    int rc = rd_store_check_id("outcome_id", outcome_id, st);
    if (rc != RD_OK)
        return rc;
    redis_store *r = rd_redis_as_store(s);
    conn_slot *slot = rd_redis_slot_take(r);
    rc = claim_on(r, slot, outcome_id, now_ms, duplicate, st);
    rd_redis_slot_give(slot);
    return rc;
}

/* ---- turns ---- */

/* One event as text: the numeric fields tab-separated, then the three
 * strings each as <length>:<bytes>, so any byte may appear in them, then,
 * only for an event with a trace context, "T<trace id><span id>" (an event
 * without one keeps the shorter form every reader knows). */
#define RD_EVENT_TEXT_MAX (256 + RD_ID_MAX + 2 * RD_TRACE_TEXT_MAX + RD_TRACE_ID_HEX + \
                           RD_SPAN_ID_HEX)
#define TRACE_SUFFIX_LEN (1 + RD_TRACE_ID_HEX + RD_SPAN_ID_HEX)

static size_t event_encode(const rd_trace_event *e, char *buf)
{
    size_t tool_len = strnlen(e->tool_id, sizeof e->tool_id - 1);
    size_t err_len = strnlen(e->error, sizeof e->error - 1);
    size_t det_len = strnlen(e->detail, sizeof e->detail - 1);
    int n = snprintf(buf, RD_EVENT_TEXT_MAX, "%d\t%d\t%d\t%" PRIu32 "\t%d\t%lld\t%lld\t%d\t",
                     (int)e->type, (int)e->retryability, (int)e->breaker, e->retry_count,
                     (int)e->decision, (long long)e->timestamp_ms, (long long)e->timeout_ms,
                     e->executed ? 1 : 0);
    size_t o = (size_t)n;
    const char *texts[3] = {e->tool_id, e->error, e->detail};
    size_t lens[3] = {tool_len, err_len, det_len};
    for (int i = 0; i < 3; i++) {
        o += (size_t)snprintf(buf + o, RD_EVENT_TEXT_MAX - o, "%zu:", lens[i]);
        memcpy(buf + o, texts[i], lens[i]);
        o += lens[i];
    }
    if (e->trace_id[0] && e->span_id[0]) {
        buf[o++] = 'T';
        memcpy(buf + o, e->trace_id, RD_TRACE_ID_HEX);
        memcpy(buf + o + RD_TRACE_ID_HEX, e->span_id, RD_SPAN_ID_HEX);
        o += RD_TRACE_ID_HEX + RD_SPAN_ID_HEX;
    }
    return o;
}

/* The optional trace suffix: absent, or exactly the ids (hex checked, so a
 * damaged entry cannot put other bytes into an answer). */
static bool trace_suffix(const char *p, const char *end, rd_trace_event *e)
{
    if (p == end)
        return true;
    if (end - p != TRACE_SUFFIX_LEN || *p != 'T')
        return false;
    for (const char *q = p + 1; q < end; q++)
        if (!((*q >= '0' && *q <= '9') || (*q >= 'a' && *q <= 'f')))
            return false;
    memcpy(e->trace_id, p + 1, RD_TRACE_ID_HEX);
    memcpy(e->span_id, p + 1 + RD_TRACE_ID_HEX, RD_SPAN_ID_HEX);
    return true;
}

static bool next_number(const char **p, const char *end, long long *v)
{
    char *stop;
    *v = strtoll(*p, &stop, 10);
    if (stop == *p || stop >= end || *stop != '\t')
        return false;
    *p = stop + 1;
    return true;
}

/* A text no longer than size - 1 bytes (so under 64 KiB: *out_len is an
 * event's length field). */
static bool next_text(const char **p, const char *end, char *out, size_t size,
                      uint16_t *out_len)
{
    char *stop;
    unsigned long long len = strtoull(*p, &stop, 10);
    if (stop == *p || stop >= end || *stop != ':' || len >= size ||
        (size_t)(end - stop - 1) < len)
        return false;
    memcpy(out, stop + 1, (size_t)len);
    out[len] = '\0';
    *out_len = (uint16_t)len;
    *p = stop + 1 + len;
    return true;
}

static bool event_decode(const char *text, size_t len, rd_trace_event *e)
{
    const char *p = text, *end = text + len;
    long long f[8];
    memset(e, 0, sizeof *e);
    for (int i = 0; i < 8; i++)
        if (!next_number(&p, end, &f[i]))
            return false;
    e->type = (rd_event_type)f[0];
    e->retryability = (rd_retryability)f[1];
    e->breaker = (rd_breaker_status)f[2];
    e->retry_count = (uint32_t)f[3];
    e->decision = (rd_action)f[4];
    e->timestamp_ms = f[5];
    e->timeout_ms = f[6];
    e->executed = f[7] != 0;
    return next_text(&p, end, e->tool_id, sizeof e->tool_id, &e->tool_id_len) &&
           next_text(&p, end, e->error, sizeof e->error, &e->error_len) &&
           next_text(&p, end, e->detail, sizeof e->detail, &e->detail_len) &&
           trace_suffix(p, end, e);
}

/* Appends up to RD_EVENTS_PER_SCRIPT events in one script run. */
static int turn_append_chunk(redis_store *r, conn_slot *slot, const char *turn_id,
                             rd_trace_event *events, size_t n, int64_t now_ms,
                             int64_t *started, rd_status *st)
{
    char meta[RD_KEY_MAX], list[RD_KEY_MAX], now[24], ttl[24], max_events[24], count[24];
    key_turn(r, turn_id, "meta", meta);
    key_turn(r, turn_id, "events", list);
    time_arg(r, now_ms, now);
    fmt_i64(ttl, r->base.limits.turn_ttl_ms);
    fmt_i64(max_events, (int64_t)r->base.limits.max_events_per_turn);
    fmt_i64(count, (int64_t)n);
    char *texts = n ? malloc(n * RD_EVENT_TEXT_MAX) : NULL;
    if (n && !texts)
        return rd_status_set(st, RD_ERR_NOMEM, "turn_id: out of memory storing trace events");
    const char *argv[6 + RD_EVENTS_PER_SCRIPT] = {meta, list, now, ttl, max_events, count};
    size_t lens[6 + RD_EVENTS_PER_SCRIPT];
    for (int i = 0; i < 6; i++)
        lens[i] = strlen(argv[i]);
    for (size_t i = 0; i < n; i++) {
        argv[6 + i] = texts + i * RD_EVENT_TEXT_MAX;
        lens[6 + i] = event_encode(&events[i], texts + i * RD_EVENT_TEXT_MAX);
    }
    redisReply *reply =
        rd_redis_eval(r, slot, RD_SCRIPT_TURN_APPEND, 2, (int)(6 + n), argv, lens, st);
    free(texts);
    if (!reply)
        return st ? st->code : RD_ERR_UNAVAILABLE;
    bool ok = reply->type == REDIS_REPLY_ARRAY && reply->elements == 2 + n;
    if (ok) {
        *started = int_at(reply, 0);
        for (size_t i = 0; i < n; i++)
            events[i].sequence = (uint64_t)int_at(reply, 2 + i);
    }
    freeReplyObject(reply);
    return ok ? RD_OK : rd_status_set(st, RD_ERR_INTERNAL, "store: redis turn script: bad reply");
}

static int forget_turns(redis_store *r, conn_slot *slot, const redisReply *ids, rd_status *st)
{
    for (size_t i = 0; ids && i < ids->elements; i++) {
        char meta[RD_KEY_MAX], list[RD_KEY_MAX];
        key_turn(r, ids->element[i]->str, "meta", meta);
        key_turn(r, ids->element[i]->str, "events", list);
        const char *keys[] = {meta, list};
        int rc = delete_keys(r, slot, keys, 2, st);
        if (rc != RD_OK)
            return rc;
    }
    return RD_OK;
}

static int turn_append_on(redis_store *r, conn_slot *slot, const char *turn_id,
                          rd_trace_event *events, size_t n, int64_t now_ms,
                          int64_t *started_at_ms, rd_status *st)
{
    int64_t started = 0;
    size_t done = 0;
    int rc;
    do { /* at least once: a touch (n = 0) creates the turn */
        size_t chunk = n - done < RD_EVENTS_PER_SCRIPT ? n - done : RD_EVENTS_PER_SCRIPT;
        rc = turn_append_chunk(r, slot, turn_id, events + done, chunk, now_ms,
                               done ? &(int64_t){0} : &started, st);
        done += chunk;
    } while (rc == RD_OK && done < n);
    if (rc == RD_OK && started_at_ms)
        *started_at_ms = started;
    size_t cap = r->base.limits.max_turns;
    if (rc != RD_OK || cap == 0)
        return rc;
    redisReply *removed;
    rc = index_trim(r, slot, "turns", turn_id, now_ms, cap, &removed, st);
    if (rc == RD_OK && removed)
        rc = forget_turns(r, slot, removed, st);
    if (removed)
        freeReplyObject(removed);
    return rc;
}

int rd_redis_op_turn_append(rd_store *s, const char *turn_id, rd_trace_event *events, size_t n,
                            int64_t now_ms, int64_t *started_at_ms, rd_status *st)
{
    int rc = rd_store_check_id("turn_id", turn_id, st);
    if (rc != RD_OK)
        return rc;
    redis_store *r = rd_redis_as_store(s);
    conn_slot *slot = rd_redis_slot_take(r);
    rc = turn_append_on(r, slot, turn_id, events, n, now_ms, started_at_ms, st);
    rd_redis_slot_give(slot);
    return rc;
}

int rd_redis_op_turn_touch(rd_store *s, const char *turn_id, int64_t now_ms,
                           int64_t *started_at_ms, rd_status *st)
{
    return rd_redis_op_turn_append(s, turn_id, NULL, 0, now_ms, started_at_ms, st);
}

static int decode_events(const redisReply *list, rd_trace_event **events, size_t *n,
                         rd_status *st)
{
    if (list->type != REDIS_REPLY_ARRAY)
        return rd_status_set(st, RD_ERR_INTERNAL, "store: redis turn read: bad reply");
    if (list->elements == 0)
        return RD_OK;
    rd_trace_event *out = malloc(list->elements * sizeof *out);
    if (!out)
        return rd_status_set(st, RD_ERR_NOMEM, "turn_id: out of memory reading the trace");
    for (size_t i = 0; i < list->elements; i++) {
        const redisReply *e = list->element[i];
        if (e->type != REDIS_REPLY_STRING || !event_decode(e->str, e->len, &out[i])) {
            free(out);
            return rd_status_set(st, RD_ERR_INTERNAL,
                                 "turn_id: stored trace event %zu is malformed", i + 1);
        }
        out[i].sequence = i + 1; /* events are only appended: position = sequence */
    }
    *events = out;
    *n = list->elements;
    return RD_OK;
}

int rd_redis_op_turn_read(rd_store *s, const char *turn_id, int64_t now_ms,
                          rd_trace_event **events, size_t *n, int64_t *started_at_ms,
                          rd_status *st)
{
    *events = NULL;
    *n = 0;
    int rc = rd_store_check_id("turn_id", turn_id, st);
    if (rc != RD_OK)
        return rc;
    redis_store *r = rd_redis_as_store(s);
    char meta[RD_KEY_MAX], list[RD_KEY_MAX], now[24], ttl[24];
    key_turn(r, turn_id, "meta", meta);
    key_turn(r, turn_id, "events", list);
    time_arg(r, now_ms, now);
    fmt_i64(ttl, r->base.limits.turn_ttl_ms);
    const char *argv[] = {meta, list, now, ttl};
    conn_slot *slot = rd_redis_slot_take(r);
    redisReply *reply = rd_redis_eval(r, slot, RD_SCRIPT_TURN_READ, 2, 4, argv, NULL, st);
    rd_redis_slot_give(slot);
    if (!reply)
        return st ? st->code : RD_ERR_UNAVAILABLE;
    if (reply->type == REDIS_REPLY_ARRAY && reply->elements == 1) {
        freeReplyObject(reply);
        return rd_status_set(st, RD_ERR_NOT_FOUND, "turn_id: unknown turn");
    }
    if (reply->type != REDIS_REPLY_ARRAY || reply->elements != 4) {
        freeReplyObject(reply);
        return rd_status_set(st, RD_ERR_INTERNAL, "store: redis turn read: bad reply");
    }
    rc = decode_events(reply->element[3], events, n, st);
    if (rc == RD_OK && started_at_ms)
        *started_at_ms = int_at(reply, 1);
    freeReplyObject(reply);
    return rc;
}
