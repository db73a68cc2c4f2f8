/* The Lua scripts of the Redis store. Each is server/store/lua/<name>.lua
 * after the shared pieces its first line names (server/store/lua/lib),
 * joined and embedded at build time (CMakeLists.txt, scripts/embed.cmake);
 * docs/REDIS.md states each script's contract.
 *
 * The same files also make one Redis Functions library (scripts/
 * lua_library.cmake): the shared pieces are defined once when a node loads
 * it, not on every run as with EVALSHA, and each script is a function
 * named <library>_<script>. The library's name is "rd_" and a 64-bit
 * FNV-1a hash of its text, so two builds with different scripts sharing a
 * Redis (a rolling upgrade) each call their own functions.
 *
 * No SHA-1 is computed here: a connection that falls back to scripts loads
 * them with SCRIPT LOAD and keeps the names Redis gives back
 * (redis_conn.c). */
#include <inttypes.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
extern const unsigned char rd_lua_library[];
extern const unsigned long rd_lua_library_len;

static rd_script scripts[RD_SCRIPT_COUNT];
static rd_script_library library;
static char library_name[24];
static pthread_once_t scripts_once = PTHREAD_ONCE_INIT;

static uint64_t fnv1a64(const unsigned char *p, size_t n)
{
    uint64_t h = 14695981039346656037ULL;
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 1099511628211ULL;
    }
    return h;
}

/* "#!lua name=<name>", then RD_LIB (the prefix of every function name the
 * body registers), then the body. Built once; never freed. */
static void fill_library(void)
{
    snprintf(library_name, sizeof library_name, "rd_%016" PRIx64,
             fnv1a64(rd_lua_library, (size_t)rd_lua_library_len));
    char head[96];
    int head_len = snprintf(head, sizeof head, "#!lua name=%s\nlocal RD_LIB = '%s'\n",
                            library_name, library_name);
    size_t len = (size_t)head_len + (size_t)rd_lua_library_len;
    char *text = malloc(len + 1);
    if (!text)
        abort(); /* at start-up, a few kilobytes */
    memcpy(text, head, (size_t)head_len);
    memcpy(text + head_len, rd_lua_library, (size_t)rd_lua_library_len + 1);
    library = (rd_script_library){library_name, text, len};
}

/* The lengths are link-time values, so the table is filled once at run time. */
static void fill_scripts(void)
{
    fill_library();
#define FILL_LUA(id, name)                                                               \
    scripts[RD_SCRIPT_##id] = (rd_script){#name, (const char *)rd_lua_##name,             \
                                          (size_t)rd_lua_##name##_len, ""};              \
    snprintf(scripts[RD_SCRIPT_##id].function, sizeof scripts[RD_SCRIPT_##id].function,  \
             "%s_%s", library_name, #name);
    RD_LUA_SCRIPTS(FILL_LUA)
}

const rd_script *rd_redis_scripts(void)
{
    pthread_once(&scripts_once, fill_scripts);
    return scripts;
}

const rd_script_library *rd_redis_script_library(void)
{
    pthread_once(&scripts_once, fill_scripts);
    return &library;
}
