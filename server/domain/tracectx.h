/* W3C Trace Context (https://www.w3.org/TR/trace-context/): the caller's
 * trace as its `traceparent` and `tracestate` request headers carry it.
 *
 * Parsing never fails loudly: a header that breaks the specification is
 * ignored (a call without trace context is handled as before), as the
 * specification asks of a receiver. Both parsers read at most their bounded
 * lengths and write only into the struct. Plain C, no allocation. */
#ifndef RD_DOMAIN_TRACECTX_H
#define RD_DOMAIN_TRACECTX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "domain/types.h"

/* The tracestate kept: the specification's 32 members, and the 512
 * characters it asks a receiver to propagate at least. Members past that
 * are dropped whole, from the end. */
#define RD_TRACESTATE_MAX 512
#define RD_TRACESTATE_MEMBERS_MAX 32
/* The longest traceparent looked at: a later version may append fields,
 * but nothing the specification knows is longer than this. */
#define RD_TRACEPARENT_MAX 512

typedef struct rd_trace_ctx {
    bool valid;                              /* a traceparent was accepted */
    char trace_id[RD_TRACE_ID_HEX + 1];      /* 32 lower-case hex digits */
    char span_id[RD_SPAN_ID_HEX + 1];        /* the caller's span (parent-id) */
    uint8_t flags;                           /* trace-flags; bit 0 = sampled */
    char state[RD_TRACESTATE_MAX + 1];       /* "" when none or invalid */
    size_t state_len;
    bool state_discarded;                    /* a header broke the grammar: none kept */
} rd_trace_ctx;

/* Parses one traceparent value into out's ids and flags (valid = true), or
 * leaves out untouched and returns false. */
bool rd_traceparent_parse(const char *s, size_t len, rd_trace_ctx *out);

/* Appends one tracestate header value to out->state (several headers are
 * one list, joined by commas). false, with out->state emptied, when the
 * value breaks the grammar: the whole tracestate is then discarded. */
bool rd_tracestate_append(rd_trace_ctx *out, const char *s, size_t len);

#endif
