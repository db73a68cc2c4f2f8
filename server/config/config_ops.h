/* The operational keys of the main file (transport, TLS, tokens, metrics,
 * logs, reload, the Redis store): parsed here so config.c keeps to the
 * decision policies. Internal to the loader.
 *
 * Every function writes "FILE:LINE: KEY: problem" through the context and
 * returns RD_ERR_CONFIG on error. Secrets (tokens, the Redis password) are
 * read from their file or environment variable at load time and never
 * appear in an error message. */
#ifndef RD_CONFIG_CONFIG_OPS_H
#define RD_CONFIG_CONFIG_OPS_H

#include "config/config.h"
#include "config/yaml_util.h"

/* Defaults of everything below (strdup'd; RD_ERR_NOMEM on failure). */
int rd_config_ops_defaults(rd_config *cfg);

/* server.{drain_delay_ms, max_connection_age*, keepalive*, tls, auth, admin}. */
int rd_config_parse_server_ops(const rd_yctx *c, const rd_ynode *server, rd_config *cfg);
/* store.redis */
int rd_config_parse_redis(const rd_yctx *c, const rd_ynode *store, rd_redis_config *r);
/* the top-level metrics, log and reload sections */
int rd_config_parse_ops_sections(const rd_yctx *c, const rd_ynode *root, rd_config *cfg);

/* Frees what the functions above allocated. */
void rd_config_ops_free(rd_config *cfg);

#endif
