/* The per-tool circuit breaker state machine (see breaker.h for the rules).
 *
 * Every function works on one rd_breaker in place and takes the time from
 * the caller; nothing here locks, allocates or reads a clock. */
#include "domain/breaker.h"

#include "domain/err.h"

/* Adds without wrapping: a huge timeout must not turn open_until into a time
 * in the past. */
static int64_t add_saturating(int64_t a, int64_t b)
{
    if (b > 0 && a > INT64_MAX - b)
        return INT64_MAX;
    if (b < 0 && a < INT64_MIN - b)
        return INT64_MIN;
    return a + b;
}

static uint32_t increment_saturating(uint32_t v)
{
    return v == UINT32_MAX ? v : v + 1;
}

/* A threshold of 0 would mean "open before any failure"; the loader rejects
 * it, and here it behaves as 1 so a bad policy cannot wedge a breaker. */
static uint32_t at_least_one(uint32_t v)
{
    return v == 0 ? 1 : v;
}

static void clear_probe(rd_breaker *b)
{
    b->probe_token = 0;
    b->probe_lease_until_ms = 0;
}

/* CLOSED or HALF_OPEN -> OPEN: a new epoch whose timer starts now. */
static void open_now(rd_breaker *b, const rd_breaker_policy *p, int64_t now_ms)
{
    b->stored = RD_BREAKER_OPEN;
    b->opened_at_ms = now_ms;
    b->open_until_ms = add_saturating(now_ms, p->open_timeout_ms);
    b->generation++;
    b->opens_total++;
    b->consecutive_successes = 0;
    clear_probe(b);
}

static void close_now(rd_breaker *b)
{
    b->stored = RD_BREAKER_CLOSED;
    b->consecutive_failures = 0;
    b->consecutive_successes = 0;
    clear_probe(b);
}

void rd_breaker_init(rd_breaker *b, int64_t now_ms)
{
    *b = (rd_breaker){
        .stored = RD_BREAKER_CLOSED,
        .last_seen_ms = now_ms,
    };
}

bool rd_breaker_hold_live(const rd_breaker *b, int64_t now_ms)
{
    if (b->forced != RD_BREAKER_OPEN && b->forced != RD_BREAKER_CLOSED)
        return false;
    return b->forced_until_ms == 0 || now_ms < b->forced_until_ms;
}

rd_breaker_status rd_breaker_status_at(const rd_breaker *b, int64_t now_ms)
{
    if (rd_breaker_hold_live(b, now_ms))
        return b->forced;
    if (b->stored != RD_BREAKER_OPEN)
        return RD_BREAKER_CLOSED;
    return now_ms >= b->open_until_ms ? RD_BREAKER_HALF_OPEN : RD_BREAKER_OPEN;
}

bool rd_breaker_probe_live(const rd_breaker *b, int64_t now_ms)
{
    return b->probe_token != 0 && now_ms < b->probe_lease_until_ms;
}

rd_admission rd_breaker_admit(rd_breaker *b, const rd_breaker_policy *p, int64_t now_ms,
                              int64_t lease_ms, uint64_t fresh_token,
                              rd_breaker_transition *transition)
{
    rd_breaker_transition ignored;
    if (!transition)
        transition = &ignored;
    *transition = RD_TRANSITION_NONE;
    b->last_seen_ms = now_ms;
    if (rd_breaker_hold_live(b, now_ms))
        return b->forced == RD_BREAKER_CLOSED ? RD_ADMIT_YES : RD_ADMIT_NO;

    switch (rd_breaker_status_at(b, now_ms)) {
    case RD_BREAKER_CLOSED:
        return RD_ADMIT_YES;
    case RD_BREAKER_HALF_OPEN:
        /* Token 0 means "no probe", so it can never be handed out. */
        if (rd_breaker_probe_live(b, now_ms) || fresh_token == 0)
            return RD_ADMIT_NO;
        b->probe_token = fresh_token;
        /* A lease of at least 1 ms, so the permit is held by someone at all. */
        b->probe_lease_until_ms = add_saturating(now_ms, lease_ms > 0 ? lease_ms : 1);
        *transition = RD_TRANSITION_PROBE_GRANTED;
        return RD_ADMIT_PROBE;
    default:
        return RD_ADMIT_NO;
    }
}

