/* Trace events of one call: built in a list in the arena, appended to the
 * turn in one store call. */
#include "engine/engine_internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Room for the events of most answers at first (a RETRY has two, three
 * after a timeout). */
#define EVENTS_FIRST_CAP 3

/* ---- trace events ---- */



/* Every field but the unused tails of the texts is set when an event is
 * added, so the ~820-byte slots are not zeroed first. */
static void event_init(rd_trace_event *ev, rd_event_type type, rd_text tool, bool text_checked)
{
    ev->type = type;
    ev->tool_id_len = (uint16_t)(text_checked
                                     ? rd_trace_copy_valid(ev->tool_id, sizeof ev->tool_id,
                                                           tool.s, tool.len)
                                     : rd_trace_copy_text(ev->tool_id, sizeof ev->tool_id,
                                                          tool.s, tool.len));
    ev->error[0] = '\0';
    ev->detail[0] = '\0';
    ev->error_len = ev->detail_len = 0;
    ev->retryability = RD_RETRYABILITY_UNSPECIFIED;
    ev->breaker = RD_BREAKER_UNSPECIFIED;
    ev->retry_count = 0;
    ev->decision = RD_ACTION_UNSPECIFIED;
    ev->timestamp_ms = 0;
    ev->timeout_ms = 0;
    ev->executed = false;
    ev->sequence = 0;
    ev->trace_id[0] = '\0';
    ev->span_id[0] = '\0';
}

/* An event about `tool`, whose length the caller knows. */
rd_trace_event *eng_event_add_text(event_list *l, rd_event_type type, rd_text tool)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : EVENTS_FIRST_CAP;
        rd_trace_event *items = rd_arena_alloc_uninit(l->arena, cap * sizeof *items);
        if (!items) {
            l->out_of_memory = true;
            return NULL;
        }
        if (l->n)
            memcpy(items, l->items, l->n * sizeof *items);
        l->items = items;
        l->cap = cap;
    }
    rd_trace_event *ev = &l->items[l->n++];
    event_init(ev, type, tool, l->text_checked);
    return ev;
}

rd_trace_event *eng_event_add(event_list *l, rd_event_type type, const char *tool_id)
{
    return eng_event_add_text(l, type, (rd_text){tool_id, strlen(tool_id)});
}

/* The detail joined from its pieces (see EVENT_DETAIL), cut and made safe
 * like any trace text. The pieces are joined in place first: when that is
 * valid UTF-8 it is what the cut would have kept, and the usual detail
 * (ASCII, short) is written once instead of twice. Pieces of a call whose
 * texts are checked (tool ids, names from the config, numbers) are valid
 * UTF-8, so a join that was not cut needs no check. */
void eng_event_detail_made_safe(rd_trace_event *ev, const piece *pieces, size_t n_pieces)
{
    if (rd_utf8_valid_len(ev->detail, ev->detail_len) == ev->detail_len)
        return;
    char buf[RD_TRACE_TEXT_MAX * 2];
    size_t len = put_pieces_cut(buf, sizeof buf, pieces, n_pieces);
    ev->detail_len = (uint16_t)rd_trace_copy_text(ev->detail, sizeof ev->detail, buf, len);
}



/* A ToolTimeout event's detail. */
void eng_timeout_detail(const event_list *l, rd_trace_event *ev, const char *tool_id,
                        int64_t timeout_ms)
{
    num_text limit;
    EVENT_DETAIL(l, ev, txt(tool_id), txt(" timed out (limit "), num(&limit, timeout_ms),
                 txt(" ms)"));
}

/* An event about a failed attempt: the error text and what it means. */
void eng_event_error(const event_list *l, rd_trace_event *ev, const rd_tool_error *err,
                     const rd_classification *c)
{
    char cut[RD_TRACE_TEXT_MAX - 1]; /* a long message: its head and tail, marked */
    const char *message = err && err->message ? err->message : NULL;
    size_t len = message ? err->message_len : 0;
    if (len > sizeof cut) {
        len = rd_text_cut_into(cut, sizeof cut, message, len);
        message = cut;
    }
    if (message && l->text_checked)
        ev->error_len = (uint16_t)rd_trace_copy_valid(ev->error, sizeof ev->error, message, len);
    else if (err)
        ev->error_len = (uint16_t)rd_trace_copy_text(ev->error, sizeof ev->error, message, len);
    ev->retryability = c->retryability;
    ev->executed = c->executed;
}

/* Stamps what every event of a call shares. */
void eng_events_finish(event_list *l, rd_action action, rd_breaker_status breaker,
                       int64_t now_ms)
{
    for (size_t i = 0; i < l->n; i++) {
        l->items[i].decision = action;
        l->items[i].breaker = breaker;
        l->items[i].timestamp_ms = now_ms;
    }
    if (!l->trace || !l->trace->valid)
        return;
    for (size_t i = 0; i < l->n; i++) {
        memcpy(l->items[i].trace_id, l->trace->trace_id, sizeof l->items[i].trace_id);
        memcpy(l->items[i].span_id, l->trace->span_id, sizeof l->items[i].span_id);
    }
}

int eng_events_to_turn(const rd_engine *e, const char *turn_id, event_list *l,
                       int64_t now_ms, rd_status *st)
{
    if (!turn_id || !turn_id[0] || l->n == 0)
        return RD_OK;
    int64_t started_at_ms;
    return e->store->ops->turn_append(e->store, turn_id, l->items, l->n, now_ms,
                                      &started_at_ms, st);
}

/* The breaker transitions worth a trace event when recording an outcome. */
void eng_note_transition(event_list *l, const char *tool_id, rd_breaker_transition t)
{
    rd_trace_event *ev;
    if (t == RD_TRANSITION_OPENED || t == RD_TRANSITION_REOPENED) {
        if ((ev = eng_event_add(l, RD_EV_CIRCUIT_OPENED, tool_id)))
            EVENT_DETAIL(l, ev, txt("Circuit breaker opened for "), txt(tool_id));
    } else if (t == RD_TRANSITION_CLOSED) {
        if ((ev = eng_event_add(l, RD_EV_CIRCUIT_CLOSED, tool_id)))
            EVENT_DETAIL(l, ev, txt("Circuit breaker closed for "), txt(tool_id));
    }
}
