/* The process collector every Prometheus client library ships
 * (process_cpu_seconds_total, process_resident_memory_bytes, ...), read from
 * /proc at scrape time, so stock dashboards and alerts work unchanged. */
#ifndef RD_OPS_METRICS_PROCESS_H
#define RD_OPS_METRICS_PROCESS_H

#include "ops/metrics_text.h"

/* Appends the process_* families; a value /proc cannot give is left out. */
void rd_metrics_render_process_collector(strbuf *sb);

#endif
