/* Classify, and the classification of a failed call: the rules, the
 * manifest's overrides, learning, and the text for the model. */
#include "engine/engine_internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- classification ---- */

static const char *error_type_name(const rd_tool_error *err, const rd_classification *c)
{
    if (err->exception_type && err->exception_type[0])
        return err->exception_type;
    const char *kind = rd_kind_name(c->kind);
    if (kind && kind[0])
        return kind;
    return rd_category_name(c->category);
}

/* The "Tool Execution Failed" text (001), with a long error message cut to
 * its head and tail (RD_LLM_ERROR_HEAD/TAIL), sized so the whole text fits:
 * rd_llm_message writes valid UTF-8 and spends up to 3 bytes (U+FFFD) on
 * each invalid input byte. */
#define LLM_MESSAGE_FRAME 128 /* the fixed lines around the three fields */

static const char *llm_message_for(rd_text tool, const rd_tool_error *err,
                                   const rd_classification *c, const rd_call_ctx *ctx,
                                   size_t *len)
{
    const char *type_name = error_type_name(err, c);
    rd_text type = {type_name, strlen(type_name)};
    size_t message_len = 0;
    const char *message = err->message ? rd_text_cut(ctx->arena, err->message, err->message_len,
                                                     RD_LLM_ERROR_HEAD, RD_LLM_ERROR_TAIL,
                                                     &message_len)
                                       : "";
    if (!message)
        return NULL;
    size_t cap = 3 * (message_len + tool.len + type.len) + LLM_MESSAGE_FRAME;
    char *text = rd_arena_alloc_uninit(ctx->arena, cap); /* terminated by the writer */
    if (!text)
        return NULL;
    if (ctx->text_checked)
        *len = rd_llm_message_valid(text, cap, tool, type, message, message_len);
    else
        *len = rd_llm_message(text, cap, tool.s, type.s, message, message_len);
    return text;
}

/* Learning (docs/FLEET.md): an error no rule knows, whose signature has
 * enough settled retries behind it, is classified from that record. */
static int apply_learning(const rd_engine *e, const char *tool_id, const rd_signature *sig,
                          int64_t now_ms, rd_arena *a, rd_classification *c, rd_status *st)
{
    rd_learn_stats stats;
    int rc = e->store->ops->learn_stats(e->store, tool_id, sig->id, now_ms, &stats, st);
    if (rc != RD_OK)
        return rc;
    rd_retryability verdict =
        rd_learned_retryability(&e->policy->learning, stats.successes, stats.failures);
    if (verdict == RD_RETRYABILITY_UNSPECIFIED)
        return RD_OK;
    const char *rule_id = rd_arena_printf(a, "learned:%s", sig->id);
    const char *suggestion = rd_arena_printf(
        a, "Learned from %llu earlier retries of this error (%llu succeeded): %s",
        (unsigned long long)(stats.successes + stats.failures),
        (unsigned long long)stats.successes,
        verdict == RD_TRANSIENT ? "retrying usually works" : "retrying rarely works");
    if (!rule_id || !suggestion)
        return rd_status_set(st, RD_ERR_NOMEM, "classification: out of memory");
    c->retryability = verdict;
    c->rule_id = rule_id;
    c->decided_by = RD_TIER_LEARNED;
    c->suggestion = suggestion;
    c->retry_after_ms = verdict == RD_TRANSIENT ? c->retry_after_ms : 0;
    return RD_OK;
}

/* Whether learning looks at this classification: an error no rule (and
 * no override) decided, answered by the default or by its words alone;
 * what this error's retries did outweighs what its words suggest. */
static bool learnable(const rd_engine *e, const rd_classification *c)
{
    return e->policy->learning.enabled && !c->overridden &&
           (strcmp(c->rule_id, "unknown") == 0 || c->decided_by == RD_TIER_WORDS);
}

/* The tool's manifest, or NULL, from its settings (a manifest's own or the
 * defaults): the caller has looked the tool up once already. */
