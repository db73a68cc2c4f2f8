/* One libFuzzer target per request type of the API. The input is a request
 * message as it arrives off the wire; it goes through what call.c does with
 * one: rd_method_unary (the method's direct reader when it has one and it
 * accepts the bytes, else decoding into the worker's arena and the method's
 * handler from the method table), so validation, the decision engine over
 * the in-memory store and the shipped configuration, and the response built
 * in the arena, or packed there by the handler itself; then encoding of the
 * response. A server-streaming method's request is decoded and its stream
 * drained.
 *
 * FUZZ_METHOD (a compile-time definition) is the method's path, e.g.
 * "/recovery.v1.RecoveryService/Decide"; tests/fuzz/CMakeLists.txt builds
 * one binary per request type from this file.
 *
 * What counts as a bug besides a sanitizer report:
 *   - a handler that answers RD_ERR_INTERNAL ("a bug or an impossible
 *     state") to any request;
 *   - an error without a message naming the field;
 *   - a success whose response protobuf-c considers incomplete, or whose
 *     packed bytes are not protobuf-c's own packing of what they decode to.
 *
 * Each input starts from a fresh store and is handled ROUNDS times at
 * advancing times, so a single input can drive a breaker through its
 * threshold and a turn's trace through several events, and still reproduce
 * on its own. */
#include <protobuf-c/protobuf-c.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"
#include "domain/arena.h"
#include "domain/retry.h"
#include "domain/trace.h"
#include "fuzz_support.h"
#include "store/factory.h"
#include "transport/codec.h"
#include "transport/methods.h"

#ifndef FUZZ_METHOD
#error "FUZZ_METHOD (the method's path) must be defined"
#endif

#define ROUNDS 6                  /* one more than the shipped failure_threshold */
#define ROUND_STEP_MS 7000        /* 6 rounds span more than a 30 s breaker timeout */
#define START_MS 1700000000000LL  /* a fixed clock: inputs reproduce exactly */
#define STREAM_MESSAGES_MAX 64    /* a stream source drained this far per round */

static struct {
    rd_services svc;
    const rd_method *method;
    rd_arena arena;
    rd_rng rng;
} env;

static void fail(const char *what, const char *detail)
{
    fprintf(stderr, "fuzz %s: %s: %s\n", FUZZ_METHOD, what, detail);
    abort();
}

static const rd_method *method_by_path(const char *path)
{
    for (size_t i = 0; i < rd_methods_count; i++)
        if (!strcmp(rd_methods[i].path, path))
            return &rd_methods[i];
    fail("no such method in the method table", path);
    return NULL;
}

/* The services main.c builds, over the shipped configuration, which uses
 * the in-memory store. Lives for the whole process. */
static void env_init(void)
{
    fuzz_quiet_logs();
    char err[1024];
    rd_config *cfg = rd_config_load(RD_SOURCE_DIR "/config/recovery.yaml", err, sizeof err);
    if (!cfg)
        fail("the shipped config does not load", err);
    env.svc.metrics = rd_metrics_new(cfg->metrics.max_tools);
    env.svc.health = rd_health_new();
    env.svc.watch = rd_watch_bus_new(256);
    env.svc.config = rd_live_config_new(cfg); /* owns cfg from here */
    if (!env.svc.metrics || !env.svc.health || !env.svc.watch || !env.svc.config)
        fail("setup", "out of memory");
    rd_health_set_serving(env.svc.health, true);
    env.method = method_by_path(FUZZ_METHOD);
    rd_arena_init(&env.arena, 64 * 1024);
    rd_rng_seed(&env.rng, 42);
}

static void check_error(int rc, const rd_status *st)
{
    if (rc == RD_ERR_INTERNAL)
        fail("handler answered INTERNAL", st->msg);
    if (rc != RD_OK && !st->msg[0])
        fail("error without a message", rd_err_name((rd_err)rc));
}

/* The name of a string field of m (nested messages included) that is not
 * valid UTF-8, or NULL. proto3 clients reject such a message, and the
 * engine copies checked request texts into answers without looking again
 * (rd_call_ctx.text_checked): this holds it to that. */
static const char *invalid_utf8_field(const ProtobufCMessage *m)
{
    const ProtobufCMessageDescriptor *d = m->descriptor;
    for (unsigned i = 0; i < d->n_fields; i++) {
        const ProtobufCFieldDescriptor *f = &d->fields[i];
        if (f->type != PROTOBUF_C_TYPE_STRING && f->type != PROTOBUF_C_TYPE_MESSAGE)
            continue;
        if ((f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) &&
            *(const uint32_t *)((const char *)m + f->quantifier_offset) != f->id)
            continue; /* another member of the oneof holds the storage */
        const char *member = (const char *)m + f->offset;
        bool repeated = f->label == PROTOBUF_C_LABEL_REPEATED;
        size_t n = repeated ? *(const size_t *)((const char *)m + f->quantifier_offset) : 1;
        void *const *values = repeated ? *(void *const *const *)member : (void *const *)member;
        for (size_t k = 0; k < n; k++) {
            const void *v = values[k];
            if (!v)
                continue;
            if (f->type == PROTOBUF_C_TYPE_MESSAGE) {
                const char *bad = invalid_utf8_field(v);
                if (bad)
                    return bad;
            } else if (rd_utf8_valid_len(v, strlen(v)) != strlen(v)) {
                return f->name;
            }
        }
    }
    return NULL;
}

