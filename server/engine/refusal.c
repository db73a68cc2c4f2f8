/* Texts for the model about calls not made (see refusal.h). */
#include "engine/refusal.h"

#include <string.h>

#include "domain/classify.h"

static const char *what_follows(rd_action action)
{
    switch (action) {
    case RD_ACTION_PARTIAL:
        return "The turn ran out of time before the tool was called; answer with the results "
               "already available.";
    case RD_ACTION_ESCALATE:
        return "The tool cannot run for this request; a person or a corrected plan must "
               "provide what it needed.";
    case RD_ACTION_USE_ALTERNATIVE:
        return "An alternative tool is called instead: ";
    default:
        return "The tool was not called and gives no result for this request.";
    }
}

const char *rd_refusal_message(rd_arena *a, const char *tool, rd_action action,
                               const char *reason, const char *alternative, size_t *len)
{
    const char *alt = action == RD_ACTION_USE_ALTERNATIVE && alternative ? alternative : "";
    char *text = rd_arena_printf(a, "Tool Not Called\nTool: %s\nReason: %s\n\n%s%s%s", tool,
                                 reason ? reason : "", what_follows(action), alt,
                                 alt[0] ? "." : "");
    *len = text ? strlen(text) : 0;
    return text;
}

const char *rd_alternative_message(rd_arena *a, const char *text, size_t text_len,
                                   const char *alternative, size_t *len)
{
    size_t tail = strlen(RD_LLM_TAIL);
    *len = text_len;
    if (text_len < tail || memcmp(text + text_len - tail, RD_LLM_TAIL, tail) != 0)
        return text;
    char *out = rd_arena_printf(a, "%.*s\n\nThe tool failed; the alternative tool %s is called "
                                   "instead.",
                                (int)(text_len - tail), text, alternative);
    *len = out ? strlen(out) : 0;
    return out;
}
