#include "transport/methods.h"

#include "grpc/health/v1/health.pb-c.h"
#include "grpc/reflection/v1alpha/reflection.pb-c.h"
#include "ops/observe.h"
#include "ops/otlp.h"
#include "recovery/v1/admin.pb-c.h"
#include "recovery/v1/recovery.pb-c.h"
#include "transport/answers.h"
#include "transport/codec.h"
#include "transport/pbnul.h"
#include "transport/pbread.h"
#include "transport/requests.h"
#include "transport/services.h"

/* Every handler has the same shape: decode -> engine -> encode. */

static int out_or_nomem(void *msg, rd_reply *reply, rd_status *st)
{
    if (!msg)
        return rd_status_set(st, RD_ERR_NOMEM, "response: out of memory");
    reply->msg = msg;
    return RD_OK;
}

/* ---- the hot answers, packed straight from the engine's structs ---- */

/* Most answers fit the transport's answer room, written in place; one that
 * does not (or with no room) goes to the arena, into `expected` bytes (at
 * least 4 KiB) and then twice that until it fits. */
#define ANSWER_FIRST_BYTES 4096
#define ANSWER_MAX_BYTES ((size_t)256 << 20)
#define BREAKER_ANSWER_BYTES 96 /* a breaker with a 20-byte id takes ~60 */

typedef size_t (*answer_fn)(uint8_t *buf, size_t cap, const void *subject);

/* Writes into the end of buf[0, cap); false when it did not fit. */
static bool write_answer(uint8_t *buf, size_t cap, answer_fn write, const void *subject,
                         rd_reply *reply)
{
    size_t len = write(buf, cap, subject);
    if (len == SIZE_MAX)
        return false;
    reply->bytes = buf + cap - len;
    reply->len = len;
    return true;
}

static int pack_answer(const rd_rpc *rpc, answer_fn write, const void *subject, size_t expected,
                       rd_reply *reply, rd_status *st)
{
    if (rpc->answer_room && rpc->answer_room_cap >= expected &&
        write_answer(rpc->answer_room, rpc->answer_room_cap, write, subject, reply))
        return RD_OK;
    size_t first = expected > ANSWER_FIRST_BYTES ? expected : ANSWER_FIRST_BYTES;
    for (size_t cap = first; cap <= ANSWER_MAX_BYTES; cap *= 2) {
        uint8_t *buf = rd_arena_alloc_uninit(rpc->ctx.arena, cap);
        if (!buf)
            break;
        if (write_answer(buf, cap, write, subject, reply))
            return RD_OK;
    }
    return rd_status_set(st, RD_ERR_NOMEM, "response: out of memory");
}

typedef struct decide_subject {
    const char *turn_id;
    const rd_decision *decision;
} decide_subject;

typedef struct breakers_subject {
    const rd_breaker_view *views;
    size_t n;
} breakers_subject;

static size_t classify_answer(uint8_t *buf, size_t cap, const void *subject)
{
    return rd_answer_classify(buf, cap, subject);
}

static size_t decide_answer(uint8_t *buf, size_t cap, const void *subject)
{
    const decide_subject *s = subject;
    return rd_answer_decide(buf, cap, s->turn_id, s->decision);
}

static size_t outcome_answer(uint8_t *buf, size_t cap, const void *subject)
{
    return rd_answer_outcome(buf, cap, subject);
}

static size_t breakers_answer(uint8_t *buf, size_t cap, const void *subject)
{
    const breakers_subject *s = subject;
    return rd_answer_breakers(buf, cap, s->views, s->n);
}

/* The call's context for an engine function whose input the codec has
 * checked (codec.c: every string valid UTF-8, and NUL-free as C strings). */
static rd_call_ctx checked_ctx(const rd_rpc *rpc)
{
    rd_call_ctx ctx = rpc->ctx;
    ctx.text_checked = true;
    return ctx;
}

/* The classification of a Classify request read by either path, and its
 * answer. */
static int classify_and_answer(const rd_rpc *rpc, const rd_call_ctx *ctx, const char *tool_id,
                               const rd_tool_error *err, rd_reply *reply, rd_status *st)
{
    rd_classify_result res;
    int rc = rd_engine_classify(rpc->engine, tool_id, err, ctx, &res, st);
    return rc ? rc : pack_answer(rpc, classify_answer, &res, 0, reply, st);
}

static int handle_classify(const rd_rpc *rpc, const ProtobufCMessage *m, rd_reply *reply,
                           rd_status *st)
{
    const rd_call_ctx checked = checked_ctx(rpc);
    const Recovery__V1__ClassifyRequest *req = (const void *)m;
    rd_tool_error err;
    int rc = rd_codec_classify_in(req, &err, st);
    return rc ? rc : classify_and_answer(rpc, &checked, req->tool_id, &err, reply, st);
}

