/* Starts and stops redis-server processes (plain, replica, sentinel) for
 * tests, on free 127.0.0.1 ports, each in its own temporary directory.
 *
 *     rd_redis_proc p;
 *     if (!rd_harness_have_redis()) skip();
 *     assert_int_equal(rd_redis_proc_start(&p, 0, NULL), 0);
 *     ... p.port ...
 *     rd_redis_proc_stop(&p);
 *
 * Nothing is persisted (--save "" --appendonly no). A process is killed
 * with SIGKILL on stop, so a test can also use stop/restart to play an
 * outage. Header-only: static functions for one test program (inline
 * where a program may leave them unused). */
#ifndef RD_TESTS_REDIS_HARNESS_H
#define RD_TESTS_REDIS_HARNESS_H

#include <endian.h>
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <hiredis/hiredis.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define RD_HARNESS_MAX_ARGS 32

typedef struct rd_redis_proc {
    pid_t pid;               /* 0 when not running */
    int port;
    char dir[256];           /* temporary directory, removed on stop */
    char *args[RD_HARNESS_MAX_ARGS]; /* owned copies, reused on restart */
    int n_args;
} rd_redis_proc;

static bool rd_harness_have_redis(void)
{
    return system("command -v redis-server >/dev/null 2>&1") == 0;
}

/* A port nobody listens on now (the kernel's pick for port 0). */
static int rd_harness_free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = 0};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    int port = -1;
    if (fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof a) == 0 &&
        getsockname(fd, (struct sockaddr *)&a, &len) == 0)
        port = ntohs(a.sin_port);
    if (fd >= 0)
        close(fd);
    return port;
}