bool rd_breaker_counts_calls(const rd_breaker *b, int64_t now_ms)
{
    return !rd_breaker_hold_live(b, now_ms) &&
           rd_breaker_status_at(b, now_ms) == RD_BREAKER_CLOSED;
}

/* a >= pct % of total, in integers. */
static bool at_least_percent(uint64_t a, uint64_t total, uint32_t pct)
{
    return total > 0 && a * 100 >= (uint64_t)pct * total;
}

bool rd_breaker_rate_tripped(const rd_breaker_policy *p, const rd_breaker_evidence *ev)
{
    if (!ev || ev->calls == 0 || ev->calls < p->minimum_calls)
        return false;
    if (p->failure_rate_threshold > 0 &&
        at_least_percent(ev->failures, ev->calls, p->failure_rate_threshold))
        return true;
    return p->slow_call_ms > 0 && p->slow_call_rate_threshold > 0 &&
           at_least_percent(ev->slow, ev->calls, p->slow_call_rate_threshold);
}

static bool quorum_met(const rd_breaker_policy *p, const rd_breaker_evidence *ev)
{
    return !ev || p->quorum_min_executors <= 1 ||
           ev->failing_executors >= p->quorum_min_executors;
}

/* Whether the mode's own rule says "open" after this outcome. */
static bool mode_tripped(const rd_breaker *b, const rd_breaker_policy *p, rd_outcome outcome,
                         const rd_breaker_evidence *ev)
{
    if (p->mode == RD_BREAKER_MODE_FAILURE_RATE)
        return rd_breaker_rate_tripped(p, ev); /* any outcome may tip a rate */
    return outcome == RD_OUTCOME_TRANSIENT_FAILURE &&
           b->consecutive_failures >= at_least_one(p->failure_threshold);
}

static rd_breaker_transition record_closed(rd_breaker *b, const rd_breaker_policy *p,
                                           int64_t now_ms, rd_outcome outcome,
                                           rd_breaker_evidence *ev)
{
    if (outcome == RD_OUTCOME_TRANSIENT_FAILURE)
        b->consecutive_failures = increment_saturating(b->consecutive_failures);
    else /* either way the service answered: the streak of outages is over */
        b->consecutive_failures = 0;
    if (!mode_tripped(b, p, outcome, ev))
        return RD_TRANSITION_NONE;
    if (!quorum_met(p, ev)) {
        /* One sick executor must not open the breaker for everyone: the
         * streak goes on past the threshold until enough executors agree. */
        ev->held_by_quorum = true;
        return RD_TRANSITION_NONE;
    }
    open_now(b, p, now_ms);
    return RD_TRANSITION_OPENED;
}

/* Only the holder of the live permit speaks for the half-open period. */
static rd_breaker_transition record_probe(rd_breaker *b, const rd_breaker_policy *p,
                                          int64_t now_ms, rd_outcome outcome)
{
    switch (outcome) {
    case RD_OUTCOME_SUCCESS:
        clear_probe(b);
        b->consecutive_successes = increment_saturating(b->consecutive_successes);
        if (b->consecutive_successes < at_least_one(p->success_threshold))
            return RD_TRANSITION_NONE; /* the next admit leases the next probe */
        close_now(b);
        return RD_TRANSITION_CLOSED;
    case RD_OUTCOME_TRANSIENT_FAILURE:
        b->consecutive_failures = increment_saturating(b->consecutive_failures);
        open_now(b, p, now_ms);
        return RD_TRANSITION_REOPENED;
    case RD_OUTCOME_PERMANENT_FAILURE:
        /* Says nothing about the service's health: free the permit so the
         * next caller probes, decide nothing. */
        b->consecutive_failures = 0;
        clear_probe(b);
        return RD_TRANSITION_NONE;
    }
    return RD_TRANSITION_NONE;
}