/* requests.c checks what the codec checks, strings included. */
static int direct_classify(const rd_rpc *rpc, const uint8_t *data, size_t len, rd_reply *reply,
                           rd_status *st, bool *read)
{
    const rd_call_ctx checked = checked_ctx(rpc);
    const char *tool_id;
    rd_tool_error err;
    *read = rd_request_classify(data, len, checked.arena, &tool_id, &err);
    return *read ? classify_and_answer(rpc, &checked, tool_id, &err, reply, st) : RD_OK;
}

/* The decision on a Decide request read by either path, and its answer. */
static int decide_and_answer(const rd_rpc *rpc, const rd_call_ctx *ctx, const rd_decide_input *in,
                             rd_reply *reply, rd_status *st)
{
    rd_decision d;
    int rc = rd_engine_decide(rpc->engine, in, ctx, &d, st);
    if (rc)
        return rc;
    rd_observe_decision(rpc->svc, rpc->ctx.tenant, rpc->ctx.now_ms, in, &d);
    rd_otlp_decision(rpc->svc->otlp, ctx, in, &d);
    decide_subject subject = {in->turn_id, &d};
    return pack_answer(rpc, decide_answer, &subject, 0, reply, st);
}

static int handle_decide(const rd_rpc *rpc, const ProtobufCMessage *m, rd_reply *reply,
                         rd_status *st)
{
    const rd_call_ctx checked = checked_ctx(rpc);
    rd_decide_input in;
    rd_tool_error err;
    int rc = rd_codec_decide_in((const void *)m, checked.arena, &in, &err, st);
    return rc ? rc : decide_and_answer(rpc, &checked, &in, reply, st);
}

/* requests.c checks what the codec checks, strings included. */
static int direct_decide(const rd_rpc *rpc, const uint8_t *data, size_t len, rd_reply *reply,
                         rd_status *st, bool *read)
{
    const rd_call_ctx checked = checked_ctx(rpc);
    rd_decide_input in;
    rd_tool_error err;
    *read = rd_request_decide(data, len, checked.arena, &in, &err);
    return *read ? decide_and_answer(rpc, &checked, &in, reply, st) : RD_OK;
}

/* The outcome of a RecordOutcome request read by either path, recorded,
 * and its answer. */
static int record_and_answer(const rd_rpc *rpc, const rd_call_ctx *ctx, const rd_outcome_input *in,
                             rd_reply *reply, rd_status *st)
{
    rd_outcome_result res;
    int rc = rd_engine_record_outcome(rpc->engine, in, ctx, &res, st);
    if (rc)
        return rc;
    rd_observe_outcome(rpc->svc, rpc->ctx.tenant, rpc->ctx.now_ms, in, &res);
    return pack_answer(rpc, outcome_answer, &res, 0, reply, st);
}

static int handle_record_outcome(const rd_rpc *rpc, const ProtobufCMessage *m, rd_reply *reply,
                                 rd_status *st)
{
    const rd_call_ctx checked = checked_ctx(rpc);
    rd_outcome_input in;
    rd_tool_error err;
    int rc = rd_codec_outcome_in((const void *)m, checked.arena, &in, &err, st);
    return rc ? rc : record_and_answer(rpc, &checked, &in, reply, st);
}

/* requests.c checks what the codec checks, strings included. */
static int direct_record_outcome(const rd_rpc *rpc, const uint8_t *data, size_t len,
                                 rd_reply *reply, rd_status *st, bool *read)
{
    const rd_call_ctx checked = checked_ctx(rpc);
    rd_outcome_input in;
    rd_tool_error err;
    *read = rd_request_outcome(data, len, checked.arena, &in, &err);
    return *read ? record_and_answer(rpc, &checked, &in, reply, st) : RD_OK;
}

static int handle_get_breaker_state(const rd_rpc *rpc, const ProtobufCMessage *m, rd_reply *reply,
                                    rd_status *st)
{
    const rd_engine *e = rpc->engine;
    const rd_call_ctx *ctx = &rpc->ctx;
    const Recovery__V1__GetBreakerStateRequest *req = (const void *)m;
    breakers_subject subject = {NULL, 0};
    rd_breaker_view *views = NULL;
    int rc = rd_codec_breakers_in(req, st);
    if (!rc)
        rc = rd_engine_breakers(e, (const char *const *)req->tool_ids, req->n_tool_ids, ctx,
                                &views, &subject.n, st);
    subject.views = views;
    return rc ? rc : pack_answer(rpc, breakers_answer, &subject,
                                   subject.n * BREAKER_ANSWER_BYTES, reply, st);
}

static int handle_get_turn_trace(const rd_rpc *rpc, const ProtobufCMessage *m, rd_reply *reply,
                                 rd_status *st)
{
    const rd_engine *e = rpc->engine;
    const rd_call_ctx *ctx = &rpc->ctx;
    const Recovery__V1__GetTurnTraceRequest *req = (const void *)m;
    rd_turn_trace t;
    int rc = rd_codec_turn_trace_in(req, st);
    if (!rc)
        rc = rd_engine_turn_trace(e, req->turn_id, ctx, &t, st);
    return rc ? rc : out_or_nomem(rd_codec_turn_trace_out(ctx->arena, req->turn_id, &t), reply, st);
}

