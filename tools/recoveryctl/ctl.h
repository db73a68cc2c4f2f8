/* recoveryctl: the parsed command line and the commands it runs.
 *
 * Exit codes: 0 success, 1 a call or check failed (the message names the
 * gRPC status or the file:line), 2 a usage error. */
#ifndef RECOVERYCTL_CTL_H
#define RECOVERYCTL_CTL_H

#include <stdbool.h>
#include <stdint.h>

#include "rpc.h"

enum { CTL_EXIT_OK = 0, CTL_EXIT_FAIL = 1, CTL_EXIT_USAGE = 2 };

/* Command options, as bits: which were given, which a command accepts. */
enum {
    OPT_TTL = 1u << 0,
    OPT_REASON = 1u << 1,
    OPT_OPERATOR = 1u << 2,
    OPT_TOOL = 1u << 3,
    OPT_HTTP_STATUS = 1u << 4,
    OPT_GRPC_CODE = 1u << 5,
    OPT_CODE = 1u << 6,
    OPT_EXCEPTION = 1u << 7,
    OPT_KIND = 1u << 8,
    OPT_SOURCE = 1u << 9,
    OPT_RETRY_AFTER = 1u << 10,
    OPT_DURATION = 1u << 11,
    OPT_COUNT = 1u << 12,
    OPT_CONFIG = 1u << 13,
};

typedef struct ctl_opts {
    /* global */
    const char *addr;
    const char *token;           /* resolved from --token, --token-file or the environment */
    const char *admin_token;
    const char *tenant;          /* --tenant or RECOVERYCTL_TENANT; NULL = none */
    ctl_tls tls;
    bool json;
    int timeout_ms;
    /* per command */
    unsigned given;              /* OPT_* bits */
    int64_t ttl_ms;
    const char *reason;
    const char *operator_;
    const char *tool;
    int32_t http_status;
    int32_t grpc_code;
    const char *code;
    const char *exception_type;
    int kind;                    /* Recovery__V1__ErrorKind */
    int source;                  /* Recovery__V1__ErrorSource */
    int64_t retry_after_ms;
    int64_t duration_ms;
    int64_t count;
    const char *config;          /* replay: the candidate configuration (file or directory) */
    /* positionals after the command name */
    char **args;
    int n_args;
} ctl_opts;

int ctl_cmd_state(const ctl_opts *o);
int ctl_cmd_watch(const ctl_opts *o);
int ctl_cmd_force_open(const ctl_opts *o);
int ctl_cmd_force_close(const ctl_opts *o);
int ctl_cmd_reset(const ctl_opts *o);
int ctl_cmd_release(const ctl_opts *o);
int ctl_cmd_classify(const ctl_opts *o);
int ctl_cmd_trace(const ctl_opts *o);
int ctl_cmd_check_config(const ctl_opts *o);
int ctl_cmd_export(const ctl_opts *o);
int ctl_cmd_replay(const ctl_opts *o);

/* commands.c: a turn's trace as `trace --json` prints it; NULL (with the
 * failure printed) when the call fails. */
struct json_t;
struct json_t *ctl_fetch_trace_json(const ctl_opts *o, const char *turn_id);
/* main.c: prints a usage error; returns CTL_EXIT_USAGE. */
__attribute__((format(printf, 1, 2))) int ctl_usage_error(const char *fmt, ...);

#endif
