/* Trace events and the turn summary (000 section 8.2, 004 decision B). */
#ifndef RD_CORE_TRACE_H
#define RD_CORE_TRACE_H

#include "core/arena.h"
#include "core/types.h"

const char *rd_event_type_name(rd_event_type t); /* "ToolError", "CircuitOpened", ... */
const char *rd_action_name(rd_action a);         /* "retry", "fail_fast", ... */

/* Copies src into a fixed buffer, truncating on a UTF-8 boundary and
 * replacing NUL bytes, so stored text is always valid for the wire. */
void rd_trace_copy_text(char *dst, size_t cap, const char *src, size_t len);

/* "2025-11-05T10:30:45.123Z" into buf (at least 32 bytes). */
void rd_format_rfc3339(char *buf, size_t cap, int64_t unix_ms);

typedef struct rd_turn_summary {
    const char **completed; size_t n_completed;
    const char **failed;    size_t n_failed;
    const char **timed_out; size_t n_timed_out;
    const char **skipped;   size_t n_skipped;
    const char *partial_result; /* "Completed flight search, but hotel search timed out" */
    bool turn_failed;           /* true only when no tool was executed */
} rd_turn_summary;

/* Each tool's last word decides its bucket. Strings point into events or
 * the arena. */
int rd_turn_summarize(const rd_trace_event *events, size_t n, rd_arena *arena,
                      rd_turn_summary *out);

#endif