rd_breaker_transition rd_breaker_record_evidence(rd_breaker *b, const rd_breaker_policy *p,
                                                 int64_t now_ms, rd_outcome outcome,
                                                 uint64_t permit_token,
                                                 rd_breaker_evidence *ev)
{
    if (ev)
        ev->held_by_quorum = false;
    b->last_seen_ms = now_ms;
    if (rd_breaker_hold_live(b, now_ms))
        return RD_TRANSITION_NONE; /* the operator decides during a hold */
    switch (rd_breaker_status_at(b, now_ms)) {
    case RD_BREAKER_CLOSED:
        return record_closed(b, p, now_ms, outcome, ev);
    case RD_BREAKER_HALF_OPEN:
        if (permit_token == 0 || permit_token != b->probe_token ||
            !rd_breaker_probe_live(b, now_ms))
            return RD_TRANSITION_NONE; /* stale: not the live probe */
        return record_probe(b, p, now_ms, outcome);
    default:
        return RD_TRANSITION_NONE; /* OPEN: the call started before it opened */
    }
}

rd_breaker_transition rd_breaker_record(rd_breaker *b, const rd_breaker_policy *p,
                                        int64_t now_ms, rd_outcome outcome,
                                        uint64_t permit_token)
{
    return rd_breaker_record_evidence(b, p, now_ms, outcome, permit_token, NULL);
}

static void hold(rd_breaker *b, rd_breaker_status status, int64_t now_ms, int64_t ttl_ms)
{
    b->forced = status;
    b->forced_until_ms = ttl_ms > 0 ? add_saturating(now_ms, ttl_ms) : 0;
    clear_probe(b);
}

static void reset_fresh(rd_breaker *b, int64_t now_ms)
{
    rd_breaker fresh;
    rd_breaker_init(&fresh, now_ms);
    fresh.generation = b->generation + 1;
    fresh.opens_total = b->opens_total;
    *b = fresh;
}

int rd_breaker_force(rd_breaker *b, rd_force_mode mode, int64_t now_ms, int64_t ttl_ms)
{
    if (ttl_ms < 0)
        return RD_ERR_INVALID;
    switch (mode) {
    case RD_FORCE_OPEN:
        hold(b, RD_BREAKER_OPEN, now_ms, ttl_ms);
        break;
    case RD_FORCE_CLOSED:
        hold(b, RD_BREAKER_CLOSED, now_ms, ttl_ms);
        break;
    case RD_FORCE_RESET:
        reset_fresh(b, now_ms);
        break;
    case RD_FORCE_RELEASE:
        b->forced = RD_BREAKER_UNSPECIFIED;
        b->forced_until_ms = 0;
        break;
    default:
        return RD_ERR_INVALID;
    }
    b->last_seen_ms = now_ms;
    return RD_OK;
}

bool rd_breaker_is_pristine(const rd_breaker *b, int64_t now_ms)
{
    return b->stored == RD_BREAKER_CLOSED && b->consecutive_failures == 0 &&
           b->probe_token == 0 && !rd_breaker_hold_live(b, now_ms);
}

bool rd_breaker_idle_forgettable(const rd_breaker *b, int64_t now_ms)
{
    return b->stored == RD_BREAKER_CLOSED && b->probe_token == 0 &&
           !rd_breaker_hold_live(b, now_ms);
}

rd_text rd_breaker_status_text(rd_breaker_status s)
{
    switch (s) {
    case RD_BREAKER_CLOSED: return RD_TEXT("closed");
    case RD_BREAKER_OPEN: return RD_TEXT("open");
    case RD_BREAKER_HALF_OPEN: return RD_TEXT("half_open");
    case RD_BREAKER_UNSPECIFIED: break;
    }
    return RD_TEXT("unspecified");
}

const char *rd_breaker_status_name(rd_breaker_status s)
{
    return rd_breaker_status_text(s).s;
}
