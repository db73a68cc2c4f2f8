/* How recoveryctl shows answers: aligned tables and key/value lines for
 * people, JSON (jansson) for scripts. Enum values are shown as their proto
 * names without the type prefix, lower-cased ("open", "transient").
 *
 * Ownership: json_t results are new references the caller decrefs; strings
 * from ctl_enum_name and ctl_time live in rotating static buffers and are
 * valid until eight further calls. */
#ifndef RECOVERYCTL_OUTPUT_H
#define RECOVERYCTL_OUTPUT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#include "recovery/v1/admin.pb-c.h"
#include "recovery/v1/recovery.pb-c.h"

/* "open" for BREAKER_STATUS_OPEN; "" for the UNSPECIFIED value. */
const char *ctl_enum_name(const ProtobufCEnumDescriptor *d, int value);
/* Accepts "timeout", "TIMEOUT", "ERROR_KIND_TIMEOUT", "execution-error" or
 * the number; false when nothing matches. */
bool ctl_enum_parse(const ProtobufCEnumDescriptor *d, const char *text, int *value);
/* Unix ms as RFC 3339 UTC with milliseconds; "-" for 0. */
const char *ctl_time(int64_t unix_ms);

/* ---- tables ---- */

#define CTL_TABLE_MAX_COLUMNS 16
typedef struct ctl_table ctl_table;
/* NULL when out of memory or n_columns is 0 or above the maximum. */
ctl_table *ctl_table_new(size_t n_columns, const char *const *headers);
/* Adds a row of n_columns cells (copied). */
void ctl_table_add(ctl_table *t, const char *const *cells);
void ctl_table_print(const ctl_table *t, FILE *out);
void ctl_table_free(ctl_table *t);

/* ---- breakers ---- */

json_t *ctl_breaker_json(const Recovery__V1__BreakerState *b);
ctl_table *ctl_breaker_table(void);
void ctl_breaker_row(ctl_table *t, const Recovery__V1__BreakerState *b);
/* One line for the watch stream. */
void ctl_breaker_change_line(const Recovery__V1__BreakerChange *c, FILE *out);
json_t *ctl_breaker_change_json(const Recovery__V1__BreakerChange *c);

/* ---- classification and traces ---- */

json_t *ctl_classification_json(const Recovery__V1__Classification *c);
void ctl_classification_print(const Recovery__V1__Classification *c, FILE *out);
json_t *ctl_trace_json(const Recovery__V1__GetTurnTraceResponse *r);
void ctl_trace_print(const Recovery__V1__GetTurnTraceResponse *r, FILE *out);

/* Prints a JSON value on one line (compact) or indented, then a newline. */
void ctl_json_print(json_t *v, bool compact, FILE *out);

#endif