static void rd_harness_sleep_ms(int ms)
{
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static int64_t rd_harness_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* One command on a fresh connection to 127.0.0.1:port; NULL if none.
 * The caller frees the reply with freeReplyObject. */
static redisReply *rd_harness_cmd(int port, const char *fmt, ...)
{
    struct timeval tv = {.tv_sec = 1};
    redisContext *c = redisConnectWithTimeout("127.0.0.1", port, tv);
    if (!c || c->err) {
        if (c)
            redisFree(c);
        return NULL;
    }
    redisSetTimeout(c, tv);
    va_list ap;
    va_start(ap, fmt);
    redisReply *r = redisvCommand(c, fmt, ap);
    va_end(ap);
    redisFree(c);
    return r;
}

/* True when the reply is a status/string equal to want. */
static inline bool rd_harness_cmd_is(int port, const char *want, const char *fmt, ...)
{
    struct timeval tv = {.tv_sec = 1};
    redisContext *c = redisConnectWithTimeout("127.0.0.1", port, tv);
    if (!c || c->err) {
        if (c)
            redisFree(c);
        return false;
    }
    redisSetTimeout(c, tv);
    va_list ap;
    va_start(ap, fmt);
    redisReply *r = redisvCommand(c, fmt, ap);
    va_end(ap);
    bool ok = r && (r->type == REDIS_REPLY_STATUS || r->type == REDIS_REPLY_STRING) &&
              strcmp(r->str, want) == 0;
    if (r)
        freeReplyObject(r);
    redisFree(c);
    return ok;
}

/* How many times the server ran `cmd` (INFO commandstats): 0 if never, -1
 * when it does not answer. */
static inline long long rd_harness_command_calls(int port, const char *cmd)
{
    redisReply *r = rd_harness_cmd(port, "INFO commandstats");
    if (!r)
        return -1;
    char want[64];
    snprintf(want, sizeof want, "cmdstat_%s:calls=", cmd);
    const char *at = r->type == REDIS_REPLY_STRING ? strstr(r->str, want) : NULL;
    long long n = at ? atoll(at + strlen(want)) : 0;
    freeReplyObject(r);
    return n;
}

/* The breaker record as docs/REDIS.md ("Keys") describes it: a string of
 * big-endian 64-bit integers, the fields st..fu, then the call window. */
enum { RD_REC_ST, RD_REC_CF, RD_REC_CS, RD_REC_OA, RD_REC_OU, RD_REC_GEN, RD_REC_OT,
       RD_REC_LS, RD_REC_VER, RD_REC_FO, RD_REC_FU };
#define RD_REC_LEN (8 * (11 + 10 * 4))

/* Field `field` of the record at `key`; false when there is no record. */
static inline bool rd_harness_record_field(int port, const char *key, int field, int64_t *out)
{
    redisReply *r = rd_harness_cmd(port, "GET %s", key);
    bool ok = r && r->type == REDIS_REPLY_STRING && r->len == RD_REC_LEN;
    if (ok) {
        uint64_t bits;
        memcpy(&bits, r->str + 8 * field, 8);
        *out = (int64_t)be64toh(bits);
    }
    if (r)
        freeReplyObject(r);
    return ok;
}

/* Overwrites field `field` of the record at `key` in place. */
static inline bool rd_harness_record_put(int port, const char *key, int field, int64_t v)
{
    uint64_t bits = htobe64((uint64_t)v);
    char buf[8];
    memcpy(buf, &bits, 8);
    redisReply *r = rd_harness_cmd(port, "SETRANGE %s %d %b", key, 8 * field, buf, (size_t)8);
    bool ok = r && r->type == REDIS_REPLY_INTEGER && r->integer == RD_REC_LEN;
    if (r)
        freeReplyObject(r);
    return ok;
}

/* How many functions the server lists in the library named `library`
 * (FUNCTION LIST): 0 when it has no such library, -1 when it does not
 * answer. */
static inline long rd_harness_library_functions(int port, const char *library)
{
    redisReply *r = rd_harness_cmd(port, "FUNCTION LIST LIBRARYNAME %s", library);
    if (!r)
        return -1;
    long n = 0;
    for (size_t i = 0; r->type == REDIS_REPLY_ARRAY && i < r->elements; i++) {
        const redisReply *lib = r->element[i];
        bool named = false;
        long functions = 0;
        for (size_t k = 0; k + 1 < lib->elements; k += 2) {
            const char *key = lib->element[k]->str;
            const redisReply *value = lib->element[k + 1];
            if (key && strcmp(key, "library_name") == 0)
                named = value->str && strcmp(value->str, library) == 0;
            else if (key && strcmp(key, "functions") == 0)
                functions = (long)value->elements;
        }
        if (named)
            n = functions;
    }
    freeReplyObject(r);
    return n;
}

static bool rd_harness_wait_ping(int port, int timeout_ms)
{
    int64_t until = rd_harness_now_ms() + timeout_ms;
    while (rd_harness_now_ms() < until) {
        redisReply *r = rd_harness_cmd(port, "PING"); /* NOAUTH also means "up" */
        if (r) {
            freeReplyObject(r);
            return true;
        }
        rd_harness_sleep_ms(20);
    }
    return false;
}

static void rd_harness_spawn(rd_redis_proc *p)
{
    pid_t pid = fork();
    if (pid == 0) {
        if (chdir(p->dir) != 0)
            _exit(127);
        int log = open("server.log", O_WRONLY | O_CREAT | O_APPEND, 0600);
        if (log >= 0) {
            dup2(log, 1);
            dup2(log, 2);
        }
        char *argv[RD_HARNESS_MAX_ARGS + 1];
        for (int i = 0; i < p->n_args; i++)
            argv[i] = p->args[i];
        argv[p->n_args] = NULL;
        execvp("redis-server", argv);
        _exit(127);
    }
    p->pid = pid;
}

static void rd_harness_add_arg(rd_redis_proc *p, const char *a)
{
    if (p->n_args < RD_HARNESS_MAX_ARGS)
        p->args[p->n_args++] = strdup(a);
}

static int rd_harness_make_dir(rd_redis_proc *p)
{
    snprintf(p->dir, sizeof p->dir, "/tmp/rd-redis-test-XXXXXX");
    return mkdtemp(p->dir) ? 0 : -1;
}

/* Starts redis-server on port (0 = a free one) with extra "--opt value"
 * arguments (NULL-terminated list, may be NULL). 0 on success. */
static int rd_redis_proc_start(rd_redis_proc *p, int port, const char *const *extra)
{
    memset(p, 0, sizeof *p);
    p->port = port ? port : rd_harness_free_port();
    if (p->port <= 0 || rd_harness_make_dir(p) != 0)
        return -1;
    char port_text[16];
    snprintf(port_text, sizeof port_text, "%d", p->port);
    const char *base[] = {"redis-server", "--port", port_text, "--bind", "127.0.0.1",
                          "--save", "", "--appendonly", "no", "--daemonize", "no"};
    for (size_t i = 0; i < sizeof base / sizeof *base; i++)
        rd_harness_add_arg(p, base[i]);
    for (const char *const *e = extra; e && *e; e++)
        rd_harness_add_arg(p, *e);
    rd_harness_spawn(p);
    return rd_harness_wait_ping(p->port, 5000) ? 0 : -1;
}

/* A sentinel watching master_port as "mymaster" with quorum 2. */
static inline int rd_sentinel_proc_start(rd_redis_proc *p, int master_port)
{
    memset(p, 0, sizeof *p);
    p->port = rd_harness_free_port();
    if (p->port <= 0 || rd_harness_make_dir(p) != 0)
        return -1;
    char conf[300];
    snprintf(conf, sizeof conf, "%s/sentinel.conf", p->dir);
    FILE *f = fopen(conf, "w");
    if (!f)
        return -1;
    fprintf(f,
            "port %d\nbind 127.0.0.1\ndaemonize no\ndir %s\n"
            "sentinel monitor mymaster 127.0.0.1 %d 2\n"
            "sentinel down-after-milliseconds mymaster 1000\n"
            "sentinel failover-timeout mymaster 4000\n"
            "sentinel parallel-syncs mymaster 1\n",
            p->port, p->dir, master_port);
    fclose(f);
    rd_harness_add_arg(p, "redis-server");
    rd_harness_add_arg(p, conf);
    rd_harness_add_arg(p, "--sentinel");
    rd_harness_spawn(p);
    return rd_harness_wait_ping(p->port, 5000) ? 0 : -1;
}

/* Kills the process (SIGKILL: an abrupt outage), keeping its port and
 * arguments for rd_redis_proc_restart. */
static void rd_redis_proc_kill(rd_redis_proc *p)
{
    if (p->pid > 0) {
        kill(p->pid, SIGKILL);
        waitpid(p->pid, NULL, 0);
    }
    p->pid = 0;
}

static inline int rd_redis_proc_restart(rd_redis_proc *p)
{
    rd_redis_proc_kill(p);
    rd_harness_spawn(p);
    return rd_harness_wait_ping(p->port, 5000) ? 0 : -1;
}

static void rd_harness_remove_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        char path[600];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        unlink(path);
    }
    closedir(d);
    rmdir(dir);
}

/* Kills it and removes its directory. Accepts a never-started proc. */
static void rd_redis_proc_stop(rd_redis_proc *p)
{
    rd_redis_proc_kill(p);
    if (p->dir[0])
        rd_harness_remove_dir(p->dir);
    for (int i = 0; i < p->n_args; i++)
        free(p->args[i]);
    memset(p, 0, sizeof *p);
}

#endif
