/* Error classification: one entrance for every error an executor reports.
 *
 * Order (000 section 1.3, 004 decision E; docs/CLASSIFICATION.md):
 *   1. the structured pass, in file order, first match wins: rules without
 *      message patterns over kind, grpc_code, http_status, code,
 *      exception_type (the message is not read), and mixed rules that add
 *      message patterns to such conditions (the patterns are looked for
 *      only once the structured conditions hold, so text refines a status);
 *   2. otherwise message-pattern rules, in file order, first match wins;
 *   3. otherwise generic.* rules (generic exception types), in file order;
 *   4. otherwise the message's words, when the rules file counts words and
 *      they say one retryability clearly enough (domain/words.h), else
 *      when the words the rules file weighs make one retryability likely
 *      enough: that retryability and the category they name, unknown
 *      when none (domain/word_weights.h);
 *   5. otherwise the rules file's unknown default (TRANSIENT unless set);
 *   6. then the tool manifest's overrides, first match wins.
 * A rule marked retryability_from_words (steps 1-3) takes the other
 * retryability when its message's words make that one likely and name
 * its category (domain/word_weights.h), with that category's suggestion;
 * a rule marked category_from_words takes the category the words name
 * clearly for its own retryability; otherwise the rule's answer stands.
 * A loaded ruleset carries a compiled matcher (domain/matcher.h): one pass
 * over the message finds every pattern. Hand-built rulesets without one
 * are evaluated rule by rule, with the same result.
 * The result says which rule decided (rule_id) and whether an override
 * applied. A retry hint is read from the text only when the answer is
 * transient. Pure: no state, no allocation, safe on any bytes. */
#ifndef RD_DOMAIN_CLASSIFY_H
#define RD_DOMAIN_CLASSIFY_H

#include "domain/model.h"
#include "domain/types.h"

/* tool may be NULL (no manifest). Strings in *out borrow from rules/tool. */
void rd_classify(const rd_ruleset *rules, const rd_tool_config *tool, const char *tool_id,
                 const rd_tool_error *err, rd_classification *out);

/* The tier a rule id names (the rules file names every rule by its tier;
 * docs/CLASSIFICATION.md, "Confidence"; rd_tier in domain/types.h):
 *   STRUCTURED  code., http., grpc., errno., db., jsonrpc., mcp., tls., kind.
 *   EXCEPTION   exception.
 *   MESSAGE     text.
 *   GENERIC     generic.
 *   LEARNED     learned:<hash> (engine/classification.c)
 *   WORDS       words (domain/words.h)
 *   DEFAULT     "unknown", "unspecified", "" and NULL
 * rd_classify fills decided_by from the compiled matcher's table of it, so
 * no rule id is compared per call. */
rd_tier rd_rule_tier(const char *rule_id);
const char *rd_tier_name(rd_tier t); /* "structured", "exception", ... */

/* Whether a rule's conditions hold for this error and tool (exposed for
 * the override step and for tests). */
bool rd_match_error(const rd_match *m, const char *tool_id, const rd_tool_error *err);

/* A retry hint found in text ("try again in 1.8s", "Retry-After: 30",
 * "retry after 20 seconds", "try again in 5m"), in ms, capped at one hour;
 * 0 when there is none. */
int64_t rd_retry_hint_from_text(const char *msg, size_t len);

/* The kind's fixed meaning: did the tool actually run? (004 decision A) */
bool rd_kind_executed(rd_error_kind kind);
const char *rd_kind_name(rd_error_kind kind);         /* "timeout", ... ; "" for UNSPECIFIED */
const char *rd_category_name(rd_category c);          /* "input_validation", ... */
const char *rd_retryability_name(rd_retryability r);  /* "transient" / "permanent" */
rd_text rd_retryability_text(rd_retryability r);      /* the same, with its length */

/* How the "Tool Execution Failed" text ends (refusal.c replaces it when an
 * alternative is offered). */
#define RD_LLM_TAIL "\n\nThe tool failed and cannot be used for this request."

/* The "Tool Execution Failed" text for the model (001), written into buf
 * (always NUL-terminated, truncated to cap). Returns the length written. */
size_t rd_llm_message(char *buf, size_t cap, const char *tool_id, const char *error_type,
                      const char *message, size_t message_len);

/* The same text for pieces known to be valid UTF-8 without NULs (the
 * transport checked them) and already measured: when it fits, nothing
 * needs checking. */
size_t rd_llm_message_valid(char *buf, size_t cap, rd_text tool, rd_text type,
                            const char *message, size_t message_len);

#endif
