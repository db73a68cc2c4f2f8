/* Classifier throughput on the corpus of real error messages
 * (tests/corpus/errors.yaml), against the naive baseline of the 002 seed:
 * lower-case the message, then strstr every pattern of every message rule
 * in file order until one matches.
 *
 * Single thread, both measured in the same run over the same messages, so
 * the ratio is what the issue asks for ("classifications per second per
 * core ... and, in the same run, for a naive baseline"). The time is split
 * into rounds that alternate between the two, and each side reports its
 * best round: on a shared machine, load from other processes then slows
 * both sides alike instead of whichever happened to run during it. A
 * checksum of the results is printed so the compiler cannot drop the work.
 *
 * Last, one 64 KiB message (corpus messages back to back) is classified
 * repeatedly, to show that the cost stays linear in the message length.
 *
 * usage: classify_bench [CONFIG [CORPUS [SECONDS]]]
 *   defaults: RD_SOURCE_DIR/config/recovery.yaml, RD_SOURCE_DIR/tests/corpus/errors.yaml, 4
 *        classify_bench --passes N [CONFIG [CORPUS]]
 *   classifies the corpus exactly N times and times nothing: for counting
 *   instructions (valgrind --tool=callgrind), which the load of a shared
 *   machine does not change; a run with N = 0 counts the setup alone. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "config/config.h"
#include "domain/classify.h"
#include "domain/matcher.h"
#include "corpus_reader.h"

#ifndef RD_SOURCE_DIR
#define RD_SOURCE_DIR "."
#endif

#define DEFAULT_SECONDS 4.0   /* both sides together */
#define CALIBRATION_PASSES 20 /* passes timed to size the rounds */
#define ROUNDS 5              /* per side, alternating */
#define BIG_MESSAGE 65536

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ---- the inputs, prepared once so neither side pays for setup ---- */

typedef struct bench_input {
    rd_tool_error *errors;          /* borrow from the corpus */
    const char **tool_ids;
    const rd_tool_config **tools;   /* manifest or NULL, looked up once */
    size_t n;
    size_t max_len;                 /* longest message, for the baseline's buffer */
} bench_input;

static int prepare(const rd_config *cfg, const rd_corpus *corpus, bench_input *in)
{
    in->n = corpus->n_entries;
    in->errors = calloc(in->n, sizeof *in->errors);
    in->tool_ids = calloc(in->n, sizeof *in->tool_ids);
    in->tools = calloc(in->n, sizeof *in->tools);
    if (!in->errors || !in->tool_ids || !in->tools)
        return -1;
    in->max_len = 0;
    for (size_t i = 0; i < in->n; i++) {
        const rd_corpus_entry *e = &corpus->entries[i];
        rd_corpus_to_error(e, &in->errors[i]);
        in->tool_ids[i] = e->tool;
        in->tools[i] = rd_config_find_tool(cfg, e->tool);
        if (e->message_len > in->max_len)
            in->max_len = e->message_len;
    }
    return 0;
}

static void release(bench_input *in)
{
    free(in->errors);
    free(in->tool_ids);
    free(in->tools);
}

/* ---- (a) the classifier ---- */

static uint64_t run_classifier(const rd_config *cfg, const bench_input *in, size_t passes)
{
    uint64_t sum = 0;
    for (size_t p = 0; p < passes; p++)
        for (size_t i = 0; i < in->n; i++) {
            rd_classification out;
            rd_classify(&cfg->rules, in->tools[i], in->tool_ids[i], &in->errors[i], &out);
            sum = sum * 31 + (uint64_t)out.retryability * 8 + (uint64_t)out.category;
        }
    return sum;
}

/* ---- (b) the naive baseline (002): lower-case, then strstr each pattern ---- */

typedef struct baseline {
    char *buf;                      /* lower-cased copy of the message, NUL-terminated */
    size_t cap;
} baseline;

/* Index of the first message rule with a pattern in the text, or n_rules. */
static size_t baseline_first_match(const rd_ruleset *rules, const char *lowered)
{
    for (size_t r = 0; r < rules->n_rules; r++) {
        const rd_rule *rule = &rules->rules[r];
        for (size_t p = 0; p < rule->when.n_patterns; p++)
            if (strstr(lowered, rule->when.patterns[p].text))
                return r;
    }
    return rules->n_rules;
}

