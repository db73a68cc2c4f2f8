/* recoveryctl: operate a recoveryd from the command line.
 *
 *   recoveryctl [global options] COMMAND [command options] [ARGS]
 *
 * Options may come before or after the command; "--" ends them (for a
 * classify message that starts with a dash). See docs/RECOVERYCTL.md. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <grpc/support/log.h>

#include "ctl.h"
#include "output.h"

#define DEFAULT_ADDR "127.0.0.1:50051"
#define DEFAULT_TIMEOUT_MS 5000

typedef struct command {
    const char *name;
    int (*run)(const ctl_opts *o);
    unsigned options;            /* OPT_* it accepts */
    int min_args, max_args;      /* max_args -1: any number */
    const char *synopsis;
} command;

#define CLASSIFY_OPTS (OPT_TOOL | OPT_HTTP_STATUS | OPT_GRPC_CODE | OPT_CODE | OPT_EXCEPTION | \
                       OPT_KIND | OPT_SOURCE | OPT_RETRY_AFTER)
#define FORCE_OPTS (OPT_REASON | OPT_OPERATOR)

static const command COMMANDS[] = {
    {"state", ctl_cmd_state, 0, 0, -1, "state [TOOL...]"},
    {"watch", ctl_cmd_watch, OPT_DURATION | OPT_COUNT, 0, -1,
     "watch [TOOL...] [--count N] [--duration-ms N]"},
    {"force-open", ctl_cmd_force_open, FORCE_OPTS | OPT_TTL, 1, 1,
     "force-open TOOL [--ttl-ms N] [--reason R] [--operator NAME]"},
    {"force-close", ctl_cmd_force_close, FORCE_OPTS | OPT_TTL, 1, 1,
     "force-close TOOL [--ttl-ms N] [--reason R] [--operator NAME]"},
    {"reset", ctl_cmd_reset, FORCE_OPTS, 1, 1, "reset TOOL [--reason R] [--operator NAME]"},
    {"release", ctl_cmd_release, FORCE_OPTS, 1, 1, "release TOOL [--reason R] [--operator NAME]"},
    {"classify", ctl_cmd_classify, CLASSIFY_OPTS, 1, -1,
     "classify [--tool T] [--http-status N] [--grpc-code N] [--code C]\n"
     "                  [--exception-type E] [--kind K] [--source S] [--retry-after-ms N] MESSAGE"},
    {"trace", ctl_cmd_trace, 0, 1, 1, "trace TURN_ID"},
    {"check-config", ctl_cmd_check_config, 0, 1, 1, "check-config FILE"},
    {"export", ctl_cmd_export, 0, 1, -1, "export TURN_ID... > EXPORT"},
    {"replay", ctl_cmd_replay, OPT_CONFIG, 1, 1, "replay --config FILE|DIR EXPORT"},
};
#define N_COMMANDS (sizeof COMMANDS / sizeof COMMANDS[0])

static void usage(FILE *out)
{
    fprintf(out,
            "usage: recoveryctl [--addr HOST:PORT] [--token T | --token-file F]\n"
            "                   [--admin-token T | --admin-token-file F] [--tenant ID]\n"
            "                   [--tls-ca F] [--tls-cert F --tls-key F] [--tls-server-name NAME]\n"
            "                   [--json] [--timeout-ms N] COMMAND [ARGS]\n\ncommands:\n");
    for (size_t i = 0; i < N_COMMANDS; i++)
        fprintf(out, "  %s\n", COMMANDS[i].synopsis);
    fprintf(out, "\nenvironment: RECOVERYCTL_ADDR, RECOVERYCTL_TOKEN, RECOVERYCTL_ADMIN_TOKEN,\n"
                 "             RECOVERYCTL_TENANT\n"
                 "exit status: 0 ok, 1 the call or check failed, 2 usage error\n");
}

__attribute__((format(printf, 1, 2)))
static int usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("recoveryctl: ", stderr);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputs("\n(run 'recoveryctl --help' for usage)\n", stderr);
    return CTL_EXIT_USAGE;
}

int ctl_usage_error(const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return usage_error("%s", msg);
}

/* ---- option values ---- */

