/* Scoped breakers (docs/SCOPES.md): a call's scope is a few labelled
 * dimensions (provider, model, credential, ...); a tool whose manifest
 * names a breaker_scope keeps one breaker per key of those dimensions, so
 * one credential's rate limit opens that credential's breaker, not the
 * provider's, and not the tool's.
 *
 * A key is "<tool>|<dim>=<value>|<dim>=<value>...", the manifest's
 * dimensions in order, broadest first, up to the level; the level's
 * parents are the shorter keys, the tool's own breaker ("<tool>") first.
 * The stores keep a key as they keep a tool id, so a scoped breaker has
 * every guarantee of a tool's (atomic transitions, one probe across
 * replicas, the make-room bound). Pure: no state; keys go into the
 * caller's buffer. */
#ifndef RD_DOMAIN_SCOPE_H
#define RD_DOMAIN_SCOPE_H

#include <stdbool.h>
#include <stddef.h>

#include "domain/err.h"
#include "domain/model.h"

#define RD_SCOPE_LABELS_MAX 8
#define RD_SCOPE_DIMENSION_MAX 32
#define RD_SCOPE_VALUE_MAX 64
#define RD_SCOPE_DIMENSIONS_MAX 4   /* in a manifest's breaker_scope */

typedef struct rd_scope_label {
    const char *dimension;
    const char *value;
} rd_scope_label;

/* Whether s is a dimension name: 1..RD_SCOPE_DIMENSION_MAX of [a-z0-9_]. */
bool rd_scope_dimension_ok(const char *s);

/* Checks a request's labels (field: "scope"); RD_ERR_INVALID with the
 * field named ("scope[1].value: longer than 64 bytes"). */
int rd_scope_check(const rd_scope_label *labels, size_t n, rd_status *st);

/* The level a failure counts at: the first rule whose conditions hold,
 * else the default. */
int rd_scope_level_of(const rd_breaker_scope *bs, const char *tool_id, const rd_tool_error *err);

/* How many levels of bs the labels reach: the manifest's dimensions, in
 * order, as long as the request names each (a request without the
 * credential label has no credential breaker). */
size_t rd_scope_depth(const rd_breaker_scope *bs, const rd_scope_label *labels, size_t n);

/* The key of `level` (an index below rd_scope_depth, or
 * RD_SCOPE_LEVEL_TOOL) into buf[RD_ID_MAX + 1]; false when it is longer
 * than RD_ID_MAX. */
bool rd_scope_key(char *buf, const char *tool_id, const rd_breaker_scope *bs,
                  const rd_scope_label *labels, size_t n, int level);

/* The dimension a key ends at ("" for a tool's own breaker), as a pointer
 * into key and its length. */
const char *rd_scope_level_name(const char *key, size_t *len);

/* The policy of a breaker key: its tool's manifest, or the defaults. */
const rd_tool_config *rd_policy_tool_of_key(const rd_policy *p, const char *key);

#endif
