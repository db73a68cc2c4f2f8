/* The key tables of each section (config_keys.h), by the file that holds
 * them; config.c puts them together into the main file's table and
 * config_manifest.c into a tool manifest's. Internal to the loader. */
#ifndef RD_CONFIG_CONFIG_TABLES_H
#define RD_CONFIG_CONFIG_TABLES_H

#include "config/config_keys.h"

/* server.workers at most; 0 asks for one per core, up to this too */
#define RD_MAX_WORKERS 64

/* config_server.c: `server` (with tls, auth, admin), over rd_server_config */
extern const rd_key_table rd_keys_server;
/* config_server.c: {token_file | token_env}, over the char * of the token */
extern const rd_key_table rd_keys_token;
/* config_tenants.c: one entry of server.tenants, over rd_tenant_config;
 * the list's reader and release, over rd_server_config */
extern const rd_key_table rd_keys_tenant;
int rd_config_parse_tenants(const rd_yctx *c, const rd_ynode *map, const rd_ynode *list,
                            const char *path, void *base);
void rd_config_free_tenants(void *base);
/* config_store.c: `store` (with redis), over rd_store_config */
extern const rd_key_table rd_keys_store;
/* config_observability.c: `metrics` over rd_metrics_config; `log` and
 * `reload` over rd_config */
extern const rd_key_table rd_keys_metrics;
extern const rd_key_table rd_keys_log;
extern const rd_key_table rd_keys_reload;
/* config_policies.c: what a tool is decided by (the `defaults` section and
 * every manifest), over rd_tool_config; `turn` over rd_config; `learning`
 * over rd_learning_policy */
extern const rd_key_table rd_keys_policies;
extern const rd_key_table rd_keys_turn;
extern const rd_key_table rd_keys_learning;
/* config_tracing.c: `tracing` (with otlp), over rd_config */
extern const rd_key_table rd_keys_tracing;
/* config_effects.c: a manifest's effects, idempotency and verify_tool;
 * config_scope.c: its breaker_scope; both over rd_tool_config and included
 * into the manifest's table */
extern const rd_key_table rd_keys_effects;
extern const rd_key_table rd_keys_scope;
/* config_manifest.c: a tool manifest file, over rd_tool_config */
extern const rd_key_table rd_keys_manifest;
/* config.c: the main file, over rd_config */
extern const rd_key_table rd_keys_main;

#endif
