/* The text for the model when a tool is not called, and when a failed tool
 * is replaced by an alternative.
 *
 * An executor hands llm_message to the model whenever it stops using a
 * tool. An admission that refuses the call (circuit open, turn deadline, a
 * dependency that failed) has no error to classify, yet the model still
 * needs to hear why the tool gave no result; and a failure answered with
 * USE_ALTERNATIVE must not tell it the request cannot be served. */
#ifndef RD_ENGINE_REFUSAL_H
#define RD_ENGINE_REFUSAL_H

#include <stddef.h>

#include "domain/arena.h"
#include "domain/types.h"

/* "Tool Not Called\nTool: <tool>\nReason: <reason>\n\n<what follows>" in
 * the arena, for an admission answered with `action` (FAIL_FAST, PARTIAL,
 * ESCALATE or USE_ALTERNATIVE to `alternative`). tool and reason are
 * valid UTF-8 without control characters (checked ids, engine texts).
 * *len receives the length; NULL when out of memory. */
const char *rd_refusal_message(rd_arena *a, const char *tool, rd_action action,
                               const char *reason, const char *alternative, size_t *len);

/* text (a "Tool Execution Failed" message) with its closing sentence
 * replaced by one naming the alternative the executor calls instead. text
 * itself when it does not end with that sentence; NULL when out of memory. */
const char *rd_alternative_message(rd_arena *a, const char *text, size_t text_len,
                                   const char *alternative, size_t *len);

#endif
