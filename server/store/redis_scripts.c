/* The Lua scripts of the Redis store. Each is server/store/lua/<name>.lua
 * after the shared pieces its first line names (server/store/lua/lib),
 * joined and embedded at build time (CMakeLists.txt, scripts/embed.cmake);
 * docs/REDIS.md states each script's contract.
 *
 * No SHA-1 is computed here: a connection loads every script with SCRIPT
 * LOAD and keeps the names Redis gives back (redis_conn.c). */
#include <pthread.h>

#include "store/redis_scripts.h"

#define RD_LUA_SCRIPTS(X)                                                                \
    X(ADMIT, admit)                                                                      \
    X(RECORD, record)                                                                    \
    X(FORCE, force)                                                                      \
    X(READ, read)                                                                        \
    X(FORGET_TOOL, forget_tool)                                                          \
    X(CLAIM, claim)                                                                      \
    X(TURN_APPEND, turn_append)                                                          \
    X(TURN_READ, turn_read)                                                              \
    X(TURN_EXPIRE, turn_expire)                                                          \
    X(OUTCOME_EXPIRE, outcome_expire)                                                    \
    X(INDEX_RESERVE, index_reserve)                                                      \
    X(INDEX_TRIM, index_trim)                                                            \
    X(WINDOW_READ, window_read)                                                          \
    X(BUDGET, budget)                                                                    \
    X(LATENCY, latency)                                                                  \
    X(LEARN_SWAP, learn_swap)                                                            \
    X(LEARN_SETTLE, learn_settle)                                                        \
    X(QUOTA, quota)

/* The embedded texts (NUL-terminated) and their lengths. */
#define DECLARE_LUA(id, name)                                                            \
    extern const unsigned char rd_lua_##name[];                                          \
    extern const unsigned long rd_lua_##name##_len;
RD_LUA_SCRIPTS(DECLARE_LUA)

static rd_script scripts[RD_SCRIPT_COUNT];
static pthread_once_t scripts_once = PTHREAD_ONCE_INIT;

/* The lengths are link-time values, so the table is filled once at run time. */
static void fill_scripts(void)
{
#define FILL_LUA(id, name)                                                               \
    scripts[RD_SCRIPT_##id] = (rd_script){#name, (const char *)rd_lua_##name,             \
                                          (size_t)rd_lua_##name##_len};
    RD_LUA_SCRIPTS(FILL_LUA)
}

const rd_script *rd_redis_scripts(void)
{
    pthread_once(&scripts_once, fill_scripts);
    return scripts;
}
