/* The Lua scripts of the Redis store (redis_scripts.c). */
#ifndef RD_STORE_REDIS_SCRIPTS_H
#define RD_STORE_REDIS_SCRIPTS_H

#include "store/redis_types.h"

/* The scripts with their SHA-1 filled in; built once, read-only after. */
const rd_script *rd_redis_scripts(void);

/* SHA-1 of len bytes as 40 hex digits plus NUL. */
void rd_sha1_hex(const void *data, size_t len, char out[41]);

#endif
