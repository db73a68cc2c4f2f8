/* rdc_run_tool: a tool call run under the service's decisions, with a local
 * fallback policy when the service cannot be asked. */
#define _GNU_SOURCE
#include "rdc_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

typedef struct {
    rdc_client *c;
    const rdc_tool *tools;
    size_t n_tools;
    const rdc_run_options *opts;
    rdc_result *res;
    char key[257]; /* the idempotency key to send: the run's, or the one a RETRY repeated */
} run_ctx;

/* Why a service call failed, for the fallback report. */
typedef struct {
    char text[512];
} rpc_failure;

const char *rdc_status_name(rdc_status status)
{
    switch (status) {
    case RDC_SUCCEEDED: return "succeeded";
    case RDC_FAIL_FAST: return "fail_fast";
    case RDC_ESCALATE: return "escalate";
    case RDC_GIVE_UP: return "give_up";
    case RDC_PARTIAL: return "partial";
    case RDC_NO_ALTERNATIVE: return "no_alternative";
    case RDC_VERIFICATION_REQUIRED: return "verification_required";
    }
    return "unknown";
}

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void sleep_us(int64_t us)
{
    if (us <= 0)
        return;
    struct timespec ts = {.tv_sec = us / 1000000, .tv_nsec = (us % 1000000) * 1000};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

static int64_t ms_to_us(int64_t ms)
{
    if (ms <= 0)
        return 0;
    return ms > INT64_MAX / 1000 ? INT64_MAX : ms * 1000;
}

/* The wait a RETRY asks for: delay_us, the delay to the microsecond, or
 * delay_ms from a server that predates delay_us (it sends 0). */
static int64_t retry_wait_us(const Recovery__V1__DecideResponse *resp)
{
    if (resp->delay_us > 0)
        return resp->delay_us;
    return ms_to_us(resp->delay_ms);
}

static void copy_str(char *dst, size_t len, const char *src)
{
    snprintf(dst, len, "%s", src != NULL ? src : "");
}

/* 128 random bits as hex: unique per attempt. */
static void new_outcome_id(char out[33])
{
    unsigned char b[16];
    if (getrandom(b, sizeof b, 0) != (ssize_t)sizeof b) {
        /* No entropy source: time and a counter still differ per attempt. */
        static unsigned long counter;
        int64_t t = now_ms();
        memcpy(b, &t, sizeof t);
        unsigned long n = __atomic_add_fetch(&counter, 1, __ATOMIC_RELAXED);
        memcpy(b + 8, &n, sizeof n < 8 ? sizeof n : 8);
    }
    for (size_t i = 0; i < sizeof b; i++)
        snprintf(out + 2 * i, 3, "%02x", b[i]);
}

static const rdc_tool *find_tool(const run_ctx *r, const char *tool_id)
{
    for (size_t i = 0; i < r->n_tools; i++)
        if (r->tools[i].tool_id != NULL && strcmp(r->tools[i].tool_id, tool_id) == 0)
            return &r->tools[i];
    return NULL;
}

static void end(run_ctx *r, rdc_status status, const char *tool, const char *reason)
{
    r->res->status = status;
    copy_str(r->res->tool_id, sizeof r->res->tool_id, tool);
    copy_str(r->res->reason, sizeof r->res->reason, reason);
}

static void note_action(run_ctx *r, Recovery__V1__Action action)
{
    if (r->res->n_actions < RDC_MAX_DECISIONS)
        r->res->actions[r->res->n_actions++] = action;
}

/* Calls the tool once (attempt `number` of it); 0 on success. The error
 * lands in res->last_error. */
static int invoke(run_ctx *r, const rdc_tool *t, int number, int64_t timeout_ms)
{
    if (timeout_ms <= 0)
        timeout_ms = r->c->opts.fallback_timeout_ms;
    r->res->attempts++;
    copy_str(r->res->idempotency_key, sizeof r->res->idempotency_key, r->key);
    rdc_tool_error err;
    memset(&err, 0, sizeof err);
    rdc_attempt a = {.tool_id = t->tool_id, .number = number, .idempotency_key = r->key,
                     .timeout_ms = timeout_ms};
    int rc = t->fn_attempt != NULL ? t->fn_attempt(t->user, &a, &err)
             : t->fn != NULL       ? t->fn(t->user, timeout_ms, &err)
                                   : -1;
    if (rc != 0) {
        err.message[sizeof err.message - 1] = '\0';
        err.code[sizeof err.code - 1] = '\0';
        err.exception_type[sizeof err.exception_type - 1] = '\0';
        if (err.message[0] == '\0')
            copy_str(err.message, sizeof err.message, "tool failed");
        r->res->last_error = err;
    }
    return rc;
}

/* The retry time DecideRequest.elapsed_ms carries: wall time since the
 * first attempt failed, without the attempts that ran into their timeout
 * (the service bounds those by the tool timeout and the turn deadline, so
 * counting them would spend the retry budget on one timeout). */
typedef struct retry_clock {
    bool failed_once;
    int64_t first_failed_ms;
    int64_t timed_out_ms;
} retry_clock;

static int64_t retry_clock_failed(retry_clock *c, int64_t attempt_start_ms, bool timed_out)
{
    int64_t now = now_ms();
    if (!c->failed_once) {
        c->failed_once = true;
        c->first_failed_ms = now;
        return 0;
    }
    if (timed_out)
        c->timed_out_ms += now - attempt_start_ms;
    int64_t ms = now - c->first_failed_ms - c->timed_out_ms;
    return ms > 0 ? ms : 0;
}

/* Asks Decide; on success *out is owned by the caller. */
static int decide(run_ctx *r, const char *tool, const rdc_tool_error *err, int attempt,
                  int64_t elapsed_ms, const char *outcome_id, const char *permit,
                  Recovery__V1__DecideResponse **out, rpc_failure *why)
{
    Recovery__V1__DecideRequest req = RECOVERY__V1__DECIDE_REQUEST__INIT;
    Recovery__V1__ToolError wire = RECOVERY__V1__TOOL_ERROR__INIT;
    req.tool_id = (char *)tool;
    req.attempt = attempt;
    req.elapsed_ms = elapsed_ms;
    req.turn_id = (char *)(r->opts->turn_id != NULL ? r->opts->turn_id : "");
    req.executor_id = r->c->executor_id;
    req.outcome_id = (char *)outcome_id;
    req.permit_id = (char *)permit;
    req.idempotency_key = r->key;
    req.plan = r->opts->plan;
    req.n_plan = r->opts->plan != NULL ? r->opts->n_plan : 0;
    if (r->opts->has_turn_remaining) {
        req.turn_budget_case = RECOVERY__V1__DECIDE_REQUEST__TURN_BUDGET_TURN_REMAINING_MS;
        req.turn_remaining_ms = r->opts->turn_remaining_ms;
    }
    if (err != NULL) {
        wire.message = (char *)err->message;
        wire.http_status = err->http_status;
        wire.grpc_code = err->grpc_code;
        wire.code = (char *)err->code;
        wire.exception_type = (char *)err->exception_type;
        wire.kind = err->kind;
        wire.source = err->source;
        wire.retry_after_ms = err->retry_after_ms;
        req.error = &wire;
    }
    char details[256];
    grpc_status_code st = rdc_decide(r->c, &req, out, details, sizeof details);
    if (st != GRPC_STATUS_OK) {
        snprintf(why->text, sizeof why->text, "Decide: status %d: %s", (int)st, details);
        return -1;
    }
    note_action(r, (*out)->action);
    return 0;
}

/* Keeps resp as the result's last decision (the result frees it). */
static void keep_decision(run_ctx *r, Recovery__V1__DecideResponse *resp)
{
    if (r->res->last_decision != NULL)
        recovery__v1__decide_response__free_unpacked(r->res->last_decision, NULL);
    r->res->last_decision = resp;
}

static void stop(run_ctx *r, const char *tool, Recovery__V1__DecideResponse *resp)
{
    rdc_status status;
    char reason[512];
    copy_str(reason, sizeof reason, resp->reason);
    switch (resp->action) {
    case RECOVERY__V1__ACTION__ACTION_FAIL_FAST: status = RDC_FAIL_FAST; break;
    case RECOVERY__V1__ACTION__ACTION_ESCALATE: status = RDC_ESCALATE; break;
    case RECOVERY__V1__ACTION__ACTION_GIVE_UP: status = RDC_GIVE_UP; break;
    case RECOVERY__V1__ACTION__ACTION_PARTIAL: status = RDC_PARTIAL; break;
    default:
        status = RDC_GIVE_UP;
        snprintf(reason, sizeof reason, "unexpected action %d", (int)resp->action);
    }
    end(r, status, tool, reason);
    keep_decision(r, resp);
}

static void succeed(run_ctx *r, const char *tool, int attempt, int64_t latency_ms,
                    const char *outcome_id, const char *permit)
{
    end(r, RDC_SUCCEEDED, tool, "");
    memset(&r->res->last_error, 0, sizeof r->res->last_error);
    copy_str(r->res->permit_id, sizeof r->res->permit_id, permit);
    Recovery__V1__RecordOutcomeRequest req = RECOVERY__V1__RECORD_OUTCOME_REQUEST__INIT;
    req.tool_id = (char *)tool;
    req.success = true;
    req.latency_ms = latency_ms;
    req.attempt = attempt;
    req.turn_id = (char *)(r->opts->turn_id != NULL ? r->opts->turn_id : "");
    req.outcome_id = (char *)outcome_id;
    req.permit_id = (char *)permit;
    req.executor_id = r->c->executor_id;
    Recovery__V1__RecordOutcomeResponse *resp = NULL;
    /* The tool succeeded; a lost report must not undo that. */
    r->res->outcome_recorded = rdc_record_outcome(r->c, &req, &resp, NULL, 0) == GRPC_STATUS_OK;
    if (resp != NULL)
        recovery__v1__record_outcome_response__free_unpacked(resp, NULL);
}

static const rdc_verifier *find_verifier(const run_ctx *r, const char *verify_tool)
{
    const rdc_verifier *any = NULL;
    for (size_t i = 0; r->opts->verifiers != NULL && i < r->opts->n_verifiers; i++) {
        const rdc_verifier *v = &r->opts->verifiers[i];
        if (v->fn == NULL)
            continue;
        if (v->verify_tool_id != NULL && strcmp(v->verify_tool_id, verify_tool) == 0)
            return v;
        if (v->verify_tool_id == NULL && any == NULL)
            any = v;
    }
    return any;
}

/* Asks the caller's verifier whether the failed call had its effect: 1, 0,
 * or -1 when there is no verifier or it could not tell (the run then stops:
 * never a blind retry). */
static int verify(run_ctx *r, const rdc_tool *t, const Recovery__V1__DecideResponse *resp,
                  int attempt)
{
    const char *verify_tool = resp->verify_tool_id != NULL ? resp->verify_tool_id : "";
    copy_str(r->res->verify_tool_id, sizeof r->res->verify_tool_id, verify_tool);
    const rdc_verifier *v = find_verifier(r, verify_tool);
    if (v == NULL)
        return -1;
    rdc_verify_request req = {
        .tool_id = t->tool_id, .tool_user = t->user, .verify_tool_id = verify_tool,
        .attempt = attempt, .error = &r->res->last_error,
        .reason = resp->reason != NULL ? resp->reason : "", .classification = resp->classification,
        .idempotency_key = r->key,
        .turn_id = r->opts->turn_id != NULL ? r->opts->turn_id : "",
        .timeout_ms = resp->timeout_ms > 0 ? resp->timeout_ms : r->c->opts.fallback_timeout_ms};
    int happened = v->fn(v->user, &req);
    return happened == 0 || happened == 1 ? happened : -1;
}

/* The failed call did have its effect: a success of the tool, so the
 * breaker and the trace count it as one. The failure stays in last_error. */
static void succeed_verified(run_ctx *r, const char *tool, int attempt, const char *permit)
{
    rdc_tool_error failed = r->res->last_error;
    char outcome_id[33];
    new_outcome_id(outcome_id);
    succeed(r, tool, attempt, 0, outcome_id, permit);
    r->res->last_error = failed;
    r->res->verified = true;
    char reason[512];
    snprintf(reason, sizeof reason, "verified by %.256s: the effect happened", r->res->verify_tool_id);
    copy_str(r->res->reason, sizeof r->res->reason, reason);
}

/* Finishes on the local policy after attempts_made attempts of tool: every
 * failure is retried until fallback_max_attempts. */
static void fallback(run_ctx *r, const char *tool, int attempts_made, int64_t timeout_ms,
                     const rpc_failure *why)
{
    const rdc_options *p = &r->c->opts;
    r->res->fallback = true;
    copy_str(r->res->fallback_reason, sizeof r->res->fallback_reason, why->text);
    const rdc_tool *t = find_tool(r, tool);
    if (t == NULL) {
        end(r, RDC_NO_ALTERNATIVE, tool, "no function for the tool");
        return;
    }
    for (int attempt = attempts_made; attempt < p->fallback_max_attempts; attempt++) {
        if (attempt > 0) {
            size_t i = (size_t)(attempt - 1) < p->n_fallback_delays ? (size_t)(attempt - 1)
                                                                    : p->n_fallback_delays - 1;
            note_action(r, RECOVERY__V1__ACTION__ACTION_RETRY);
            sleep_us(ms_to_us(p->fallback_delays_ms[i]));
        }
        if (invoke(r, t, attempt + 1, timeout_ms) == 0) {
            end(r, RDC_SUCCEEDED, tool, "local fallback");
            memset(&r->res->last_error, 0, sizeof r->res->last_error);
            return;
        }
    }
    char reason[128];
    snprintf(reason, sizeof reason, "local fallback: %d attempts failed", p->fallback_max_attempts);
    end(r, RDC_GIVE_UP, tool, reason);
}

/* The run over copies of tool ids: a response that named the tool is freed
 * while the loop still needs the name. */
static void run(run_ctx *r, const char *first_tool)
{
    char tool[257], visited[8][257];
    size_t n_visited = 0;
    copy_str(tool, sizeof tool, first_tool);
    copy_str(visited[n_visited++], sizeof visited[0], tool);
    char permit[256] = "";
    rpc_failure why;
    Recovery__V1__DecideResponse *resp = NULL;

    if (decide(r, tool, NULL, 0, 0, "", "", &resp, &why) != 0) {
        fallback(r, tool, 0, 0, &why);
        return;
    }
    int64_t timeout_ms = resp->timeout_ms;
    copy_str(permit, sizeof permit, resp->permit_id);
    int attempt = 0;
    int64_t tool_start = now_ms();
    retry_clock clock = {0};

    for (;;) {
        Recovery__V1__Action action = resp->action;
        if (action == RECOVERY__V1__ACTION__ACTION_USE_ALTERNATIVE) {
            copy_str(tool, sizeof tool, resp->alternative_tool_id);
            bool seen = false;
            for (size_t i = 0; i < n_visited; i++)
                seen = seen || strcmp(visited[i], tool) == 0;
            if (seen || n_visited == sizeof visited / sizeof visited[0]) {
                /* Two tools failing over to each other would otherwise loop. */
                end(r, RDC_GIVE_UP, tool, "alternative was already tried in this run");
                keep_decision(r, resp);
                return;
            }
            copy_str(visited[n_visited++], sizeof visited[0], tool);
            attempt = 0;
            tool_start = now_ms();
            clock = (retry_clock){0};
        } else if (action == RECOVERY__V1__ACTION__ACTION_RETRY) {
            if (resp->idempotency_key != NULL && resp->idempotency_key[0] != '\0')
                copy_str(r->key, sizeof r->key, resp->idempotency_key);
            sleep_us(retry_wait_us(resp));
        } else if (action == RECOVERY__V1__ACTION__ACTION_VERIFY) {
            const rdc_tool *t = find_tool(r, tool);
            int happened = t != NULL ? verify(r, t, resp, attempt) : -1;
            if (happened < 0) {
                end(r, RDC_VERIFICATION_REQUIRED, tool, resp->reason);
                keep_decision(r, resp);
                return;
            }
            keep_decision(r, resp);
            resp = NULL;
            if (happened) {
                succeed_verified(r, tool, attempt, permit);
                return;
            }
            /* It did not happen: calling the tool again is safe, once
             * admission allows it (the breaker may have opened meanwhile). */
            if (decide(r, tool, NULL, attempt, 0, "", "", &resp, &why) != 0) {
                fallback(r, tool, attempt, timeout_ms, &why);
                return;
            }
            timeout_ms = resp->timeout_ms;
            copy_str(permit, sizeof permit, resp->permit_id);
            if (resp->action == RECOVERY__V1__ACTION__ACTION_VERIFY) {
                /* Admission never answers VERIFY; stop rather than loop. */
                stop(r, tool, resp);
                return;
            }
            continue;
        } else if (action != RECOVERY__V1__ACTION__ACTION_PROCEED) {
            stop(r, tool, resp);
            return;
        }
        keep_decision(r, resp);
        resp = NULL;

        const rdc_tool *t = find_tool(r, tool);
        if (t == NULL) {
            end(r, RDC_NO_ALTERNATIVE, tool, "no function for the tool");
            return;
        }
        attempt++;
        char outcome_id[33];
        new_outcome_id(outcome_id);
        int64_t attempt_start = now_ms();
        if (invoke(r, t, attempt, timeout_ms) == 0) {
            succeed(r, tool, attempt, now_ms() - tool_start, outcome_id, permit);
            return;
        }
        bool timed_out = r->res->last_error.kind == RECOVERY__V1__ERROR_KIND__ERROR_KIND_TIMEOUT;
        int64_t elapsed_ms = retry_clock_failed(&clock, attempt_start, timed_out);
        if (decide(r, tool, &r->res->last_error, attempt, elapsed_ms, outcome_id,
                   permit, &resp, &why) != 0) {
            fallback(r, tool, attempt, timeout_ms, &why);
            return;
        }
        timeout_ms = resp->timeout_ms;
        copy_str(permit, sizeof permit, resp->permit_id);
    }
}

int rdc_run_tool(rdc_client *client, const char *tool_id, const rdc_tool *tools, size_t n_tools,
                 const rdc_run_options *opts, rdc_result *out)
{
    if (out == NULL)
        return -1;
    memset(out, 0, sizeof *out);
    if (client == NULL || tool_id == NULL) {
        out->status = RDC_GIVE_UP;
        copy_str(out->reason, sizeof out->reason, "bad arguments");
        return -1;
    }
    static const rdc_run_options no_opts;
    run_ctx r = {.c = client, .tools = tools, .n_tools = tools != NULL ? n_tools : 0,
                 .opts = opts != NULL ? opts : &no_opts, .res = out};
    copy_str(r.key, sizeof r.key, r.opts->idempotency_key);
    copy_str(out->tool_id, sizeof out->tool_id, tool_id);
    run(&r, tool_id);
    return 0;
}

void rdc_result_clear(rdc_result *result)
{
    if (result == NULL)
        return;
    if (result->last_decision != NULL)
        recovery__v1__decide_response__free_unpacked(result->last_decision, NULL);
    result->last_decision = NULL;
}
