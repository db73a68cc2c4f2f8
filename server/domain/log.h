/* Structured logs: one JSON object per line on stdout.
 *   {"ts":"2026-11-21T22:45:03.120Z","level":"info","msg":"listening","addr":"0.0.0.0:50051"}
 * Extra fields come as a pre-formatted JSON fragment (rd_log_kv builds one
 * with escaping). Lines are written with one write() so concurrent threads
 * never interleave inside a line.
 *
 * Every line is valid JSON whatever the input: control characters are
 * escaped, bytes that are not UTF-8 become U+FFFD, and a value too long for
 * its room is cut between two characters (never inside an escape) and ends
 * with RD_LOG_CUT. A field that cannot fit at all is left out; a line too
 * long for its fields keeps msg and says "truncated":true. */
#ifndef RD_DOMAIN_LOG_H
#define RD_DOMAIN_LOG_H

#include <stdbool.h>
#include <stddef.h>

#define RD_LOG_CUT "...[truncated]"
#define RD_LOG_VALUE_MAX 1024   /* escaped bytes of one field's value */
#define RD_LOG_LINE_MAX 4096

typedef enum { RD_LOG_DEBUG = 0, RD_LOG_INFO, RD_LOG_WARN, RD_LOG_ERROR } rd_log_level;

void rd_log_set_level(rd_log_level min);
/* Whether a line at `level` would be written: lets callers skip building
 * fields for a level that is off (hot paths log trace events at debug). */
bool rd_log_enabled(rd_log_level level);
/* msg is escaped; fields_json is either "" or `"k":v,...` already escaped. */
void rd_log(rd_log_level level, const char *msg, const char *fields_json);
/* Appends `"key":"value"` (escaped, comma-separated) to buf, whole or cut
 * with RD_LOG_CUT to the room left (never past cap). */
void rd_log_kv(char *buf, size_t cap, const char *key, const char *value);

#endif
