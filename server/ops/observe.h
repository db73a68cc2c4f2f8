/* What the server does after the engine answered, besides replying:
 * breaker changes to the watch bus, counters to the metrics, trace events
 * and operator actions to the JSON log. One place, so every handler
 * reports the same way. */
#ifndef RD_OPS_OBSERVE_H
#define RD_OPS_OBSERVE_H

#include "engine/decide.h"
#include "ops/runtime.h"

/* tenant: the call's (rd_call_ctx.tenant), "" or NULL = none; its
 * breaker changes reach only its own watchers, and the log names it. */
void rd_observe_decision(const rd_services *svc, const char *tenant, int64_t now_ms,
                         const rd_decide_input *in, const rd_decision *d);
void rd_observe_outcome(const rd_services *svc, const char *tenant, int64_t now_ms,
                        const rd_outcome_input *in, const rd_outcome_result *r);
/* An operator's ForceBreaker, after it was applied. */
void rd_observe_force(const rd_services *svc, const char *tenant, int64_t now_ms,
                      const char *tool_id,
                      rd_force_mode mode, int64_t ttl_ms, const rd_breaker_view *v,
                      const char *reason,
                      const char *operator_name);

/* The watch-stream cause of an operator's command ("forced_open", ...). */
const char *rd_force_cause(rd_force_mode mode);

#endif