static bool parse_int64(const char *text, int64_t lo, int64_t hi, int64_t *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (errno || end == text || *end || v < lo || v > hi)
        return false;
    *out = v;
    return true;
}

/* A secret from a file: its first line, without trailing whitespace.
 * Returns a malloc'd string (caller frees) or NULL with a message printed. */
static char *read_secret(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "recoveryctl: %s: %s\n", path, strerror(errno));
        return NULL;
    }
    char buf[4096];
    char *line = fgets(buf, sizeof buf, f);
    fclose(f);
    size_t len = line ? strlen(buf) : 0;
    while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == '\r' || buf[len - 1] == ' ' ||
                       buf[len - 1] == '\t'))
        buf[--len] = '\0';
    if (len == 0) {
        fprintf(stderr, "recoveryctl: %s: empty token file\n", path);
        return NULL;
    }
    return strdup(buf);
}

/* ---- the command line ---- */

enum {
    O_ADDR = 1000, O_TOKEN, O_TOKEN_FILE, O_ADMIN_TOKEN, O_ADMIN_TOKEN_FILE, O_TLS_CA,
    O_TLS_CERT, O_TLS_KEY, O_TLS_NAME, O_JSON, O_TIMEOUT, O_TTL, O_REASON, O_OPERATOR,
    O_TOOL, O_HTTP_STATUS, O_GRPC_CODE, O_CODE, O_EXCEPTION, O_KIND, O_SOURCE,
    O_RETRY_AFTER, O_DURATION, O_COUNT, O_HELP, O_CONFIG, O_TENANT,
};

static const struct option LONG_OPTIONS[] = {
    {"addr", required_argument, NULL, O_ADDR},
    {"token", required_argument, NULL, O_TOKEN},
    {"token-file", required_argument, NULL, O_TOKEN_FILE},
    {"admin-token", required_argument, NULL, O_ADMIN_TOKEN},
    {"admin-token-file", required_argument, NULL, O_ADMIN_TOKEN_FILE},
    {"tenant", required_argument, NULL, O_TENANT},
    {"tls-ca", required_argument, NULL, O_TLS_CA},
    {"tls-cert", required_argument, NULL, O_TLS_CERT},
    {"tls-key", required_argument, NULL, O_TLS_KEY},
    {"tls-server-name", required_argument, NULL, O_TLS_NAME},
    {"json", no_argument, NULL, O_JSON},
    {"timeout-ms", required_argument, NULL, O_TIMEOUT},
    {"ttl-ms", required_argument, NULL, O_TTL},
    {"reason", required_argument, NULL, O_REASON},
    {"operator", required_argument, NULL, O_OPERATOR},
    {"tool", required_argument, NULL, O_TOOL},
    {"http-status", required_argument, NULL, O_HTTP_STATUS},
    {"grpc-code", required_argument, NULL, O_GRPC_CODE},
    {"code", required_argument, NULL, O_CODE},
    {"exception-type", required_argument, NULL, O_EXCEPTION},
    {"kind", required_argument, NULL, O_KIND},
    {"source", required_argument, NULL, O_SOURCE},
    {"retry-after-ms", required_argument, NULL, O_RETRY_AFTER},
    {"duration-ms", required_argument, NULL, O_DURATION},
    {"count", required_argument, NULL, O_COUNT},
    {"help", no_argument, NULL, O_HELP},
    {"config", required_argument, NULL, O_CONFIG},
    {NULL, 0, NULL, 0},
};

/* What was given on the command line, before tokens are resolved. */
typedef struct raw_opts {
    const char *token, *token_file, *admin_token, *admin_token_file;
    char *owned[2];              /* tokens read from files; freed at exit */
    bool help;
} raw_opts;

