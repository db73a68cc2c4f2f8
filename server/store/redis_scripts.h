/* The Lua scripts of the Redis store (redis_scripts.c). */
#ifndef RD_STORE_REDIS_SCRIPTS_H
#define RD_STORE_REDIS_SCRIPTS_H

#include "store/redis_types.h"

/* The embedded scripts, indexed by rd_script_id; read-only. */
const rd_script *rd_redis_scripts(void);

/* The same scripts as one functions library; read-only. */
const rd_script_library *rd_redis_script_library(void);

#endif