static void check_response(const ProtobufCMessage *resp)
{
    if (!resp)
        fail("success without a response", "");
    if (!protobuf_c_message_check(resp))
        fail("incomplete response", resp->descriptor->name);
    const char *bad = invalid_utf8_field(resp);
    if (bad)
        fail("a string field of the answer is not valid UTF-8", bad);
    /* call.c's encode(): the one-pass packer writes protobuf-c's bytes. */
    const char *why = fuzz_packing_mismatch(resp);
    if (why)
        fail(why, resp->descriptor->name);
}

/* The answers handlers pack themselves (transport/answers.c), by path. */
static const struct {
    const char *path;
    const ProtobufCMessageDescriptor *type;
} packed_answers[] = {
    {"/recovery.v1.RecoveryService/Classify", &recovery__v1__classify_response__descriptor},
    {"/recovery.v1.RecoveryService/Decide", &recovery__v1__decide_response__descriptor},
    {"/recovery.v1.RecoveryService/RecordOutcome",
     &recovery__v1__record_outcome_response__descriptor},
    {"/recovery.v1.RecoveryService/GetBreakerState",
     &recovery__v1__get_breaker_state_response__descriptor},
};

static const ProtobufCMessageDescriptor *packed_answer_type(void)
{
    for (size_t i = 0; i < sizeof packed_answers / sizeof packed_answers[0]; i++)
        if (!strcmp(packed_answers[i].path, FUZZ_METHOD))
            return packed_answers[i].type;
    fail("packed bytes from a method without a known answer type", FUZZ_METHOD);
    return NULL;
}

/* Bytes a handler packed must be what protobuf-c writes for the message
 * they decode to: complete, and the same bytes again when packed. */
static void check_packed(const uint8_t *bytes, size_t len)
{
    const ProtobufCMessageDescriptor *type = packed_answer_type();
    ProtobufCMessage *msg = protobuf_c_message_unpack(type, NULL, len, bytes);
    if (!msg)
        fail("packed answer does not decode", type->name);
    check_response(msg);
    uint8_t *again = malloc(len ? len : 1);
    if (!again)
        fail("setup", "out of memory");
    if (protobuf_c_message_get_packed_size(msg) != len ||
        protobuf_c_message_pack(msg, again) != len || memcmp(again, bytes, len) != 0)
        fail("packed answer is not protobuf-c's packing of itself", type->name);
    free(again);
    protobuf_c_message_free_unpacked(msg, NULL);
}

static void check_reply(const rd_reply *reply)
{
    if (reply->bytes)
        check_packed(reply->bytes, reply->len);
    else
        check_response(reply->msg);
}

static void no_wake(void *arg) { (void)arg; }

static void run_stream(const rd_rpc *rpc, const ProtobufCMessage *req)
{
    rd_status st = {.code = RD_OK, .msg = ""};
    void *stream = NULL;
    int rc = env.method->stream->open(rpc, req, no_wake, NULL, &stream, &st);
    check_error(rc, &st);
    if (rc != RD_OK)
        return;
    for (int i = 0; i < STREAM_MESSAGES_MAX; i++) {
        ProtobufCMessage *msg = env.method->stream->next(stream, rpc);
        if (!msg)
            break;
        check_response(msg);
    }
    env.method->stream->close(stream);
}

static void run_round(const uint8_t *data, size_t size, rd_store *store, int round)
{
    rd_config_snap *snap = rd_live_config_acquire(env.svc.config);
    rd_engine engine = {.policy = &snap->cfg->policy, .store = store};
    rd_services svc = env.svc;
    svc.store = store;
    rd_rpc rpc = {.svc = &svc, .engine = &engine, .config = snap->cfg,
                  .ctx = {.now_ms = START_MS + (int64_t)round * ROUND_STEP_MS,
                          .arena = &env.arena, .rng = &env.rng}};
    /* Read anew each round, as a retried call would be. */
    rd_status st = {.code = RD_OK, .msg = ""};
    if (env.method->kind == RD_RPC_SERVER_STREAM) {
        ProtobufCMessage *req = rd_method_decode(env.method, &env.arena, data, size, &st);
        if (req)
            run_stream(&rpc, req);
    } else {
        rd_reply reply = {NULL, NULL, 0};
        int rc = rd_method_unary(env.method, &rpc, data, size, &reply, &st);
        check_error(rc, &st);
        if (rc == RD_OK)
            check_reply(&reply);
    }
    rd_arena_reset(&env.arena);
    rd_config_snap_release(snap);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!env.method)
        env_init();
    rd_status st = {.code = RD_OK, .msg = ""};
    rd_config_snap *snap = rd_live_config_acquire(env.svc.config);
    rd_store *store = rd_store_from_config(&snap->cfg->store, &snap->cfg->learning, snap->cfg->server.workers, NULL, &st);
    rd_config_snap_release(snap);
    if (!store)
        fail("cannot create the store", st.msg);
    for (int round = 0; round < ROUNDS; round++)
        run_round(data, size, store, round);
    rd_store_destroy(store);
    return 0;
}
