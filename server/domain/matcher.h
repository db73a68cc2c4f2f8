/* The compiled form of a rules file, built once at load time so that
 * rd_classify does the least work per call.
 *
 * Two parts:
 *   - an Aho-Corasick automaton over every message pattern of every rule
 *     (ASCII-folded bytes), so one pass over a message finds every pattern
 *     occurrence, whatever the number of rules; token boundaries ("\b",
 *     numbers) are checked on each hit;
 *   - a summary of each rule's non-message conditions (which fields it
 *     needs, codes and exception types in sorted lower-case tables), so the
 *     structured pass skips rules by a bit test and finds codes by binary
 *     search instead of comparing strings rule by rule.
 *
 * Evaluation order (the rules file's header and docs/CLASSIFICATION.md say
 * the same):
 *   1. the structured pass, in file order: rules without message patterns,
 *      and "mixed" rules that have a structured condition (http_status,
 *      grpc_code, code, exception_type, kind) AND message patterns; a mixed
 *      rule's patterns are only looked for once its structured conditions
 *      hold, so a message refines a structured signal, and an error that a
 *      pure structured rule settles is decided without reading its text;
 *   2. otherwise the message pass: rules with patterns and no structured
 *      condition (tool and source may still qualify them), in file order;
 *   3. otherwise the generic pass: rules whose id starts with "generic."
 *      (structured rules on exception types that runtimes raise for any
 *      cause: TypeError, ValueError, RuntimeError, ...), in file order, so
 *      a generic type never outranks a message that says what happened;
 *   the first rule that holds wins in each pass.
 *
 * Ownership: rd_matcher_build allocates; rd_matcher_free(NULL) is a no-op.
 * A matcher refers to its ruleset's rules by index and reads their
 * condition lists at classification time, so it is only valid with the
 * ruleset it was built from and must be freed before or with it. A built
 * matcher is never modified: any number of threads may use it at once. */
#ifndef RD_DOMAIN_MATCHER_H
#define RD_DOMAIN_MATCHER_H

#include <stdbool.h>
#include <stddef.h>

#include "domain/model.h"
#include "domain/types.h"

typedef struct rd_matcher rd_matcher;

/* A rule is evaluated in the structured pass when it has no message
 * patterns, or when it has a structured condition besides its patterns.
 * tool and source only qualify a rule; they do not make it structured. */
bool rd_match_is_structured(const rd_match *m);

/* Rules whose id starts with RD_GENERIC_PREFIX are read after the message
 * pass (step 3 above). The loader requires them to have no patterns. */
#define RD_GENERIC_PREFIX "generic."
bool rd_rule_is_generic(const rd_rule *r);

/* The weak-word groups, the last rules of the message pass: their ids
 * start with RD_WEAK_PREFIX. A specific exception type the text names
 * outranks them (domain/classify.c). */
#define RD_WEAK_PREFIX "text.weak_"
bool rd_rule_is_weak(const rd_rule *r);

/* Every condition of m except `message` (string compares; the reference
 * that the compiled path must agree with). */
bool rd_match_fields_hold(const rd_match *m, const char *tool_id, const rd_tool_error *err);

/* Compiles rs. RD_OK, or RD_ERR_NOMEM (out of memory) / RD_ERR_EXHAUSTED
 * (the automaton would not fit 32-bit state offsets), leaving *out NULL. */
int rd_matcher_build(const rd_ruleset *rs, rd_matcher **out);
void rd_matcher_free(rd_matcher *m);

/* The rule that decides err, or NULL when none does (then `unknown`).
 * rs must be the ruleset m was built from. No allocation. */
const rd_rule *rd_matcher_winner(const rd_matcher *m, const rd_ruleset *rs, const char *tool_id,
                                 const rd_tool_error *err);

/* The structured pass alone (structured rules, and mixed rules whose
 * fields hold, the text read only for those): the rule it decides, or
 * NULL. rs must be the ruleset m was built from. No allocation. */
const rd_rule *rd_matcher_structured_winner(const rd_matcher *m, const rd_ruleset *rs,
                                            const char *tool_id, const rd_tool_error *err);

/* The tier rule number `rule` of the ruleset names (rd_rule_tier of its
 * id, read once at build time); RD_TIER_DEFAULT past the last rule. */
rd_tier rd_matcher_rule_tier(const rd_matcher *m, size_t rule);

/* One pass of the automaton over msg[0..len) (any bytes, NULs included).
 * For every pattern occurrence whose boundaries hold, visit() is called
 * with each rule using that pattern, in ascending rule order, while the
 * rule index is below `bound`; visit returns the new bound (return it
 * unchanged to see everything). Exposed for tests. */
typedef size_t (*rd_matcher_visit)(void *ctx, size_t rule);
void rd_matcher_scan(const rd_matcher *m, const char *msg, size_t len, size_t bound,
                     rd_matcher_visit visit, void *ctx);

/* Sizes, for tests and the benchmark's report. */
size_t rd_matcher_pattern_count(const rd_matcher *m); /* distinct patterns */
size_t rd_matcher_state_count(const rd_matcher *m);

#endif