static size_t baseline_classify(const rd_ruleset *rules, baseline *b, const rd_tool_error *err)
{
    size_t len = err->message_len < b->cap - 1 ? err->message_len : b->cap - 1;
    for (size_t i = 0; i < len; i++) {
        unsigned char ch = (unsigned char)err->message[i];
        b->buf[i] = (char)(ch >= 'A' && ch <= 'Z' ? ch + ('a' - 'A') : ch);
    }
    b->buf[len] = '\0';
    return baseline_first_match(rules, b->buf);
}

static uint64_t run_baseline(const rd_config *cfg, baseline *b, const bench_input *in,
                             size_t passes)
{
    uint64_t sum = 0;
    for (size_t p = 0; p < passes; p++)
        for (size_t i = 0; i < in->n; i++)
            sum = sum * 31 + baseline_classify(&cfg->rules, b, &in->errors[i]);
    return sum;
}

/* ---- measurement ---- */

typedef struct measured {
    size_t passes;                  /* per round */
    double best_seconds;            /* fastest round */
    uint64_t checksum;
} measured;

typedef uint64_t (*bench_fn)(const rd_config *, baseline *, const bench_input *, size_t);

static uint64_t classifier_fn(const rd_config *cfg, baseline *b, const bench_input *in, size_t passes)
{
    (void)b;
    return run_classifier(cfg, in, passes);
}

/* Passes that take about `seconds`, from a short timed run (which also
 * warms caches and branch predictors). */
static size_t passes_for(bench_fn fn, const rd_config *cfg, baseline *b, const bench_input *in,
                         double seconds, uint64_t *checksum)
{
    double t0 = now_seconds();
    *checksum ^= fn(cfg, b, in, CALIBRATION_PASSES);
    double per_pass = (now_seconds() - t0) / CALIBRATION_PASSES;
    size_t passes = per_pass > 0 ? (size_t)(seconds / per_pass) : 1000;
    return passes < 1 ? 1 : passes;
}

static void run_round(bench_fn fn, const rd_config *cfg, baseline *b, const bench_input *in,
                      measured *m)
{
    double t0 = now_seconds();
    m->checksum ^= fn(cfg, b, in, m->passes);
    double t = now_seconds() - t0;
    if (m->best_seconds == 0 || t < m->best_seconds)
        m->best_seconds = t;
}

/* Both sides get the same share of `seconds`, in alternating rounds. */
static void measure_both(const rd_config *cfg, baseline *b, const bench_input *in,
                         double seconds, measured *cls, measured *base)
{
    double per_round = seconds / 2 / ROUNDS;
    cls->passes = passes_for(classifier_fn, cfg, b, in, per_round, &cls->checksum);
    base->passes = passes_for(run_baseline, cfg, b, in, per_round, &base->checksum);
    for (int r = 0; r < ROUNDS; r++) {
        run_round(classifier_fn, cfg, b, in, cls);
        run_round(run_baseline, cfg, b, in, base);
    }
}

static double rate(const measured *m, size_t n)
{
    return m->best_seconds > 0 ? (double)(m->passes * n) / m->best_seconds : 0;
}

/* ---- one 64 KiB message ---- */

static double big_message_us(const rd_config *cfg, const rd_corpus *corpus, uint64_t *checksum)
{
    char *big = malloc(BIG_MESSAGE);
    if (!big)
        return 0;
    size_t len = 0;
    for (size_t i = 0; len < BIG_MESSAGE; i = (i + 1) % corpus->n_entries) {
        const rd_corpus_entry *e = &corpus->entries[i];
        size_t n = e->message_len < BIG_MESSAGE - len ? e->message_len : BIG_MESSAGE - len;
        memcpy(big + len, e->message, n);
        len += n;
        if (len < BIG_MESSAGE)
            big[len++] = '\n';
    }
    rd_tool_error err = {.message = big, .message_len = len, .code = "", .exception_type = ""};
    const int reps = 200;
    rd_classification out;
    double t0 = now_seconds();
    for (int i = 0; i < reps; i++) {
        rd_classify(&cfg->rules, NULL, "bench", &err, &out);
        *checksum = *checksum * 31 + (uint64_t)out.category;
    }
    double us = (now_seconds() - t0) / reps * 1e6;
    free(big);
    return us;
}

