/* The `tracing` section of the main file: every decision exported as an
 * OpenTelemetry span over OTLP/HTTP to a collector (ops/otlp.h). */
#include <string.h>

#include "config/config.h"
#include "config/config_tables.h"
#include "domain/err.h"

/* "http://host:port/path": plain HTTP only (a collector beside the service,
 * or a sidecar); https would need a TLS client the exporter does not have. */
static int check_endpoint(const rd_yctx *c, int line, const char *path, const void *field)
{
    const char *endpoint = *(char *const *)field;
    if (!endpoint)
        return RD_OK;
    const char *p = strncmp(endpoint, "http://", 7) == 0 ? endpoint + 7 : NULL;
    const char *colon = p ? strchr(p, ':') : NULL;
    const char *slash = p ? strchr(p, '/') : NULL;
    if (p && colon && colon > p && (!slash || colon < slash) && colon[1] >= '0' &&
        colon[1] <= '9')
        return RD_OK;
    return rd_yerr(c, line, path,
                   "expected http://host:port/path (e.g. http://127.0.0.1:4318/v1/traces) or "
                   "\"\" (off), got \"%s\"", endpoint);
}

static const rd_key OTLP_KEYS[] = {
    {.name = "endpoint", .type = RD_KEY_OPT_TEXT, RD_FIELD(rd_otlp_config, endpoint), .hi = 1024,
     .check = check_endpoint, .range_doc = "http://host:port/path, or \"\" (off)",
     .default_doc = "off", .doc = "the collector's OTLP/HTTP traces endpoint"},
    {.name = "service_name", .type = RD_KEY_OPT_TEXT, RD_FIELD(rd_otlp_config, service_name),
     .hi = 256, .default_doc = "`recoveryd`", .doc = "the spans' service.name"},
    RD_K_INT(rd_otlp_config, "queue_spans", queue_spans, 1, 1000000, 4096,
             "spans waiting at most; further ones are dropped and counted"),
    RD_K_INT(rd_otlp_config, "batch_spans", batch_spans, 1, 10000, 512,
             "spans per request at most"),
    RD_K_INT(rd_otlp_config, "flush_interval_ms", flush_interval_ms, 10, 600000, 1000,
             "a partial batch waits at most this long"),
    RD_K_INT(rd_otlp_config, "timeout_ms", timeout_ms, 10, 60000, 2000,
             "connect, send and answer, per request"),
};
static const rd_key_table OTLP = RD_KEY_TABLE_RESTART(
    "tracing.otlp", "docs/OPERATIONS.md, \"Trace context and spans\".", OTLP_KEYS, NULL);

static const rd_key TRACING_KEYS[] = {
    RD_K_SECTION(rd_config, "otlp", otlp, &OTLP, "decisions exported as spans"),
};
const rd_key_table rd_keys_tracing = RD_KEY_TABLE("tracing", NULL, TRACING_KEYS, NULL);
