/* One error convention for the whole server.
 *
 * Every fallible function returns int: RD_OK (0) on success or a negative
 * rd_err. When the caller passes an rd_status, the failing function fills in
 * a message that names the offending field ("tool_id: longer than 256
 * bytes"). Only server/transport/status.c turns an rd_err into a gRPC code. */
#ifndef RD_DOMAIN_ERR_H
#define RD_DOMAIN_ERR_H

#include <stdarg.h>
#include <stdbool.h>

typedef enum {
    RD_OK = 0,
    RD_ERR_INVALID = -1,     /* the request is malformed or out of range */
    RD_ERR_NOT_FOUND = -2,   /* a named tool or turn is unknown */
    RD_ERR_EXHAUSTED = -3,   /* a configured capacity is full */
    RD_ERR_UNAVAILABLE = -4, /* a dependency (the store) cannot answer now */
    RD_ERR_INTERNAL = -5,    /* a bug or an impossible state */
    RD_ERR_NOMEM = -6,       /* allocation failed */
    RD_ERR_DEADLINE = -7,    /* the caller's deadline passed */
    RD_ERR_CONFIG = -8       /* a configuration file is invalid */
} rd_err;

#define RD_STATUS_MSG_MAX 512

typedef struct rd_status {
    rd_err code;
    /* What the answers of store operations rested on (domain/store.h). A
     * store sets them and never clears store_degraded, so the status of a
     * call says whether any of its operations was answered degraded. */
    bool store_local;            /* a backend answered from its own cache or batch */
    bool store_degraded;         /* the degraded-mode fallback answered */
    /* With RD_ERR_UNAVAILABLE from a store: only part of the shared store
     * (the keys of one failing node) is out, the rest still answers. */
    bool store_partial;
    char msg[RD_STATUS_MSG_MAX];
} rd_status;

/* An empty status (RD_OK, no message), set without writing all of msg:
 * the transport starts one on every call. */
static inline void rd_status_clear(rd_status *st)
{
    st->code = RD_OK;
    st->store_local = false;
    st->store_degraded = false;
    st->store_partial = false;
    st->msg[0] = '\0';
}

/* Sets st->code and formats st->msg; returns code so callers can write
 * `return rd_status_set(st, RD_ERR_INVALID, "attempt: ...")`. st may be NULL. */
int rd_status_set(rd_status *st, rd_err code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

const char *rd_err_name(rd_err code);

#endif