static int numeric_option(int id, const char *arg, ctl_opts *o)
{
    int64_t v;
    switch (id) {
    case O_TIMEOUT:
        if (!parse_int64(arg, 1, 3600000, &v))
            return usage_error("--timeout-ms: expected 1..3600000, got '%s'", arg);
        o->timeout_ms = (int)v;
        return 0;
    case O_TTL:
        if (!parse_int64(arg, 0, INT64_MAX, &o->ttl_ms))
            return usage_error("--ttl-ms: expected a number of milliseconds, got '%s'", arg);
        return 0;
    case O_HTTP_STATUS:
        if (!parse_int64(arg, 100, 599, &v))
            return usage_error("--http-status: expected 100..599, got '%s'", arg);
        o->http_status = (int32_t)v;
        return 0;
    case O_GRPC_CODE:
        if (!parse_int64(arg, 1, 16, &v))
            return usage_error("--grpc-code: expected 1..16, got '%s'", arg);
        o->grpc_code = (int32_t)v;
        return 0;
    case O_RETRY_AFTER:
        if (!parse_int64(arg, 0, INT64_MAX, &o->retry_after_ms))
            return usage_error("--retry-after-ms: expected milliseconds, got '%s'", arg);
        return 0;
    case O_DURATION:
        if (!parse_int64(arg, 1, INT64_MAX, &o->duration_ms))
            return usage_error("--duration-ms: expected milliseconds, got '%s'", arg);
        return 0;
    case O_COUNT:
        if (!parse_int64(arg, 1, INT64_MAX, &o->count))
            return usage_error("--count: expected a positive number, got '%s'", arg);
        return 0;
    }
    return usage_error("internal: option %d", id);
}

static int enum_option(const ProtobufCEnumDescriptor *d, const char *name, const char *arg,
                       int *out)
{
    if (!ctl_enum_parse(d, arg, out))
        return usage_error("%s: unknown value '%s'", name, arg);
    return 0;
}

static unsigned option_bit(int id)
{
    switch (id) {
    case O_TTL: return OPT_TTL;
    case O_REASON: return OPT_REASON;
    case O_OPERATOR: return OPT_OPERATOR;
    case O_TOOL: return OPT_TOOL;
    case O_HTTP_STATUS: return OPT_HTTP_STATUS;
    case O_GRPC_CODE: return OPT_GRPC_CODE;
    case O_CODE: return OPT_CODE;
    case O_EXCEPTION: return OPT_EXCEPTION;
    case O_KIND: return OPT_KIND;
    case O_SOURCE: return OPT_SOURCE;
    case O_RETRY_AFTER: return OPT_RETRY_AFTER;
    case O_DURATION: return OPT_DURATION;
    case O_COUNT: return OPT_COUNT;
    case O_CONFIG: return OPT_CONFIG;
    }
    return 0;
}

static int apply_option(int id, const char *arg, ctl_opts *o, raw_opts *raw)
{
    o->given |= option_bit(id);
    switch (id) {
    case O_ADDR: o->addr = arg; return 0;
    case O_TOKEN: raw->token = arg; return 0;
    case O_TOKEN_FILE: raw->token_file = arg; return 0;
    case O_ADMIN_TOKEN: raw->admin_token = arg; return 0;
    case O_ADMIN_TOKEN_FILE: raw->admin_token_file = arg; return 0;
    case O_TENANT: o->tenant = arg; return 0;
    case O_TLS_CA: o->tls.ca_file = arg; return 0;
    case O_TLS_CERT: o->tls.cert_file = arg; return 0;
    case O_TLS_KEY: o->tls.key_file = arg; return 0;
    case O_TLS_NAME: o->tls.server_name = arg; return 0;
    case O_JSON: o->json = true; return 0;
    case O_REASON: o->reason = arg; return 0;
    case O_OPERATOR: o->operator_ = arg; return 0;
    case O_TOOL: o->tool = arg; return 0;
    case O_CODE: o->code = arg; return 0;
    case O_EXCEPTION: o->exception_type = arg; return 0;
    case O_KIND:
        return enum_option(&recovery__v1__error_kind__descriptor, "--kind", arg, &o->kind);
    case O_SOURCE:
        return enum_option(&recovery__v1__error_source__descriptor, "--source", arg, &o->source);
    case O_HELP: raw->help = true; return 0;
    case O_CONFIG: o->config = arg; return 0;
    }
    return numeric_option(id, arg, o);
}

