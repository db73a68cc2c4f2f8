/* The Redis store's breaker record as C reads it, and one call of a
 * breaker script, shared by redis_breakers.c (the scripts) and
 * redis_in_place.c (the calls that need none). */
#ifndef RD_STORE_REDIS_BREAKER_RECORD_H
#define RD_STORE_REDIS_BREAKER_RECORD_H

#include <endian.h>

#include "domain/window.h"
#include "store/redis_ops.h"

/* The record (breaker_read.lua): big-endian 64-bit integers, the 11
 * fields in REC_HEAD's order, then RD_WINDOW_BUCKETS slots of (bucket,
 * calls, failures, slow). The numbers that lead a reply (REPLY_LEAD):
 * code, admission, transition, now, calls, failures, slow, failing
 * executors, held by quorum, the probe's lease end, last_seen; the token's
 * digits follow them. */
#define RD_BREAKER_FIELDS 11
#define RD_RECORD_NUMBERS (RD_BREAKER_FIELDS + 4 * RD_WINDOW_BUCKETS)
#define RD_RECORD_LEN (8 * RD_RECORD_NUMBERS)
#define RD_REPLY_LEAD 11
enum { F_ST, F_CF, F_CS, F_OA, F_OU, F_GEN, F_OT, F_LS, F_VER, F_FO, F_FU };

static inline int64_t record_number(const char *rec, int k)
{
    uint64_t bits;
    memcpy(&bits, rec + 8 * k, sizeof bits);
    return (int64_t)be64toh(bits);
}

static inline void record_fields(const char *rec, int64_t f[RD_BREAKER_FIELDS])
{
    for (int k = 0; k < RD_BREAKER_FIELDS; k++)
        f[k] = record_number(rec, k);
}

/* The calls key's value (load_calls in breaker_read.lua), in decimal
 * digits: H * 10^11 + failures * 10^8 + calls. `calls` counts the outcomes
 * added without a script since a script last wrote the key, `failures` the
 * transient failures among them. H below RD_CALLS_BASE (what INCR leaves
 * where there was no key, or a value of an older layout, all below 2^53)
 * holds nothing; otherwise H - RD_CALLS_BASE = stamp * RD_CALLS_TAGS + tag,
 * where tag is the window bucket (mod RD_CALLS_TAGS, a multiple of the
 * window's slots) the pending outcomes were counted in and the stamp is
 * (version mod RD_CALLS_VERSIONS) * RD_CALLS_WRITES + writes, writes
 * counting the scripts' writes: what an outcome counted there tells the
 * record script. A success adds 1, a transient failure RD_CALLS_FAILURE. */
#define RD_CALLS_TAGS 350
#define RD_CALLS_WRITES 1024
#define RD_CALLS_VERSIONS 256
#define RD_CALLS_FAILURE INT64_C(100000001)
#define RD_CALLS_HEAD INT64_C(100000000000)
#define RD_CALLS_BASE 100000
/* Beyond these, an outcome goes on to the script, which folds the pending
 * ones in, long before a field could carry into the next. */
#define RD_CALLS_PENDING_MAX 90000000
#define RD_CALLS_FAILURES_MAX 500

typedef struct calls_value {
    bool valid;
    int64_t stamp, version, tag, pending, failures;
} calls_value;

static inline calls_value calls_decode(int64_t v)
{
    calls_value k = {0};
    if (v < RD_CALLS_HEAD * RD_CALLS_BASE)
        return k;
    int64_t h = v / RD_CALLS_HEAD - RD_CALLS_BASE;
    k.pending = v % 100000000;
    k.failures = v / 100000000 % 1000;
    k.tag = h % RD_CALLS_TAGS;
    k.stamp = h / RD_CALLS_TAGS;
    k.version = k.stamp / RD_CALLS_WRITES;
    k.valid = k.version < RD_CALLS_VERSIONS;
    return k;
}

static inline rd_breaker breaker_from(const int64_t f[RD_BREAKER_FIELDS])
{
    return (rd_breaker){
        .stored = (rd_breaker_status)f[F_ST],
        .consecutive_failures = (uint32_t)f[F_CF],
        .consecutive_successes = (uint32_t)f[F_CS],
        .opened_at_ms = f[F_OA],
        .open_until_ms = f[F_OU],
        .generation = (uint64_t)f[F_GEN],
        .opens_total = (uint64_t)f[F_OT],
        .last_seen_ms = f[F_LS],
        .forced = (rd_breaker_status)f[F_FO],
        .forced_until_ms = f[F_FU],
    };
}

typedef struct breaker_call {
    rd_script_id script;
    const char *tool;
    const rd_breaker_policy *policy;
    int64_t now_ms;
    int64_t lease_ms;        /* admit */
    rd_outcome outcome;      /* record */
    uint64_t token;          /* admit: fresh token; record: the caller's permit */
    rd_force_mode mode;      /* force */
    int64_t hold_ttl_ms;     /* force */
    const rd_call_report *call; /* record: executor and latency */
    const outcome_run *run;  /* record: a batch instead of one outcome, or NULL */
    int64_t run_gen;         /* record: the batch's epoch */
    /* record, an outcome sent to the calls key first: whether it was
     * counted there, the key's stamp then, the record's version as read
     * beside it, and for a transient failure the streak the count made */
    bool calls_sent, calls_counted;
    int64_t calls_stamp, calls_version, calls_streak;
} breaker_call;

/* redis_in_place.c. Each answers *done; otherwise the script decides, told
 * by c what was counted already. */
int rd_redis_admit_without_script(redis_store *r, conn_slot *slot, const breaker_call *c,
                                  rd_store_result *out, bool *done, rd_status *st);
bool rd_redis_success_in_place(const redis_store *r, const breaker_call *c);
bool rd_redis_failure_in_place(const redis_store *r, const breaker_call *c);
int rd_redis_record_without_script(redis_store *r, conn_slot *slot, breaker_call *c,
                                   rd_store_result *out, bool *done, rd_status *st);

#endif
