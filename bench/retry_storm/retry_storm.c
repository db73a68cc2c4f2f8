/* A retry storm, simulated: many clients call one tool through recoveryd's
 * decision core (rd_engine over the memory store, time injected). The tool
 * goes down for a while, then comes back with a fixed capacity; attempts
 * beyond that capacity fail (overload). Without a retry budget, retries
 * multiply the load during the outage and keep the tool overloaded after
 * it returns; with one, the extra load stays within the budget.
 *
 * Deterministic: fixed seed, 10 ms steps, no threads, no clock.
 *
 *   retry_storm [clients] [outage_s] [capacity_percent]
 *   (defaults 200 clients, 30 s, capacity 150 % of the base load)
 *
 * Prints, per budget setting: upstream load amplification during the
 * outage (upstream attempts / client requests started), the same after the
 * tool returns, and the time from its return until 95 % of the attempts in
 * a one-second window succeed again. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"
#include "domain/arena.h"
#include "engine/decide.h"
#include "domain/store.h"

#define STEP_MS 10
#define REQUEST_EVERY_MS 1000       /* each client starts a request this often */
#define OUTAGE_START_MS 10000
#define RUN_AFTER_OUTAGE_MS 60000
#define TOOL "upstream"

typedef struct client {
    int64_t next_ms;                /* when it next acts */
    int64_t request_started_ms;
    uint32_t attempt;               /* 0 = idle, waiting for its next request */
} client;

typedef struct sim {
    rd_engine engine;
    rd_arena arena;
    rd_rng rng;
    int n_clients;
    int64_t outage_end_ms;
    int capacity_per_second;
    /* upstream capacity, counted per 1 s bucket */
    int64_t bucket_start_ms;
    int used_in_bucket;
    /* figures */
    uint64_t requests_outage, attempts_outage, requests_after, attempts_after;
    int64_t recovered_at_ms;
    int window_ok, window_all;      /* attempts in the current 1 s window */
    int64_t window_start_ms;
} sim;

static bool upstream_call(sim *s, int64_t now)
{
    if (now - s->bucket_start_ms >= 1000) {
        s->bucket_start_ms = now - now % 1000;
        s->used_in_bucket = 0;
    }
    bool down = now >= OUTAGE_START_MS && now < s->outage_end_ms;
    bool ok = !down && s->used_in_bucket < s->capacity_per_second;
    s->used_in_bucket++;
    return ok;
}

static void count_attempt(sim *s, int64_t now, bool ok)
{
    if (now >= OUTAGE_START_MS && now < s->outage_end_ms)
        s->attempts_outage++;
    else if (now >= s->outage_end_ms)
        s->attempts_after++;
    if (now < s->outage_end_ms || s->recovered_at_ms >= 0)
        return;
    if (now - s->window_start_ms >= 1000) {
        if (s->window_all > 0 && s->window_ok * 100 >= s->window_all * 95) {
            s->recovered_at_ms = s->window_start_ms;
            return;
        }
        s->window_start_ms = now - now % 1000;
        s->window_ok = s->window_all = 0;
    }
    s->window_all++;
    s->window_ok += ok;
}

static rd_decision decide(sim *s, int64_t now, const rd_tool_error *err, uint32_t attempt,
                          int64_t elapsed_ms, const char *executor)
{
    rd_decide_input in = {.tool_id = TOOL, .error = err, .attempt = attempt,
                          .elapsed_ms = elapsed_ms, .turn_id = "", .executor_id = executor,
                          .outcome_id = "", .permit_id = ""};
    rd_call_ctx ctx = {.now_ms = now, .arena = &s->arena, .rng = &s->rng};
    rd_decision d;
    rd_status st = {0};
    rd_arena_reset(&s->arena);
    if (rd_engine_decide(&s->engine, &in, &ctx, &d, &st) != RD_OK) {
        fprintf(stderr, "decide: %s\n", st.msg);
        exit(1);
    }
    return d;
}

static void record_success(sim *s, int64_t now, uint32_t attempt, const char *executor)
{
    rd_outcome_input in = {.tool_id = TOOL, .success = true, .attempt = attempt,
                           .turn_id = "", .outcome_id = "", .permit_id = "",
                           .executor_id = executor};
    rd_call_ctx ctx = {.now_ms = now, .arena = &s->arena, .rng = &s->rng};
    rd_outcome_result r;
    rd_status st = {0};
    rd_arena_reset(&s->arena);
    rd_engine_record_outcome(&s->engine, &in, &ctx, &r, &st);
}

/* One attempt of client c at `now`; schedules what it does next. */
static void attempt(sim *s, client *c, int64_t now, const char *executor)
{
    static const char message[] = "Service unavailable (503)";
    rd_tool_error err = {.message = message, .message_len = sizeof message - 1,
                         .http_status = 503, .code = "", .exception_type = ""};
    bool ok = upstream_call(s, now);
    count_attempt(s, now, ok);
    if (ok) {
        record_success(s, now, c->attempt, executor);
        c->attempt = 0;
        c->next_ms = c->request_started_ms + REQUEST_EVERY_MS;
        return;
    }
    rd_decision d = decide(s, now, &err, c->attempt, now - c->request_started_ms, executor);
    if (d.action == RD_ACTION_RETRY) {
        c->attempt++;
        c->next_ms = now + (d.delay_ms > STEP_MS ? d.delay_ms : STEP_MS);
        return;
    }
    c->attempt = 0; /* gave up, failed fast or escalated: wait for the next request */
    c->next_ms = c->request_started_ms + REQUEST_EVERY_MS;
}

