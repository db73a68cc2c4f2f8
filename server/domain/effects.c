/* Side effects and retry safety (see effects.h). */
#include "domain/effects.h"

#include <string.h>
#include <strings.h>

#include "domain/classify.h"

rd_effects rd_effects_resolve(rd_effects manifest, const rd_tool_error *err)
{
    if (manifest != RD_EFFECTS_UNSPECIFIED || !err)
        return manifest;
    if (err->read_only_hint == RD_HINT_TRUE)
        return RD_EFFECTS_NONE;
    if (err->idempotent_hint == RD_HINT_TRUE)
        return RD_EFFECTS_IDEMPOTENT;
    /* MCP says idempotentHint is false unless given: a destructive tool
     * with nothing said of idempotence repeats its effect. */
    if (err->idempotent_hint == RD_HINT_FALSE || err->destructive_hint == RD_HINT_TRUE)
        return RD_EFFECTS_NON_IDEMPOTENT;
    return RD_EFFECTS_UNSPECIFIED;
}

/* errno names and API codes of a connection that was never made: nothing
 * was sent, so nothing ran. */
static const char *const NEVER_CONNECTED_CODES[] = {
    "ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "EAI_NONAME", "EHOSTUNREACH", "ENETUNREACH", NULL,
};

/* Exception types (the last dotted part) that mean the same. */
static const char *const NEVER_CONNECTED_EXCEPTIONS[] = {
    "ConnectionRefusedError", "ConnectError", "ConnectTimeout", "ConnectTimeoutError",
    "NewConnectionError", NULL,
};

static bool in_list(const char *s, const char *const *list)
{
    for (size_t i = 0; list[i]; i++)
        if (strcasecmp(s, list[i]) == 0)
            return true;
    return false;
}

static const char *last_dotted(const char *s)
{
    const char *dot = strrchr(s, '.');
    return dot ? dot + 1 : s;
}

/* Whether s[0, len) contains the lower-case literal `lit`, ignoring case. */
static bool contains_nocase(const char *s, size_t len, const char *lit)
{
    size_t n = strlen(lit);
    for (size_t i = 0; n <= len && i <= len - n; i++)
        if (strncasecmp(s + i, lit, n) == 0)
            return true;
    return false;
}

/* "connection refused" in the head or the tail of the message (the parts
 * the classifier reads, so a huge message costs no more). */
static bool says_refused(const rd_tool_error *err)
{
    static const char LIT[] = "connection refused";
    const char *m = err->message ? err->message : "";
    size_t len = err->message ? err->message_len : 0;
    if (len <= RD_CLASSIFY_HEAD + RD_CLASSIFY_TAIL)
        return contains_nocase(m, len, LIT);
    return contains_nocase(m, RD_CLASSIFY_HEAD, LIT) ||
           contains_nocase(m + len - RD_CLASSIFY_TAIL, RD_CLASSIFY_TAIL, LIT);
}

/* Why the error proves the tool did not run, or NULL when it does not. */
static const char *not_run_proof(const rd_tool_error *err, const rd_classification *c)
{
    if (c->kind != RD_KIND_UNSPECIFIED && !c->executed)
        return "the error's kind means the tool was stopped before it ran";
    if (err->code && err->code[0] && in_list(err->code, NEVER_CONNECTED_CODES))
        return "the connection was never made, so the request was not sent";
    if (err->exception_type && err->exception_type[0] &&
        in_list(last_dotted(err->exception_type), NEVER_CONNECTED_EXCEPTIONS))
        return "the connection was never made, so the request was not sent";
    if (err->http_status == 429)
        return "HTTP 429: the server refused the request up front (rate limit)";
    if (err->http_status == 503)
        return "HTTP 503: the server refused the request up front (unavailable)";
    if (err->http_status >= 400 && err->http_status < 500 && err->http_status != 408)
        return "an HTTP 4xx answer: the server refused the request without carrying it out";
    if (err->grpc_code == 8)
        return "gRPC RESOURCE_EXHAUSTED: the server refused the call up front";
    if (says_refused(err))
        return "connection refused before the request was sent";
    return NULL;
}

/* Why the effect is unknown: what the error says happened. */
static const char *unknown_why(const rd_tool_error *err, const rd_classification *c)
{
    if (c->kind == RD_KIND_TIMEOUT || err->http_status == 408 || err->http_status == 504 ||
        err->grpc_code == 4)
        return "the call timed out after the request was sent: the effect may have happened";
    if (err->http_status >= 500)
        return "the server failed after accepting the request: the effect may have happened";
    if (c->kind == RD_KIND_TRANSPORT_ERROR)
        return "the connection failed after the request was sent: the effect may have happened";
    return "nothing shows the tool did not run: the effect may have happened";
}

rd_effect_verdict rd_effect_judge(rd_effects effects, bool key_mode, bool has_key,
                                  const rd_tool_error *err, const rd_classification *c)
{
    rd_effect_verdict v = {.effects = effects};
    switch (effects) {
    case RD_EFFECTS_UNSPECIFIED:
        return v;
    case RD_EFFECTS_NONE:
        v.safety = RD_EFFECT_SAFETY_DECLARED_SAFE;
        v.reason = "the tool has no side effects: another call repeats nothing";
        return v;
    case RD_EFFECTS_IDEMPOTENT:
        v.safety = RD_EFFECT_SAFETY_DECLARED_SAFE;
        v.reason = "the tool is idempotent: another call has the effect of one";
        return v;
    case RD_EFFECTS_NON_IDEMPOTENT:
        break;
    }
    static const rd_tool_error none = {.message = "", .code = "", .exception_type = ""};
    if (!err)
        err = &none;
    if ((v.reason = not_run_proof(err, c))) {
        v.safety = RD_EFFECT_SAFETY_NOT_EXECUTED;
        return v;
    }
    if (key_mode && has_key) {
        v.safety = RD_EFFECT_SAFETY_IDEMPOTENCY_KEY;
        v.reason = "the effect may have happened, and the tool honours the idempotency key: "
                   "a call with the same key is safe";
        return v;
    }
    v.safety = RD_EFFECT_SAFETY_UNKNOWN;
    v.reason = key_mode ? "the effect may have happened and no idempotency_key was sent"
                        : unknown_why(err, c);
    return v;
}

const char *rd_effects_name(rd_effects e)
{
    switch (e) {
    case RD_EFFECTS_NONE: return "none";
    case RD_EFFECTS_IDEMPOTENT: return "idempotent";
    case RD_EFFECTS_NON_IDEMPOTENT: return "non_idempotent";
    case RD_EFFECTS_UNSPECIFIED: break;
    }
    return "";
}

const char *rd_effect_safety_name(rd_effect_safety s)
{
    switch (s) {
    case RD_EFFECT_SAFETY_DECLARED_SAFE: return "declared_safe";
    case RD_EFFECT_SAFETY_NOT_EXECUTED: return "not_executed";
    case RD_EFFECT_SAFETY_IDEMPOTENCY_KEY: return "idempotency_key";
    case RD_EFFECT_SAFETY_UNKNOWN: return "unknown";
    case RD_EFFECT_SAFETY_UNSPECIFIED: break;
    }
    return "";
}
