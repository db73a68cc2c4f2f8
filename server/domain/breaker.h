/* The per-tool circuit breaker as a pure state machine over rd_breaker.
 *
 * Every change of a breaker goes through the functions below; a store calls
 * them under its lock (or mirrors them in its server-side script). Time and
 * probe tokens are passed in, so the machine is deterministic under test.
 *
 *   CLOSED --(failure_threshold consecutive transient failures)--> OPEN
 *   OPEN   --(now >= open_until)--> HALF_OPEN (derived, no timer)
 *   HALF_OPEN: one probe permit at a time, leased for lease_ms
 *     probe success x success_threshold --> CLOSED (streaks reset)
 *     probe transient failure           --> OPEN (timer restarts, new generation)
 *   A permanent error resets the failure streak (the service answered) and,
 *   from the probe holder, frees the permit without deciding anything.
 *   Outcomes while OPEN, and half-open outcomes without the live permit, are
 *   stale (the call started before the breaker changed) and change nothing.
 *
 * Operator holds (rd_breaker_force): while a hold is live (no end time, or
 * now < forced_until_ms) the breaker reports the held status, admits every
 * call (CLOSED) or none (OPEN), grants no probe, and ignores outcomes: what
 * happens during a hold is the operator's doing, not evidence about the
 * tool. When the hold ends the breaker's own state applies again. */
#ifndef RD_DOMAIN_BREAKER_H
#define RD_DOMAIN_BREAKER_H

#include "domain/types.h"

typedef enum {
    RD_OUTCOME_SUCCESS = 1,
    RD_OUTCOME_TRANSIENT_FAILURE = 2,
    RD_OUTCOME_PERMANENT_FAILURE = 3,
} rd_outcome;

typedef enum {
    RD_ADMIT_YES = 1,       /* CLOSED: go ahead */
    RD_ADMIT_PROBE = 2,     /* HALF_OPEN: go ahead as the one probe */
    RD_ADMIT_NO = 3,        /* OPEN, or HALF_OPEN with a probe in flight */
} rd_admission;

typedef enum {
    RD_TRANSITION_NONE = 0,
    RD_TRANSITION_OPENED,       /* CLOSED -> OPEN */
    RD_TRANSITION_REOPENED,     /* HALF_OPEN probe failed -> OPEN */
    RD_TRANSITION_PROBE_GRANTED,/* HALF_OPEN: a probe permit was leased */
    RD_TRANSITION_CLOSED,       /* HALF_OPEN -> CLOSED */
} rd_breaker_transition;

typedef enum {
    RD_FORCE_OPEN = 1,      /* hold OPEN: refuse every call */
    RD_FORCE_CLOSED = 2,    /* hold CLOSED: admit every call */
    RD_FORCE_RESET = 3,     /* fresh CLOSED breaker, new generation, no hold */
    RD_FORCE_RELEASE = 4,   /* end a hold */
} rd_force_mode;

/* A fresh CLOSED breaker. */
void rd_breaker_init(rd_breaker *b, int64_t now_ms);

/* CLOSED, OPEN or HALF_OPEN as seen at now_ms. */
rd_breaker_status rd_breaker_status_at(const rd_breaker *b, int64_t now_ms);

/* True while a probe permit is leased and its lease has not run out. */
bool rd_breaker_probe_live(const rd_breaker *b, int64_t now_ms);

/* Admission check. `fresh_token` (non-zero) becomes the probe token if a
 * probe is granted; *transition reports PROBE_GRANTED then. */
rd_admission rd_breaker_admit(rd_breaker *b, const rd_breaker_policy *p, int64_t now_ms,
                              int64_t lease_ms, uint64_t fresh_token,
                              rd_breaker_transition *transition);

/* Applies an outcome reported with `permit_token` (0 = caller holds none). */
rd_breaker_transition rd_breaker_record(rd_breaker *b, const rd_breaker_policy *p,
                                        int64_t now_ms, rd_outcome outcome,
                                        uint64_t permit_token);

/* What the store counted around one outcome, for the failure-rate mode and
 * quorum tripping (docs/FLEET.md). The store keeps the windows; the rules
 * stay here. */
typedef struct rd_breaker_evidence {
    /* In the call window (policy window_ms), this outcome included. */
    uint64_t calls;
    uint64_t failures;               /* transient failures */
    uint64_t slow;                   /* calls with latency >= slow_call_ms */
    /* Distinct executors with a transient failure in the quorum window. */
    uint32_t failing_executors;
    /* Out: the breaker would have opened but the quorum was not met. */
    bool held_by_quorum;
} rd_breaker_evidence;

/* Whether an outcome recorded now counts in the call window: only while
 * CLOSED and not held (outcomes while OPEN or HALF_OPEN are about the
 * breaker's own probing, not the tool's traffic). */
bool rd_breaker_counts_calls(const rd_breaker *b, int64_t now_ms);

/* True when the failure-rate rule alone would open: enough calls and a
 * failure or slow-call percentage at or above its threshold. */
bool rd_breaker_rate_tripped(const rd_breaker_policy *p, const rd_breaker_evidence *ev);

/* rd_breaker_record with the store's counts. ev == NULL: no counts (the
 * consecutive rule applies, the quorum counts as met, a failure-rate
 * policy never opens). A CLOSED breaker opens when its mode's rule trips
 * AND the quorum is met; ev->held_by_quorum tells the first without the
 * second. The half-open rules are unchanged. */
rd_breaker_transition rd_breaker_record_evidence(rd_breaker *b, const rd_breaker_policy *p,
                                                 int64_t now_ms, rd_outcome outcome,
                                                 uint64_t permit_token,
                                                 rd_breaker_evidence *ev);

/* True while an operator's hold applies at now_ms. */
bool rd_breaker_hold_live(const rd_breaker *b, int64_t now_ms);

/* Applies an operator's command. ttl_ms > 0 ends an OPEN/CLOSED hold at
 * now_ms + ttl_ms; 0 holds until released. OPEN and CLOSED also drop a
 * probe permit in flight, RESET additionally bumps the generation so permits
 * of the old epoch can never speak again (opens_total is kept: it counts
 * history, not state). Returns RD_OK or RD_ERR_INVALID for an unknown mode
 * or a negative ttl (the breaker is unchanged then). */
int rd_breaker_force(rd_breaker *b, rd_force_mode mode, int64_t now_ms, int64_t ttl_ms);

/* A breaker that can be forgotten without losing information. */
bool rd_breaker_is_pristine(const rd_breaker *b, int64_t now_ms);

/* A breaker the stores forget once idle for tool_idle_ttl_ms: CLOSED, no
 * probe, no live hold, with or without a failure streak (a streak that has
 * seen no call for that long says nothing about the tool now). */
bool rd_breaker_idle_forgettable(const rd_breaker *b, int64_t now_ms);

const char *rd_breaker_status_name(rd_breaker_status s); /* "closed", ... */
rd_text rd_breaker_status_text(rd_breaker_status s);     /* the same, with its length */

#endif
