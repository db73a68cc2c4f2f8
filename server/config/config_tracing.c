/* tracing.otlp (see config_tracing.h). */
#include "config/config_tracing.h"

#include <stdlib.h>
#include <string.h>

static const char *const TRACING_KEYS[] = {"otlp", NULL};
static const char *const OTLP_KEYS[] = {"endpoint", "service_name", "queue_spans",
                                        "batch_spans", "flush_interval_ms", "timeout_ms", NULL};

void rd_config_tracing_defaults(rd_config *cfg)
{
    cfg->otlp = (rd_otlp_config){.queue_spans = 4096, .batch_spans = 512,
                                 .flush_interval_ms = 1000, .timeout_ms = 2000};
}

/* "http://host:port/path": plain HTTP only (a collector beside the service,
 * or a sidecar); https would need a TLS client the exporter does not have. */
static int check_endpoint(const rd_yctx *c, const rd_ynode *map, const char *endpoint)
{
    const char *p = strncmp(endpoint, "http://", 7) == 0 ? endpoint + 7 : NULL;
    const char *colon = p ? strchr(p, ':') : NULL;
    const char *slash = p ? strchr(p, '/') : NULL;
    if (p && colon && colon > p && (!slash || colon < slash) && colon[1] >= '0' &&
        colon[1] <= '9')
        return RD_OK;
    return rd_yerr(c, rd_ymap_key_line(map, "endpoint"), "tracing.otlp.endpoint",
                   "expected http://host:port/path (e.g. http://127.0.0.1:4318/v1/traces) or "
                   "\"\" (off), got \"%s\"", endpoint);
}

int rd_config_parse_tracing(const rd_yctx *c, const rd_ynode *map, rd_config *cfg)
{
    rd_otlp_config *o = &cfg->otlp;
    int rc = rd_yexpect(c, map, "tracing", RD_YMAP);
    if (rc == RD_OK)
        rc = rd_ymap_check(c, map, "tracing", TRACING_KEYS);
    const rd_ynode *otlp = rd_ymap_get(map, "otlp");
    if (rc != RD_OK || !otlp)
        return rc;
    const char *path = "tracing.otlp";
    rc = rd_yexpect(c, otlp, path, RD_YMAP);
    if (rc == RD_OK)
        rc = rd_ymap_check(c, otlp, path, OTLP_KEYS);
    if (rc == RD_OK)
        rc = rd_yget_str(c, otlp, path, "endpoint", 1024, &o->endpoint);
    if (rc == RD_OK && o->endpoint && !o->endpoint[0]) {
        free(o->endpoint);
        o->endpoint = NULL;
    }
    if (rc == RD_OK && o->endpoint)
        rc = check_endpoint(c, otlp, o->endpoint);
    if (rc == RD_OK)
        rc = rd_yget_str(c, otlp, path, "service_name", 256, &o->service_name);
    int64_t queue = (int64_t)o->queue_spans, batch = (int64_t)o->batch_spans;
    if (rc == RD_OK)
        rc = rd_yget_int(c, otlp, path, "queue_spans", 1, 1000000, &queue);
    if (rc == RD_OK)
        rc = rd_yget_int(c, otlp, path, "batch_spans", 1, 10000, &batch);
    o->queue_spans = (size_t)queue;
    o->batch_spans = (size_t)batch;
    if (rc == RD_OK)
        rc = rd_yget_int(c, otlp, path, "flush_interval_ms", 10, 600000, &o->flush_interval_ms);
    if (rc == RD_OK)
        rc = rd_yget_int(c, otlp, path, "timeout_ms", 10, 60000, &o->timeout_ms);
    return rc;
}

void rd_config_tracing_free(rd_config *cfg)
{
    free(cfg->otlp.endpoint);
    free(cfg->otlp.service_name);
}
