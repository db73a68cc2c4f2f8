/* The fleet keys of the configuration (docs/FLEET.md): the failure-rate
 * and quorum keys of circuit_breaker, retry_budget and alternatives_ranking
 * (in defaults and in each manifest) and the top-level learning section.
 * Internal to the loader. Absent keys keep the value already in the
 * struct (the defaults, or for a manifest the defaults section's values).
 * Errors: "FILE:LINE: KEY: problem", RD_ERR_CONFIG. */
#ifndef RD_CONFIG_CONFIG_FLEET_H
#define RD_CONFIG_CONFIG_FLEET_H

#include "config/config.h"
#include "config/yaml_util.h"

/* mode, failure_rate_threshold, minimum_calls, window_ms, slow_call_ms,
 * slow_call_rate_threshold, quorum of a circuit_breaker mapping (whose
 * other keys the caller has checked). */
int rd_config_parse_breaker_fleet(const rd_yctx *c, const rd_ynode *breaker, const char *path,
                                  rd_breaker_policy *b);

/* retry_budget and alternatives_ranking of a defaults section or a tool. */
int rd_config_parse_tool_fleet(const rd_yctx *c, const rd_ynode *map, const char *path,
                               rd_tool_config *t);

/* The top-level learning section. */
int rd_config_parse_learning(const rd_yctx *c, const rd_ynode *map, rd_learning_policy *l);

#endif
