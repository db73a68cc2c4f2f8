/* Trace events and the turn summary (000 section 8.2, 004 decision B). */
#ifndef RD_DOMAIN_TRACE_H
#define RD_DOMAIN_TRACE_H

#include "domain/arena.h"
#include "domain/types.h"

const char *rd_event_type_name(rd_event_type t); /* "ToolError", "CircuitOpened", ... */
const char *rd_action_name(rd_action a);         /* "retry", "fail_fast", ... */
rd_text rd_event_type_text(rd_event_type t);     /* the same names with their lengths */
rd_text rd_action_text(rd_action a);

/* Copies src into a fixed buffer, truncating on a UTF-8 boundary and
 * replacing NUL bytes, so stored text is always valid for the wire.
 * Returns the length copied (both copies). */
size_t rd_trace_copy_text(char *dst, size_t cap, const char *src, size_t len);

/* The same copy for src[0..len) known to be valid UTF-8 without NULs (the
 * transport checked it): no byte needs replacing, so only a cut that would
 * split a character is looked at. */
size_t rd_trace_copy_valid(char *dst, size_t cap, const char *src, size_t len);

/* Length of the well-formed UTF-8 sequence at s (RFC 3629: no overlongs,
 * no surrogates, nothing above U+10FFFF; avail bytes readable), or 0 when
 * the byte at s does not start one. NUL counts as ill-formed. */
size_t rd_utf8_char_len(const unsigned char *s, size_t avail);

/* Length of the longest prefix of s[0..len) that is well-formed UTF-8
 * without NULs (len when all of it is). */
size_t rd_utf8_valid_len(const char *s, size_t len);

/* The one rule for caller text that must become valid UTF-8 without NULs
 * (trace text, the text for the model): src[0..len) is written to dst,
 * at most `room` bytes and no terminator, with each NUL or ill-formed byte
 * replaced by repl[0..repl_len). Stops at the first character or
 * replacement that does not fit whole. Returns the bytes written;
 * *used receives how many bytes of src were consumed (len when all). */
size_t rd_utf8_sanitize(char *dst, size_t room, const char *src, size_t len, const char *repl,
                        size_t repl_len, size_t *used);

/* "2025-11-05T10:30:45.123Z" into buf (at least 32 bytes); returns its
 * length. */
size_t rd_format_rfc3339(char *buf, size_t cap, int64_t unix_ms);

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
