/* Side effects of a tool, and whether another call of it could repeat one
 * (docs/EFFECTS.md).
 *
 * A tool declares what a call does to the world (manifest `effects`; else
 * the MCP annotations the executor sends with the error). For a
 * non-idempotent tool a failure is judged by what it proves: an error that
 * shows the tool never ran (a not-executed kind, a connection that was
 * never made, a request the server refused up front) may be retried; one
 * that leaves the effect unknown (a timeout, a connection reset after the
 * request was sent, a 5xx after the server accepted it) may not, unless the
 * tool honours an idempotency key and the executor sent one. Undeclared
 * effects are judged as before effects existed: nothing changes.
 * Pure: no state, no allocation; every text returned is static. */
#ifndef RD_DOMAIN_EFFECTS_H
#define RD_DOMAIN_EFFECTS_H

#include <stdbool.h>

#include "domain/types.h"

/* The effects that count: the manifest's when it declares them, else the
 * ones the hints imply (readOnlyHint true: none; idempotentHint true:
 * idempotent; idempotentHint false, or destructiveHint true with nothing
 * said of idempotence: non-idempotent), else UNSPECIFIED. err may be NULL. */
rd_effects rd_effects_resolve(rd_effects manifest, const rd_tool_error *err);

/* What a failure means for another call. */
typedef struct rd_effect_verdict {
    rd_effects effects;
    rd_effect_safety safety;
    const char *reason;          /* static; NULL when effects are undeclared */
} rd_effect_verdict;

/* Judges err (classified as c) for a tool of `effects` (resolved).
 * key_mode: the manifest says `idempotency: key`; has_key: the executor
 * sent an idempotency key. */
rd_effect_verdict rd_effect_judge(rd_effects effects, bool key_mode, bool has_key,
                                  const rd_tool_error *err, const rd_classification *c);

/* Whether the verdict forbids calling the tool (or an alternative doing the
 * same) again before the effect is known. */
static inline bool rd_effect_forbids_repeat(rd_effect_safety s)
{
    return s == RD_EFFECT_SAFETY_UNKNOWN;
}

const char *rd_effects_name(rd_effects e);           /* "none", "idempotent", ... ; "" */
const char *rd_effect_safety_name(rd_effect_safety s); /* "not_executed", ... ; "" */

#endif
