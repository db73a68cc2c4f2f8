/* The `tracing` section of recovery.yaml: decisions exported as
 * OpenTelemetry spans over OTLP/HTTP (ops/otlp.h). Config internal. */
#ifndef RD_CONFIG_CONFIG_TRACING_H
#define RD_CONFIG_CONFIG_TRACING_H

#include "config/config.h"
#include "config/yaml_util.h"

void rd_config_tracing_defaults(rd_config *cfg);
int rd_config_parse_tracing(const rd_yctx *c, const rd_ynode *map, rd_config *cfg);
void rd_config_tracing_free(rd_config *cfg);

#endif