static int parse_options(int argc, char **argv, ctl_opts *o, raw_opts *raw)
{
    opterr = 0;
    int id;
    while ((id = getopt_long(argc, argv, "h", LONG_OPTIONS, NULL)) != -1) {
        if (id == 'h')
            id = O_HELP;
        if (id == '?')
            return optopt ? usage_error("option needs a value or is unknown: %s",
                                        argv[optind - 1])
                          : usage_error("unknown option: %s", argv[optind - 1]);
        int rc = apply_option(id, optarg, o, raw);
        if (rc)
            return rc;
    }
    return 0;
}

/* One of --token / --token-file / the environment variable. A token read
 * from a file is malloc'd into *owned (the caller frees it). */
static int resolve_token(const char *name, const char *given, const char *file,
                         const char *env, const char **out, char **owned)
{
    if (given && file)
        return usage_error("--%s and --%s-file exclude each other", name, name);
    if (given)
        *out = given;
    else if (file) {
        if (!(*out = *owned = read_secret(file)))
            return CTL_EXIT_FAIL;
    } else if (getenv(env) && getenv(env)[0])
        *out = getenv(env);
    return 0;
}

static const command *find_command(const char *name)
{
    for (size_t i = 0; i < N_COMMANDS; i++)
        if (!strcmp(COMMANDS[i].name, name))
            return &COMMANDS[i];
    return NULL;
}

static int check_command_use(const command *cmd, const ctl_opts *o)
{
    unsigned stray = o->given & ~cmd->options;
    if (stray) {
        for (const struct option *lo = LONG_OPTIONS; lo->name; lo++)
            if (option_bit(lo->val) & stray)
                return usage_error("--%s does not apply to '%s'", lo->name, cmd->name);
    }
    if (o->n_args < cmd->min_args || (cmd->max_args >= 0 && o->n_args > cmd->max_args))
        return usage_error("wrong number of arguments for '%s'\nusage: recoveryctl %s",
                           cmd->name, cmd->synopsis);
    if ((o->tls.cert_file != NULL) != (o->tls.key_file != NULL))
        return usage_error("--tls-cert and --tls-key go together");
    if ((o->tls.cert_file || o->tls.server_name) && !o->tls.ca_file)
        return usage_error("--tls-cert, --tls-key and --tls-server-name need --tls-ca");
    return 0;
}

/* gRPC's own log lines would mix with the output; keep them unless asked. */
static void quiet_grpc_log(gpr_log_func_args *args)
{
    (void)args;
}

int main(int argc, char **argv)
{
    ctl_opts o = {.timeout_ms = DEFAULT_TIMEOUT_MS};
    raw_opts raw = {0};
    o.addr = getenv("RECOVERYCTL_ADDR") && getenv("RECOVERYCTL_ADDR")[0]
                 ? getenv("RECOVERYCTL_ADDR") : DEFAULT_ADDR;
    o.operator_ = getenv("USER");
    o.tenant = getenv("RECOVERYCTL_TENANT");
    int rc = parse_options(argc, argv, &o, &raw);
    if (rc)
        return rc;
    if (raw.help) {
        usage(stdout);
        return CTL_EXIT_OK;
    }
    if (optind >= argc) {
        usage(stderr);
        return CTL_EXIT_USAGE;
    }
    const command *cmd = find_command(argv[optind]);
    if (!cmd)
        return usage_error("unknown command '%s'", argv[optind]);
    o.args = argv + optind + 1;
    o.n_args = argc - optind - 1;
    if ((rc = check_command_use(cmd, &o)) ||
        (rc = resolve_token("token", raw.token, raw.token_file, "RECOVERYCTL_TOKEN",
                            &o.token, &raw.owned[0])) ||
        (rc = resolve_token("admin-token", raw.admin_token, raw.admin_token_file,
                            "RECOVERYCTL_ADMIN_TOKEN", &o.admin_token, &raw.owned[1]))) {
        free(raw.owned[0]);
        return rc;
    }
    if (!getenv("GRPC_VERBOSITY") && !getenv("GRPC_TRACE"))
        gpr_set_log_function(quiet_grpc_log);
    rc = cmd->run(&o);
    free(raw.owned[0]);
    free(raw.owned[1]);
    return rc;
}
