/* Scoped breakers in Decide and RecordOutcome (domain/scope.h,
 * docs/SCOPES.md): which key a failure counts against, admission through
 * a key's parents, and a success counted at every level. The store keeps a
 * key as a tool id, so every breaker guarantee holds per key. */
#include "engine/engine_internal.h"

#include <string.h>

/* The key of `level`, in the arena; NULL with *st set when it does not fit. */
static const char *key_of(rd_arena *a, const char *tool_id, const rd_breaker_scope *bs,
                          const rd_scope_label *labels, size_t n, int level, rd_status *st)
{
    char buf[RD_ID_MAX + 1];
    if (!rd_scope_key(buf, tool_id, bs, labels, n, level)) {
        rd_status_set(st, RD_ERR_INVALID,
                      "scope: the breaker key of tool_id and its scope is longer than %d bytes",
                      RD_ID_MAX);
        return NULL;
    }
    const char *key = rd_arena_strdup(a, buf);
    if (!key)
        rd_status_set(st, RD_ERR_NOMEM, "scope: out of memory");
    return key;
}

/* The level a failure counts at, bounded by how deep the labels reach
 * (a request without the credential label counts a credential failure at
 * the deepest level it names). */
static int failure_level(const rd_tool_config *cfg, const char *tool_id,
                         const rd_tool_error *err, const rd_scope_label *labels, size_t n)
{
    int level = rd_scope_level_of(&cfg->scope, tool_id, err);
    int deepest = (int)rd_scope_depth(&cfg->scope, labels, n) - 1;
    if (level >= 0 && level > deepest)
        level = deepest >= 0 ? deepest : RD_SCOPE_LEVEL_TOOL;
    return level;
}

int eng_scope_failure_key(decide_call *c)
{
    const rd_decide_input *in = c->in;
    int level = failure_level(c->cfg, in->tool_id, in->error, in->scope, in->n_scope);
    if (level == RD_SCOPE_LEVEL_NONE) {
        c->breaker_untouched = true;
        level = (int)rd_scope_depth(&c->cfg->scope, in->scope, in->n_scope) - 1;
    }
    const char *key = key_of(c->ctx->arena, in->tool_id, &c->cfg->scope, in->scope, in->n_scope,
                             level, c->st);
    if (!key)
        return c->st->code;
    c->breaker_key = key;
    c->scope_level = level;
    return RD_OK;
}

int eng_scope_parent_open(decide_call *c, bool *open)
{
    const rd_decide_input *in = c->in;
    *open = false;
    for (int level = RD_SCOPE_LEVEL_TOOL; level < c->scope_level; level++) {
        const char *key = level == RD_SCOPE_LEVEL_TOOL
                              ? in->tool_id
                              : key_of(c->ctx->arena, in->tool_id, &c->cfg->scope, in->scope,
                                       in->n_scope, level, c->st);
        if (!key)
            return c->st->code;
        rd_breaker b;
        bool found;
        int rc = c->e->store->ops->get(c->e->store, key, c->ctx->now_ms, &b, &found, c->st);
        if (rc != RD_OK)
            return rc;
        if (found && rd_breaker_status_at(&b, c->ctx->now_ms) == RD_BREAKER_OPEN) {
            c->breaker_key = key;
            c->breaker = b;
            *open = true;
            return RD_OK;
        }
    }
    return RD_OK;
}

int eng_scope_admit_tool(decide_call *c, const char *tool_id, const rd_tool_config *cfg,
                         rd_store_result *res, const char **key_out)
{
    const rd_decide_input *in = c->in;
    int depth = (int)rd_scope_depth(&cfg->scope, in->scope, in->n_scope);
    for (int level = RD_SCOPE_LEVEL_TOOL; level < depth; level++) {
        const char *key = level == RD_SCOPE_LEVEL_TOOL
                              ? tool_id
                              : key_of(c->ctx->arena, tool_id, &cfg->scope, in->scope,
                                       in->n_scope, level, c->st);
        if (!key)
            return c->st->code;
        int rc = eng_admit(c, key, cfg, res);
        if (rc != RD_OK)
            return rc;
        *key_out = key;
        if (res->admission != RD_ADMIT_YES)
            return RD_OK;
    }
    return RD_OK;
}

int eng_scope_admit(decide_call *c, rd_store_result *res)
{
    return eng_scope_admit_tool(c, c->in->tool_id, c->cfg, res, &c->breaker_key);
}

int eng_scope_worst_state(decide_call *c, const char *tool_id, const rd_tool_config *cfg,
                          rd_breaker_status *worst)
{
    const rd_decide_input *in = c->in;
    int depth = (int)rd_scope_depth(&cfg->scope, in->scope, in->n_scope);
    *worst = RD_BREAKER_CLOSED;
    for (int level = 0; level < depth; level++) { /* the tool's own: the caller read it */
        const char *key = key_of(c->ctx->arena, tool_id, &cfg->scope, in->scope, in->n_scope,
                                 level, c->st);
        if (!key)
            return c->st->code;
        rd_breaker b;
        bool found;
        int rc = c->e->store->ops->get(c->e->store, key, c->ctx->now_ms, &b, &found, c->st);
        if (rc != RD_OK)
            return rc;
        rd_breaker_status status = found ? rd_breaker_status_at(&b, c->ctx->now_ms)
                                         : RD_BREAKER_CLOSED;
        if (status == RD_BREAKER_OPEN)
            *worst = RD_BREAKER_OPEN;
        else if (status == RD_BREAKER_HALF_OPEN && *worst == RD_BREAKER_CLOSED)
            *worst = RD_BREAKER_HALF_OPEN;
    }
    return RD_OK;
}

int eng_scope_record(const rd_engine *e, const rd_outcome_input *in, const rd_tool_config *cfg,
                     const rd_call_report *call,
                     const rd_call_ctx *ctx, rd_store_result *res, const char **key,
                     rd_status *st)
{
    rd_store *s = e->store;
    int depth = (int)rd_scope_depth(&cfg->scope, in->scope, in->n_scope);
    if (!in->success) {
        int level = failure_level(cfg, in->tool_id, in->error, in->scope, in->n_scope);
        bool untouched = level == RD_SCOPE_LEVEL_NONE;
        *key = key_of(ctx->arena, in->tool_id, &cfg->scope, in->scope, in->n_scope,
                      untouched ? depth - 1 : level, st);
        if (!*key)
            return st->code;
        if (!untouched)
            return s->ops->record_call(s, *key, &cfg->breaker, ctx->now_ms, call, res, st);
        bool found;
        *res = (rd_store_result){.transition = RD_TRANSITION_NONE};
        return s->ops->get(s, *key, ctx->now_ms, &res->breaker, &found, st);
    }
    /* The answer reports the first level the success changed (a parent's
     * probe closing it), else the narrowest. */
    bool chosen = false;
    for (int level = RD_SCOPE_LEVEL_TOOL; level < depth || level == RD_SCOPE_LEVEL_TOOL; level++) {
        const char *k = level == RD_SCOPE_LEVEL_TOOL
                            ? in->tool_id
                            : key_of(ctx->arena, in->tool_id, &cfg->scope, in->scope,
                                     in->n_scope, level, st);
        if (!k)
            return st->code;
        rd_store_result one;
        int rc = s->ops->record_call(s, k, &cfg->breaker, ctx->now_ms, call, &one, st);
        if (rc != RD_OK)
            return rc;
        if (!chosen) {
            *res = one;
            *key = k;
            chosen = one.transition != RD_TRANSITION_NONE;
        }
    }
    return RD_OK;
}
