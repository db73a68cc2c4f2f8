/* The exception type a message names in its own text: Python's traceback
 * ends "KeyError: 'x'", Java's "java.net.SocketException: ...", Node's
 * "RangeError: ...". rd_classify reads it as the exception type when the
 * error carries none and no rule decided on the rest (docs/CLASSIFICATION.md,
 * "Evaluation order"). */
#ifndef RD_DOMAIN_TYPE_IN_TEXT_H
#define RD_DOMAIN_TYPE_IN_TEXT_H

#include <stdbool.h>
#include <stddef.h>

/* Longest name copied, with its NUL; a longer token is not taken. */
#define RD_TYPE_IN_TEXT_MAX 128

/* Looks at the start of the message and at the start of its last line that
 * is not blank (a traceback's verdict), in that order. A name is a dotted
 * identifier ([A-Za-z_$][A-Za-z0-9_.$]*) whose last part ends in "Error" or
 * "Exception", followed by ':', '[', '(' or the end of the line. Copies it,
 * NUL-terminated, into out (cap >= RD_TYPE_IN_TEXT_MAX) and returns true;
 * false when neither place names one. Reads no byte past msg[len - 1]. */
bool rd_type_named_in_text(const char *msg, size_t len, char *out, size_t cap);

#endif
