/* Reporting of engine results (see observe.h). */
#include "ops/observe.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "domain/log.h"
#include "domain/trace.h"

/* Debug only: the fields are built after the level check, because this
 * runs on every Decide and RecordOutcome and the level is usually info. */
static void log_trace_events(const rd_trace_event *events, size_t n, const char *turn_id)
{
    if (!rd_log_enabled(RD_LOG_DEBUG))
        return;
    for (size_t i = 0; i < n; i++) {
        const rd_trace_event *e = &events[i];
        char fields[2048] = "";
        rd_log_kv(fields, sizeof fields, "event", rd_event_type_name(e->type));
        rd_log_kv(fields, sizeof fields, "tool_id", e->tool_id);
        rd_log_kv(fields, sizeof fields, "turn_id", turn_id ? turn_id : "");
        rd_log_kv(fields, sizeof fields, "detail", e->detail);
        if (e->error[0])
            rd_log_kv(fields, sizeof fields, "error", e->error);
        if (e->trace_id[0]) {
            rd_log_kv(fields, sizeof fields, "trace_id", e->trace_id);
            rd_log_kv(fields, sizeof fields, "span_id", e->span_id);
        }
        rd_log(RD_LOG_DEBUG, "trace event", fields);
    }
}

/* The bus carries namespaced keys ("<tenant>/<tool>", engine/tenant.h),
 * so that a tenant's watchers see its changes only. */
static void publish(const rd_services *svc, const char *tenant, int64_t now_ms,
                    const rd_breaker_view *v, const char *cause)
{
    if (!tenant || !tenant[0]) {
        rd_watch_publish(svc->watch, v, cause, now_ms);
        return;
    }
    char key[RD_TENANT_ID_MAX + 1 + RD_ID_MAX + 1];
    snprintf(key, sizeof key, "%s/%s", tenant, v->tool_id ? v->tool_id : "");
    rd_breaker_view namespaced = *v;
    namespaced.tool_id = key;
    rd_watch_publish(svc->watch, &namespaced, cause, now_ms);
}

/* State changes of a shared store reach the bus through the store follower
 * (ops/store_follow.c), for every replica's changes alike; publishing them
 * here too would deliver this replica's twice. Probe grants are not stored
 * events, so they are always published here. */
static void publish_state_change(const rd_services *svc, const char *tenant, int64_t now_ms,
                                 const rd_breaker_view *v, const char *cause)
{
    if (!svc->follows_store_changes)
        publish(svc, tenant, now_ms, v, cause);
}

/* Breaker changes a Decide caused, as its trace events tell them. A probe
 * that failed again re-opens the breaker (the caller held a permit). */
static void publish_decision_changes(const rd_services *svc, const char *tenant, int64_t now_ms,
                                     const rd_decide_input *in, const rd_decision *d)
{
    for (size_t i = 0; i < d->n_trace; i++) {
        switch (d->trace[i].type) {
        case RD_EV_CIRCUIT_OPENED:
            publish_state_change(svc, tenant, now_ms, &d->breaker,
                                 in->permit_id && in->permit_id[0] ? "reopened" : "opened");
            break;
        case RD_EV_CIRCUIT_HALF_OPENED:
            publish(svc, tenant, now_ms, &d->breaker, "half_opened");
            break;
        case RD_EV_CIRCUIT_CLOSED:
            publish_state_change(svc, tenant, now_ms, &d->breaker, "closed");
            break;
        default:
            break;
        }
    }
}

void rd_observe_decision(const rd_services *svc, const char *tenant, int64_t now_ms,
                         const rd_decide_input *in, const rd_decision *d)
{
    rd_metrics_decision(svc->metrics, in->tool_id, d);
    if (d->duplicate)
        return;
    publish_decision_changes(svc, tenant, now_ms, in, d);
    log_trace_events(d->trace, d->n_trace, in->turn_id);
}

static const char *transition_cause(rd_breaker_transition t)
{
    switch (t) {
    case RD_TRANSITION_OPENED: return "opened";
    case RD_TRANSITION_REOPENED: return "reopened";
    case RD_TRANSITION_PROBE_GRANTED: return "half_opened";
    case RD_TRANSITION_CLOSED: return "closed";
    case RD_TRANSITION_NONE: break;
    }
    return NULL;
}

void rd_observe_outcome(const rd_services *svc, const char *tenant, int64_t now_ms,
                        const rd_outcome_input *in, const rd_outcome_result *r)
{
    bool opened = r->transition == RD_TRANSITION_OPENED ||
                  r->transition == RD_TRANSITION_REOPENED;
    if (r->duplicate)
        return; /* a replayed outcome_id was not recorded: count it nowhere */
    rd_metrics_outcome(svc->metrics, in->tool_id, in,
                       r->has_classification ? &r->classification : NULL, opened);
    const char *cause = transition_cause(r->transition);
    if (cause)
        publish_state_change(svc, tenant, now_ms, &r->breaker, cause);
    log_trace_events(r->trace, r->n_trace, in->turn_id);
}

const char *rd_force_cause(rd_force_mode mode)
{
    switch (mode) {
    case RD_FORCE_OPEN: return "forced_open";
    case RD_FORCE_CLOSED: return "forced_closed";
    case RD_FORCE_RESET: return "reset";
    case RD_FORCE_RELEASE: return "released";
    }
    return "forced";
}

void rd_observe_force(const rd_services *svc, const char *tenant, int64_t now_ms,
                      const char *tool_id,
                      rd_force_mode mode, int64_t ttl_ms, const rd_breaker_view *v,
                      const char *reason,
                      const char *operator_name)
{
    publish_state_change(svc, tenant, now_ms, v, rd_force_cause(mode));
    char fields[2048] = "", ttl[32];
    snprintf(ttl, sizeof ttl, "%" PRId64, ttl_ms);
    if (tenant && tenant[0])
        rd_log_kv(fields, sizeof fields, "tenant", tenant);
    rd_log_kv(fields, sizeof fields, "tool_id", tool_id);
    rd_log_kv(fields, sizeof fields, "action", rd_force_cause(mode));
    rd_log_kv(fields, sizeof fields, "ttl_ms", ttl);
    rd_log_kv(fields, sizeof fields, "reason", reason);
    rd_log_kv(fields, sizeof fields, "operator", operator_name);
    rd_log_kv(fields, sizeof fields, "state", rd_breaker_status_name(v->status));
    rd_log(RD_LOG_WARN, "breaker forced by an operator", fields);
}