/* Calls kept requested per worker. The service's RPCs come in bursts and
 * get several: a worker's cohort (server.h) holds at most this many calls
 * of one method, since the calls that arrived are requested anew only
 * after it. The others (admin, health, reflection, streams opened once)
 * get one: each requested call is a tag outstanding on the worker's queue,
 * and libgrpc scans those tags on every completion. */
#define WAITING_HOT 16
#define WAITING_COLD 1

#define SERVICE "/recovery.v1.RecoveryService/"
/* A RecoveryService unary RPC; `...` adds designators (.direct). */
#define HOT_UNARY(name, type, fn, ...)                                                       \
    {.path = SERVICE name, .kind = RD_RPC_UNARY, .auth = RD_AUTH_CLIENT,                      \
     .request_type = &type, .handle = fn, .waiting = WAITING_HOT, __VA_ARGS__}
/* Any other method; `...` names its handler or stream. */
#define COLD(path_, kind_, auth_, type, ...)                                                  \
    {.path = path_, .kind = kind_, .auth = auth_, .request_type = &type,                      \
     .waiting = WAITING_COLD, __VA_ARGS__}
#define REFLECTION_TYPE grpc__reflection__v1alpha__server_reflection_request__descriptor

const rd_method rd_methods[] = {
    HOT_UNARY("Classify", recovery__v1__classify_request__descriptor, handle_classify,
              .direct = direct_classify),
    HOT_UNARY("Decide", recovery__v1__decide_request__descriptor, handle_decide,
              .direct = direct_decide),
    HOT_UNARY("RecordOutcome", recovery__v1__record_outcome_request__descriptor,
              handle_record_outcome, .direct = direct_record_outcome),
    HOT_UNARY("GetBreakerState", recovery__v1__get_breaker_state_request__descriptor,
              handle_get_breaker_state, .lists = true),
    HOT_UNARY("GetTurnTrace", recovery__v1__get_turn_trace_request__descriptor,
              handle_get_turn_trace, .lists = true),
    COLD(SERVICE "WatchBreakers", RD_RPC_SERVER_STREAM, RD_AUTH_CLIENT,
         recovery__v1__watch_breakers_request__descriptor, .stream = &rd_breaker_watch_stream),
    COLD("/recovery.v1.AdminService/ForceBreaker", RD_RPC_UNARY, RD_AUTH_ADMIN,
         recovery__v1__force_breaker_request__descriptor, .handle = rd_admin_force_handler),
    COLD("/grpc.health.v1.Health/Check", RD_RPC_UNARY, RD_AUTH_NONE,
         grpc__health__v1__health_check_request__descriptor, .handle = rd_health_check_handler),
    COLD("/grpc.health.v1.Health/Watch", RD_RPC_SERVER_STREAM, RD_AUTH_NONE,
         grpc__health__v1__health_check_request__descriptor, .stream = &rd_health_watch_stream),
    /* v1 and v1alpha messages are identical on the wire: one type serves both */
    COLD("/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo", RD_RPC_BIDI,
         RD_AUTH_REFLECTION, REFLECTION_TYPE, .handle = rd_reflection_handler),
    COLD("/grpc.reflection.v1.ServerReflection/ServerReflectionInfo", RD_RPC_BIDI,
         RD_AUTH_REFLECTION, REFLECTION_TYPE, .handle = rd_reflection_handler),
};
const size_t rd_methods_count = sizeof rd_methods / sizeof rd_methods[0];

ProtobufCMessage *rd_method_decode(const rd_method *m, rd_arena *arena, const uint8_t *data,
                                   size_t len, rd_status *st)
{
    char field[160];
    if (rd_pb_nul_field(m->request_type, data, len, field, sizeof field)) {
        rd_status_set(st, RD_ERR_INVALID, "%s: contains a NUL byte", field);
        return NULL;
    }
    ProtobufCMessage *msg = rd_pb_read(m->request_type, arena, data, len);
    if (!msg) {
        ProtobufCAllocator alloc = rd_codec_allocator(arena);
        msg = protobuf_c_message_unpack(m->request_type, &alloc, len, data);
    }
    if (!msg)
        rd_status_set(st, RD_ERR_INVALID, "request: not a valid %s message", m->request_type->name);
    return msg;
}

int rd_method_unary(const rd_method *m, const rd_rpc *rpc, const uint8_t *data, size_t len,
                    rd_reply *reply, rd_status *st)
{
    bool read = false;
    int rc = m->direct ? m->direct(rpc, data, len, reply, st, &read) : RD_OK;
    if (read)
        return rc;
    ProtobufCMessage *req = rd_method_decode(m, rpc->ctx.arena, data, len, st);
    return req ? m->handle(rpc, req, reply, st) : st->code;
}