static void start_request(sim *s, client *c, int64_t now, const char *executor)
{
    c->request_started_ms = now;
    if (now >= OUTAGE_START_MS && now < s->outage_end_ms)
        s->requests_outage++;
    else if (now >= s->outage_end_ms)
        s->requests_after++;
    rd_decision d = decide(s, now, NULL, 0, 0, executor);
    if (d.action != RD_ACTION_PROCEED) {
        c->next_ms = now + REQUEST_EVERY_MS;
        return;
    }
    c->attempt = 1;
    attempt(s, c, now, executor);
}

static void run(sim *s, client *clients)
{
    int64_t end = s->outage_end_ms + RUN_AFTER_OUTAGE_MS;
    char executor[32];
    for (int64_t now = 0; now < end; now += STEP_MS) {
        for (int i = 0; i < s->n_clients; i++) {
            client *c = &clients[i];
            if (c->next_ms > now)
                continue;
            snprintf(executor, sizeof executor, "client-%d", i);
            if (c->attempt == 0)
                start_request(s, c, now, executor);
            else
                attempt(s, c, now, executor);
        }
    }
}

typedef struct scenario {
    const char *name;
    bool budget;
    double percent;
    uint32_t min_retries;
} scenario;

static void simulate(const rd_config *loaded, const scenario *sc, int n_clients,
                     int64_t outage_ms, int capacity_percent)
{
    rd_config cfg = *loaded; /* shallow: only the defaults' policies change */
    cfg.defaults.breaker.failure_threshold = 1000000; /* isolate the budget's effect */
    cfg.defaults.retry_budget = (rd_retry_budget_policy){
        .enabled = sc->budget, .budget_percent = sc->percent,
        .min_retries_per_window = sc->min_retries, .window_ms = 10000};
    rd_store_limits limits = {.tool_idle_ttl_ms = 3600000, .turn_ttl_ms = 3600000,
                              .max_events_per_turn = 1000, .outcome_ttl_ms = 600000};
    sim s = {.n_clients = n_clients, .outage_end_ms = OUTAGE_START_MS + outage_ms,
             .capacity_per_second = n_clients * capacity_percent / 100,
             .recovered_at_ms = -1};
    s.engine = (rd_engine){.policy = &cfg.policy, .store = rd_store_memory_new(&limits)};
    rd_arena_init(&s.arena, 16384);
    rd_rng_seed(&s.rng, 2024);
    client *clients = calloc((size_t)n_clients, sizeof *clients);
    for (int i = 0; i < n_clients; i++)
        clients[i].next_ms = (int64_t)i * REQUEST_EVERY_MS / n_clients; /* staggered */
    run(&s, clients);
    char recovery[32];
    if (s.recovered_at_ms >= 0)
        snprintf(recovery, sizeof recovery, "%.1f s",
                 (double)(s.recovered_at_ms - s.outage_end_ms) / 1000.0);
    else
        snprintf(recovery, sizeof recovery, "> %d s", RUN_AFTER_OUTAGE_MS / 1000);
    printf("| %-26s | %7.2fx | %7.2fx | %-9s |\n", sc->name,
           (double)s.attempts_outage / (double)(s.requests_outage ? s.requests_outage : 1),
           (double)s.attempts_after / (double)(s.requests_after ? s.requests_after : 1),
           recovery);
    free(clients);
    rd_arena_free(&s.arena);
    rd_store_destroy(s.engine.store);
}

int main(int argc, char **argv)
{
    int n_clients = argc > 1 ? atoi(argv[1]) : 200;
    int64_t outage_ms = (argc > 2 ? atoi(argv[2]) : 30) * 1000LL;
    int capacity_percent = argc > 3 ? atoi(argv[3]) : 150;
    if (n_clients < 1 || outage_ms < 1000 || capacity_percent < 1) {
        fprintf(stderr, "usage: %s [clients >= 1] [outage_s >= 1] [capacity_percent >= 1]\n",
                argv[0]);
        return 2;
    }
    char err[RD_CONFIG_ERR_MAX];
    rd_config *cfg = rd_config_load(RD_SOURCE_DIR "/config/recovery.yaml", err, sizeof err);
    if (!cfg) {
        fprintf(stderr, "config: %s\n", err);
        return 1;
    }
    static const scenario scenarios[] = {
        {"no budget", false, 0, 0},
        {"budget 50 %, min 10", true, 50, 10},
        {"budget 20 %, min 10", true, 20, 10},
        {"budget 10 %, min 10", true, 10, 10},
    };
    printf("%d clients, 1 request/s each; tool down %lld s from t = 10 s, then capacity "
           "%d %% of the base load; retry policy of config/recovery.yaml, breaker off\n\n",
           n_clients, (long long)(outage_ms / 1000), capacity_percent);
    printf("| %-26s | %8s | %8s | %-9s |\n", "setting", "outage", "after", "recovery");
    printf("|%s|%s|%s|%s|\n", "----------------------------", "----------", "----------",
           "-----------");
    for (size_t i = 0; i < sizeof scenarios / sizeof scenarios[0]; i++)
        simulate(cfg, &scenarios[i], n_clients, outage_ms, capacity_percent);
    rd_config_free(cfg);
    return 0;
}