static size_t count_patterns(const rd_ruleset *rules, size_t *message_rules)
{
    size_t n = 0;
    *message_rules = 0;
    for (size_t r = 0; r < rules->n_rules; r++) {
        n += rules->rules[r].when.n_patterns;
        *message_rules += rules->rules[r].when.n_patterns > 0;
    }
    return n;
}

static void report(const rd_config *cfg, const bench_input *in, const measured *cls,
                   const measured *base, double big_us)
{
    size_t message_rules, patterns = count_patterns(&cfg->rules, &message_rules);
    double r_cls = rate(cls, in->n), r_base = rate(base, in->n);
    printf("corpus messages: %zu   rules: %zu (%zu with patterns, %zu patterns, %zu distinct)\n",
           in->n, cfg->rules.n_rules, message_rules, patterns,
           rd_matcher_pattern_count(cfg->rules.matcher));
    printf("automaton states: %zu   single thread, best of %d alternating rounds\n\n",
           rd_matcher_state_count(cfg->rules.matcher), ROUNDS);
    printf("%-22s %12s %10s %18s %20s\n", "", "calls/round", "best s", "calls/s/core",
           "checksum");
    printf("%-22s %12zu %10.3f %18.0f %20llu\n", "rd_classify", cls->passes * in->n,
           cls->best_seconds, r_cls, (unsigned long long)cls->checksum);
    printf("%-22s %12zu %10.3f %18.0f %20llu\n", "naive baseline (002)", base->passes * in->n,
           base->best_seconds, r_base, (unsigned long long)base->checksum);
    printf("\nratio rd_classify / baseline: %.2fx\n", r_base > 0 ? r_cls / r_base : 0);
    printf("64 KiB message: %.1f us per classification (%.0f MB/s)\n", big_us,
           big_us > 0 ? BIG_MESSAGE / big_us : 0);
}

int main(int argc, char **argv)
{
    long fixed_passes = -1;
    if (argc > 2 && strcmp(argv[1], "--passes") == 0) {
        fixed_passes = atol(argv[2]);
        if (fixed_passes < 0) {
            fprintf(stderr, "classify_bench: --passes takes a count of 0 or more\n");
            return 2;
        }
        argv += 2;
        argc -= 2;
    }
    const char *config_path = argc > 1 ? argv[1] : RD_SOURCE_DIR "/config/recovery.yaml";
    const char *corpus_path = argc > 2 ? argv[2] : RD_SOURCE_DIR "/tests/corpus/errors.yaml";
    double seconds = argc > 3 ? atof(argv[3]) : DEFAULT_SECONDS;
    if (seconds <= 0)
        seconds = DEFAULT_SECONDS;

    char err[RD_CONFIG_ERR_MAX];
    rd_config *cfg = rd_config_load(config_path, err, sizeof err);
    if (!cfg) {
        fprintf(stderr, "classify_bench: %s\n", err);
        return 1;
    }
    rd_corpus corpus;
    char cerr[RD_CORPUS_ERR_MAX];
    if (rd_corpus_load(corpus_path, &corpus, cerr, sizeof cerr) != RD_CORPUS_OK) {
        fprintf(stderr, "classify_bench: %s\n", cerr);
        rd_config_free(cfg);
        return 1;
    }
    bench_input in = {0};
    baseline b = {0};
    int rc = 1;
    if (fixed_passes >= 0 && prepare(cfg, &corpus, &in) == 0) {
        uint64_t sum = run_classifier(cfg, &in, (size_t)fixed_passes);
        printf("passes %ld  calls %zu  checksum %llu\n", fixed_passes,
               (size_t)fixed_passes * in.n, (unsigned long long)sum);
        rc = 0;
    } else if (fixed_passes < 0 && prepare(cfg, &corpus, &in) == 0 && in.n > 0) {
        b.cap = in.max_len + 1;
        b.buf = malloc(b.cap);
        if (b.buf) {
            measured cls = {0}, base = {0};
            measure_both(cfg, &b, &in, seconds, &cls, &base);
            double big_us = big_message_us(cfg, &corpus, &cls.checksum);
            report(cfg, &in, &cls, &base, big_us);
            rc = 0;
        }
    }
    if (rc)
        fprintf(stderr, "classify_bench: out of memory or empty corpus\n");
    free(b.buf);
    release(&in);
    rd_corpus_free(&corpus);
    rd_config_free(cfg);
    return rc;
}
