#include "domain/err.h"

#include <stdio.h>

int rd_status_set(rd_status *st, rd_err code, const char *fmt, ...)
{
    if (st) {
        va_list ap;
        va_start(ap, fmt);
        st->code = code;
        vsnprintf(st->msg, sizeof st->msg, fmt, ap);
        va_end(ap);
    }
    return code;
}

const char *rd_err_name(rd_err code)
{
    switch (code) {
    case RD_OK: return "ok";
    case RD_ERR_INVALID: return "invalid";
    case RD_ERR_NOT_FOUND: return "not_found";
    case RD_ERR_EXHAUSTED: return "exhausted";
    case RD_ERR_UNAVAILABLE: return "unavailable";
    case RD_ERR_INTERNAL: return "internal";
    case RD_ERR_NOMEM: return "nomem";
    case RD_ERR_DEADLINE: return "deadline";
    case RD_ERR_CONFIG: return "config";
    }
    return "unknown";
}
