/* The yardstick of bench/rpc/redis_cost.py: what envoyproxy/ratelimit's
 * ShouldRateLimit sends Redis for one descriptor (INCRBY and EXPIRE of its
 * counter key, pipelined), one call at a time on one connection as
 * recoveryd's worker sends its calls, so that Redis's CPU per call can be
 * set beside recoveryd's under the same kind of load. Redis's CPU per call
 * depends on how often calls come (a Redis woken for each call costs more
 * per call than a busy one), so WORK_US makes each call first spend that
 * long on the CPU, as recoveryd spends its own CPU per call: the same pace
 * on the same core.
 *
 *   ratelimit_load PORT CALLS [WORK_US]
 *
 * Exits non-zero on any error reply or lost connection. */
#include <hiredis/hiredis.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

int main(int argc, char **argv)
{
    if (argc != 3 && argc != 4) {
        fprintf(stderr, "usage: ratelimit_load PORT CALLS [WORK_US]\n");
        return 2;
    }
    long calls = atol(argv[2]);
    double work_us = argc == 4 ? atof(argv[3]) : 0;
    redisContext *c = redisConnect("127.0.0.1", atoi(argv[1]));
    if (!c || c->err) {
        fprintf(stderr, "ratelimit_load: %s\n", c ? c->errstr : "out of memory");
        return 1;
    }
    const char *key = "ratelimit_bench_descriptor";
    for (long i = 0; i < calls; i++) {
        for (double until = now_us() + work_us; now_us() < until;)
            ;
        redisAppendCommand(c, "INCRBY %s 1", key);
        redisAppendCommand(c, "EXPIRE %s 60", key);
        for (int k = 0; k < 2; k++) {
            redisReply *r = NULL;
            if (redisGetReply(c, (void **)&r) != REDIS_OK || !r || r->type != REDIS_REPLY_INTEGER) {
                fprintf(stderr, "ratelimit_load: %s\n", c->err ? c->errstr : "unexpected reply");
                return 1;
            }
            freeReplyObject(r);
        }
    }
    redisFree(c);
    return 0;
}
