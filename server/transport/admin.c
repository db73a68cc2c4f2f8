/* recovery.v1.AdminService/ForceBreaker: an operator's hold, reset or
 * release of one tool's breaker. The admin token is checked by the
 * transport before this runs (methods.c marks the method RD_AUTH_ADMIN). */

#include "ops/observe.h"
#include "recovery/v1/admin.pb-c.h"
#include "transport/codec.h"
#include "transport/services.h"

#define TEXT_FIELD_MAX 512

_Static_assert((int)RD_FORCE_RELEASE == (int)RECOVERY__V1__FORCE_MODE__FORCE_MODE_RELEASE,
               "force modes mirror the proto");

int rd_admin_force_handler(const rd_rpc *rpc, const ProtobufCMessage *req,
                           rd_reply *reply, rd_status *st)
{
    const Recovery__V1__ForceBreakerRequest *r = (const void *)req;
    int rc;
    if ((rc = rd_codec_id_in(r->tool_id, "tool_id", RD_ID_MAX, true, st)) ||
        (rc = rd_codec_text_in(r->reason, "reason", TEXT_FIELD_MAX, false, st)) ||
        (rc = rd_codec_text_in(r->operator_, "operator", TEXT_FIELD_MAX, false, st)))
        return rc;
    rd_breaker_view view;
    rd_force_mode mode = (rd_force_mode)r->mode;
    rc = rd_engine_force(rpc->engine, r->tool_id, mode, r->ttl_ms, &rpc->ctx, &view, st);
    if (rc != RD_OK)
        return rc;
    rd_observe_force(rpc->svc, rpc->ctx.tenant, rpc->ctx.now_ms, r->tool_id, mode, r->ttl_ms, &view, r->reason,
                     r->operator_);
    Recovery__V1__ForceBreakerResponse *out = rd_arena_alloc(rpc->ctx.arena, sizeof *out);
    if (!out)
        return rd_status_set(st, RD_ERR_NOMEM, "response: out of memory");
    recovery__v1__force_breaker_response__init(out);
    out->breaker = rd_codec_breaker_state_out(rpc->ctx.arena, &view);
    if (!out->breaker)
        return rd_status_set(st, RD_ERR_NOMEM, "response: out of memory");
    reply->msg = (ProtobufCMessage *)out;
    return RD_OK;
}