const rd_tool_config *eng_manifest_of(const rd_engine *e, const rd_tool_config *settings)
{
    return settings == &e->policy->defaults ? NULL : settings;
}

/* Classifies err (manifest: the tool's, or NULL) into *c; *sig (when not
 * NULL) receives the error's signature and *tracked whether learning
 * follows it. A long message is read as its head and tail
 * (RD_CLASSIFY_HEAD/TAIL): the cost stays bounded whatever the request
 * size, and a traceback's cause, on its last lines, is still read. */
int eng_classify_error(const rd_engine *e, const rd_tool_config *manifest, const char *tool_id,
                       const rd_tool_error *err, const rd_call_ctx *ctx, rd_classification *c,
                       rd_signature *sig, bool *tracked, rd_status *st)
{
    rd_tool_error bounded;
    if (err->message &&
        rd_text_needs_cut(err->message_len, RD_CLASSIFY_HEAD, RD_CLASSIFY_TAIL)) {
        bounded = *err;
        bounded.message = rd_text_cut(ctx->arena, err->message, err->message_len,
                                      RD_CLASSIFY_HEAD, RD_CLASSIFY_TAIL, &bounded.message_len);
        if (!bounded.message)
            return rd_status_set(st, RD_ERR_NOMEM, "classification: out of memory");
        err = &bounded;
    }
    rd_classify(&e->policy->rules, manifest, tool_id, err, c);
    bool learn = learnable(e, c);
    if (tracked)
        *tracked = learn && sig;
    if (!learn)
        return RD_OK;
    rd_signature own;
    rd_signature *s = sig ? sig : &own;
    rd_signature_of(tool_id, err->message, err->message ? err->message_len : 0, s);
    return apply_learning(e, tool_id, s, ctx->now_ms, ctx->arena, c, st);
}

/* The text for the model beside a classification the caller answers with
 * (RecordOutcome keeps only the classification, so it never writes one). */
int eng_add_llm_message(rd_text tool, const rd_tool_error *err, const rd_call_ctx *ctx,
                        rd_classify_result *out, rd_status *st)
{
    out->llm_message =
        llm_message_for(tool, err, &out->classification, ctx, &out->llm_message_len);
    if (!out->llm_message)
        return rd_status_set(st, RD_ERR_NOMEM, "llm_message: out of memory");
    return RD_OK;
}

/* A failure reported without any error detail. */
void eng_unspecified_failure(const rd_policy *cfg, rd_classification *c)
{
    const char *suggestion = cfg->rules.category_suggestion[RD_CAT_UNKNOWN];
    *c = (rd_classification){
        .retryability = RD_TRANSIENT,
        .category = RD_CAT_UNKNOWN,
        .kind = RD_KIND_UNSPECIFIED,
        .executed = rd_kind_executed(RD_KIND_UNSPECIFIED),
        .suggestion = eng_safe_str(suggestion),
        .rule_id = "unspecified",
        .decided_by = RD_TIER_DEFAULT,
    };
}

int rd_engine_classify(const rd_engine *e, const char *tool_id, const rd_tool_error *err,
                       const rd_call_ctx *ctx, rd_classify_result *out, rd_status *st)
{
    rd_text tool = {tool_id, 0};
    int rc = eng_check_tool(e, tool_id, &tool.len, st);
    if (rc != RD_OK)
        return rc;
    if (!err)
        return rd_status_set(st, RD_ERR_INVALID, "error: required");
    const rd_tool_config *manifest = rd_policy_find_tool(e->policy, tool_id);
    rc = eng_classify_error(e, manifest, tool_id, err, ctx, &out->classification, NULL, NULL,
                            st);
    if (rc != RD_OK)
        return rc;
    const rd_tool_config *settings = manifest ? manifest : &e->policy->defaults;
    if (eng_effects_declared(settings, err))
        eng_effect_classify(settings, err, false, &out->classification);
    return eng_add_llm_message(tool, err, ctx, out, st);
}
