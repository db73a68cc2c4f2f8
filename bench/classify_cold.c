/* What one classification costs when its tables are not in the caches, as
 * in the server, where gRPC's work between two calls displaces them.
 *
 * Classifies one message (by default the RPC benchmark's Classify message)
 * again and again; before each classification, a buffer of EVICT KiB is
 * walked one cache line at a time, so that much other data passed through
 * the caches since the last one. Only the classification is timed. EVICT
 * 0 is the warm figure of the same run; each other size is printed with
 * its ratio to it.
 *
 * usage: classify_cold [CONFIG [MESSAGE [EVICT_KIB...]]]
 *   defaults: RD_SOURCE_DIR/config/recovery.yaml, the bench message,
 *   0 256 512 1024 2048 8192 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "config/config.h"
#include "domain/classify.h"

#ifndef RD_SOURCE_DIR
#define RD_SOURCE_DIR "."
#endif

#define CALLS 20000
#define LINE 64
#define BENCH_MESSAGE                                                                        \
    "request to https://api.example.com/v2/search failed, reason: connect ECONNREFUSED "    \
    "10.0.3.17:443"

static double now_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Microseconds per classification with `evict` bytes walked before each. */
static double cold_us(const rd_ruleset *rules, const rd_tool_error *err, uint8_t *buf,
                      size_t evict, const char **rule_id)
{
    rd_classification out = {0};
    volatile uint8_t sink = 0;
    double spent = 0;
    for (int i = 0; i < CALLS; i++) {
        for (size_t k = 0; k < evict; k += LINE)
            sink = (uint8_t)(sink + buf[k]++);
        double t0 = now_seconds();
        rd_classify(rules, NULL, "flight_search", err, &out);
        spent += now_seconds() - t0;
    }
    *rule_id = out.rule_id;
    return spent / CALLS * 1e6;
}

int main(int argc, char **argv)
{
    const char *config_path = argc > 1 ? argv[1] : RD_SOURCE_DIR "/config/recovery.yaml";
    const char *message = argc > 2 ? argv[2] : BENCH_MESSAGE;
    static const size_t default_kib[] = {0, 256, 512, 1024, 2048, 8192};
    char err_text[RD_CONFIG_ERR_MAX];
    rd_config *cfg = rd_config_load(config_path, err_text, sizeof err_text);
    if (!cfg) {
        fprintf(stderr, "classify_cold: %s\n", err_text);
        return 1;
    }
    size_t n = argc > 3 ? (size_t)(argc - 3) : sizeof default_kib / sizeof default_kib[0];
    size_t most = 0;
    for (size_t i = 0; i < n; i++) {
        size_t kib = argc > 3 ? strtoul(argv[3 + i], NULL, 10) : default_kib[i];
        most = kib > most ? kib : most;
    }
    uint8_t *buf = calloc(most * 1024 + LINE, 1);
    if (!buf)
        return 1;
    rd_tool_error err = {.message = message, .message_len = strlen(message), .code = "",
                         .exception_type = ""};
    const char *rule_id = "";
    double warm = cold_us(&cfg->rules, &err, buf, 0, &rule_id);
    printf("message: %zu bytes, rule %s; %d classifications per size\n", err.message_len,
           rule_id, CALLS);
    printf("%10s %12s %8s\n", "evict KiB", "us/classify", "x warm");
    for (size_t i = 0; i < n; i++) {
        size_t kib = argc > 3 ? strtoul(argv[3 + i], NULL, 10) : default_kib[i];
        double us = kib ? cold_us(&cfg->rules, &err, buf, kib * 1024, &rule_id) : warm;
        printf("%10zu %12.3f %8.2f\n", kib, us, us / warm);
    }
    free(buf);
    rd_config_free(cfg);
    return 0;
}
