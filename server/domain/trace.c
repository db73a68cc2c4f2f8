/* Trace event names, safe trace text, timestamps and the turn summary. */
#include "domain/trace.h"

#include "domain/cascade.h"
#include "domain/err.h"

#include <stdio.h>
#include <string.h>
#include <time.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

static const rd_text EVENT_NAMES[RD_EV_COUNT] = {
    [RD_EV_TOOL_ERROR] = RD_TEXT_INIT("ToolError"),
    [RD_EV_TOOL_TIMEOUT] = RD_TEXT_INIT("ToolTimeout"),
    [RD_EV_CIRCUIT_OPENED] = RD_TEXT_INIT("CircuitOpened"),
    [RD_EV_CIRCUIT_HALF_OPENED] = RD_TEXT_INIT("CircuitHalfOpened"),
    [RD_EV_CIRCUIT_CLOSED] = RD_TEXT_INIT("CircuitClosed"),
    [RD_EV_RETRY] = RD_TEXT_INIT("Retry"),
    [RD_EV_RETRY_SUCCEEDED] = RD_TEXT_INIT("RetrySucceeded"),
    [RD_EV_TOOL_SUCCEEDED] = RD_TEXT_INIT("ToolSucceeded"),
    [RD_EV_TOOL_FAILED] = RD_TEXT_INIT("ToolFailed"),
    [RD_EV_ALTERNATIVE_USED] = RD_TEXT_INIT("AlternativeUsed"),
    [RD_EV_DEFAULT_USED] = RD_TEXT_INIT("DefaultUsed"),
    [RD_EV_SKIPPED] = RD_TEXT_INIT("Skipped"),
    [RD_EV_ESCALATED] = RD_TEXT_INIT("Escalated"),
    [RD_EV_GAVE_UP] = RD_TEXT_INIT("GaveUp"),
    [RD_EV_FAIL_FAST] = RD_TEXT_INIT("FailFast"),
    [RD_EV_TURN_TIMEOUT] = RD_TEXT_INIT("TurnTimeout"),
    [RD_EV_EFFECT_CHECKED] = RD_TEXT_INIT("EffectChecked"),
};

rd_text rd_event_type_text(rd_event_type t)
{
    if ((unsigned)t >= RD_EV_COUNT)
        return RD_TEXT("Unknown");
    return EVENT_NAMES[t];
}

const char *rd_event_type_name(rd_event_type t)
{
    return rd_event_type_text(t).s;
}

rd_text rd_action_text(rd_action a)
{
    switch (a) {
    case RD_ACTION_PROCEED: return RD_TEXT("proceed");
    case RD_ACTION_RETRY: return RD_TEXT("retry");
    case RD_ACTION_USE_ALTERNATIVE: return RD_TEXT("use_alternative");
    case RD_ACTION_FAIL_FAST: return RD_TEXT("fail_fast");
    case RD_ACTION_ESCALATE: return RD_TEXT("escalate");
    case RD_ACTION_GIVE_UP: return RD_TEXT("give_up");
    case RD_ACTION_PARTIAL: return RD_TEXT("partial");
    case RD_ACTION_VERIFY: return RD_TEXT("verify");
    case RD_ACTION_UNSPECIFIED: break;
    }
    return RD_TEXT("");
}

const char *rd_action_name(rd_action a)
{
    return rd_action_text(a).s;
}

/* ---- UTF-8 safe text ---- */

size_t rd_utf8_char_len(const unsigned char *s, size_t avail)
{
    unsigned char c = s[0];
    if (c == 0)
        return 0;
    if (c < 0x80)
        return 1;
    size_t len;
    unsigned char lo = 0x80, hi = 0xBF; /* allowed range of the second byte */
    if (c >= 0xC2 && c <= 0xDF) {
        len = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
        len = 3;
        if (c == 0xE0)
            lo = 0xA0; /* overlong */
        else if (c == 0xED)
            hi = 0x9F; /* surrogates */
    } else if (c >= 0xF0 && c <= 0xF4) {
        len = 4;
        if (c == 0xF0)
            lo = 0x90; /* overlong */
        else if (c == 0xF4)
            hi = 0x8F; /* above U+10FFFF */
    } else {
        return 0;
    }
    if (avail < len || s[1] < lo || s[1] > hi)
        return 0;
    for (size_t i = 2; i < len; i++)
        if (s[i] < 0x80 || s[i] > 0xBF)
            return 0;
    return len;
}

/* Whether none of the eight bytes in w is 0 or above 127: a byte with its
 * top bit set, or one that borrows when 1 is taken from it, marks it. */
static inline bool word_is_plain_ascii(uint64_t w)
{
    const uint64_t ones = UINT64_C(0x0101010101010101), tops = UINT64_C(0x8080808080808080);
    return !(((w - ones) | w) & tops);
}

static inline uint64_t load_word(const unsigned char *s)
{
    uint64_t w;
    memcpy(&w, s, sizeof w);
    return w;
}

/* Bytes 1..127 at the start of s[0..n), copied to dst when dst is not
 * NULL; returns how many. Most error text is plain ASCII, so it is
 * measured (and copied) eight bytes at a time, and the last few bytes of
 * a clean text as the final eight, overlapping the word before. */
static size_t ascii_run(char *dst, const unsigned char *s, size_t n)
{
    size_t i = 0;
#ifdef __SSE2__
    /* Sixteen bytes a step where the CPU has them (every x86-64). */
    for (; n - i >= 16; i += 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(s + i));
        __m128i zero = _mm_cmpeq_epi8(v, _mm_setzero_si128());
        if (_mm_movemask_epi8(_mm_or_si128(v, zero)))
            break; /* a byte above 127 or a NUL: the words below find it */
        if (dst)
            _mm_storeu_si128((__m128i *)(void *)(dst + i), v);
    }
#endif
    for (; n - i >= 8; i += 8) {
        uint64_t w = load_word(s + i);
        if (!word_is_plain_ascii(w))
            break;
        if (dst)
            memcpy(dst + i, &w, sizeof w);
    }
    if (i < n && n - i < 8 && n >= 8) {
        uint64_t w = load_word(s + n - 8);
        if (word_is_plain_ascii(w)) {
            if (dst)
                memcpy(dst + n - 8, &w, sizeof w);
            return n;
        }
    }
    for (; i < n && s[i] - 1u < 0x7Fu; i++)
        if (dst)
            dst[i] = (char)s[i];
    return i;
}

size_t rd_utf8_valid_len(const char *s, size_t len)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t i = 0;
    while (i < len) {
        i += ascii_run(NULL, p + i, len - i);
        size_t seq = i < len ? rd_utf8_char_len(p + i, len - i) : 0;
        if (seq == 0)
            break;
        i += seq;
    }
    return i;
}

size_t rd_utf8_sanitize(char *dst, size_t room, const char *src, size_t len, const char *repl,
                        size_t repl_len, size_t *used)
{
    const unsigned char *s = (const unsigned char *)src;
    size_t out = 0, i = 0;
    while (i < len) {
        size_t run = ascii_run(dst + out, s + i, len - i < room - out ? len - i : room - out);
        if (run) {
            out += run;
            i += run;
            continue;
        }
        size_t seq = rd_utf8_char_len(s + i, len - i);
        size_t width = seq ? seq : repl_len;
        if (width > room - out)
            break; /* never split a character */
        memcpy(dst + out, seq ? (const char *)s + i : repl, width);
        out += width;
        i += seq ? seq : 1;
    }
    *used = i;
    return out;
}

size_t rd_trace_copy_text(char *dst, size_t cap, const char *src, size_t len)
{
    if (!dst || cap == 0)
        return 0;
    size_t used, out = src ? rd_utf8_sanitize(dst, cap - 1, src, len, "?", 1, &used) : 0;
    dst[out] = '\0';
    return out;
}

size_t rd_trace_copy_valid(char *dst, size_t cap, const char *src, size_t len)
{
    if (!dst || cap == 0)
        return 0;
    if (len > cap - 1) {
        len = cap - 1;
        while (len > 0 && ((unsigned char)src[len] & 0xC0) == 0x80)
            len--; /* src[len] continues a character the cut would split */
    }
    memcpy(dst, src, len);
    dst[len] = '\0';
    return len;
}

/* ---- timestamps ---- */

/* Proleptic Gregorian date of a day count since 1970-01-01 (the
 * era-based civil-from-days method: 400-year eras of 146097 days). */
static void civil_from_days(int64_t days, int64_t *year, int *month, int *day)
{
    days += 719468; /* from 1970-01-01 to 0000-03-01 */
    int64_t era = (days >= 0 ? days : days - 146096) / 146097;
    int64_t doe = days - era * 146097;                                  /* 0..146096 */
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365; /* 0..399 */
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);               /* 0..365, from March */
    int64_t mp = (5 * doy + 2) / 153;                                    /* 0..11, March = 0 */
    *day = (int)(doy - (153 * mp + 2) / 5 + 1);
    *month = (int)(mp < 10 ? mp + 3 : mp - 9);
    *year = yoe + era * 400 + (*month <= 2);
}

static char *put_digits(char *p, unsigned value, int width)
{
    for (int i = width - 1; i >= 0; i--, value /= 10)
        p[i] = (char)('0' + value % 10);
    return p + width;
}

/* "YYYY-MM-DDTHH:MM:SS" of the second last formatted by this thread: the
 * events of one answer, and the answers of one busy second, share it. */
#define SECOND_TEXT_LEN 19
#define RFC3339_LEN 24 /* the second, '.', three digits, 'Z' */
static _Thread_local struct {
    bool valid;
    int64_t secs;
    char text[SECOND_TEXT_LEN];
} last_second;

/* The usual case (years 0..9999) by hand: this runs for every trace event
 * of every answer, and gmtime_r takes glibc's time-zone lock. */
static bool format_rfc3339_fast(char *buf, size_t cap, int64_t secs, int ms)
{
    if (cap < 25 || secs < -62167219200LL || secs > 253402300799LL)
        return false; /* short buffer, or outside 0000-01-01..9999-12-31 */
    if (last_second.valid && last_second.secs == secs) {
        memcpy(buf, last_second.text, SECOND_TEXT_LEN);
        char *p = put_digits(buf + SECOND_TEXT_LEN + 1, (unsigned)ms, 3);
        buf[SECOND_TEXT_LEN] = '.';
        p[0] = 'Z';
        p[1] = '\0';
        return true;
    }
    int64_t days = (secs >= 0 ? secs : secs - 86399) / 86400;
    int64_t sod = secs - days * 86400;
    int64_t year;
    int month, day;
    civil_from_days(days, &year, &month, &day);
    char *p = put_digits(buf, (unsigned)year, 4);
    *p++ = '-';
    p = put_digits(p, (unsigned)month, 2);
    *p++ = '-';
    p = put_digits(p, (unsigned)day, 2);
    *p++ = 'T';
    p = put_digits(p, (unsigned)(sod / 3600), 2);
    *p++ = ':';
    p = put_digits(p, (unsigned)(sod / 60 % 60), 2);
    *p++ = ':';
    p = put_digits(p, (unsigned)(sod % 60), 2);
    memcpy(last_second.text, buf, SECOND_TEXT_LEN);
    last_second.secs = secs;
    last_second.valid = true;
    *p++ = '.';
    p = put_digits(p, (unsigned)ms, 3);
    *p++ = 'Z';
    *p = '\0';
    return true;
}

size_t rd_format_rfc3339(char *buf, size_t cap, int64_t unix_ms)
{
    if (!buf || cap == 0)
        return 0;
    /* Floor division, so instants before 1970 still get 0..999 ms. */
    int64_t secs = unix_ms / 1000, ms = unix_ms % 1000;
    if (ms < 0) {
        ms += 1000;
        secs -= 1;
    }
    if (format_rfc3339_fast(buf, cap, secs, (int)ms))
        return RFC3339_LEN;
    time_t t = (time_t)secs;
    struct tm tm;
    if (!gmtime_r(&t, &tm)) {
        snprintf(buf, cap, "1970-01-01T00:00:00.000Z");
        return strlen(buf);
    }
    snprintf(buf, cap, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
             tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, (int)ms);
    return strlen(buf);
}

/* ---- turn summary ---- */

typedef enum {
    BUCKET_NONE = 0,
    BUCKET_COMPLETED,
    BUCKET_FAILED,
    BUCKET_TIMED_OUT,
    BUCKET_SKIPPED,
} bucket;

/* Details written by the engine that change an event's meaning. */
#define DEADLINE_SKIP_PREFIX "skipped: turn deadline"

static bool starts_with(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* What this event says about its tool's fate; BUCKET_NONE when it says
 * nothing final (an error that may still be retried, a retry, ...). */
static bucket bucket_of(const rd_trace_event *ev)
{
    switch (ev->type) {
    case RD_EV_TOOL_SUCCEEDED:
    case RD_EV_RETRY_SUCCEEDED:
        return BUCKET_COMPLETED;
    case RD_EV_ESCALATED:
        /* A dependent that cannot run was never attempted: it is skipped,
         * not failed (the failure belongs to its dependency). */
        return starts_with(ev->detail, RD_CASCADE_ESCALATE_PREFIX) ? BUCKET_SKIPPED
                                                                   : BUCKET_FAILED;
    case RD_EV_GAVE_UP:
    case RD_EV_FAIL_FAST:
    case RD_EV_TOOL_FAILED:
        return BUCKET_FAILED;
    case RD_EV_TOOL_TIMEOUT:
    case RD_EV_TURN_TIMEOUT:
        return BUCKET_TIMED_OUT;
    case RD_EV_SKIPPED:
        return starts_with(ev->detail, DEADLINE_SKIP_PREFIX) ? BUCKET_TIMED_OUT
                                                             : BUCKET_SKIPPED;
    default:
        return BUCKET_NONE;
    }
}

typedef struct tool_fate {
    const char *tool_id;   /* points into the events */
    bucket where;
    bool deadline_hit;     /* the turn deadline ended it at some point */
} tool_fate;

static tool_fate *fate_for(tool_fate *fates, size_t *n_fates, const char *tool_id)
{
    for (size_t i = 0; i < *n_fates; i++)
        if (strcmp(fates[i].tool_id, tool_id) == 0)
            return &fates[i];
    fates[*n_fates] = (tool_fate){.tool_id = tool_id};
    return &fates[(*n_fates)++];
}

static void apply_event(tool_fate *f, const rd_trace_event *ev)
{
    bucket b = bucket_of(ev);
    if (b == BUCKET_NONE)
        return;
    if (ev->type == RD_EV_TURN_TIMEOUT ||
        (ev->type == RD_EV_SKIPPED && b == BUCKET_TIMED_OUT))
        f->deadline_hit = true;
    /* A tool the deadline cut off stays timed out even when a later event
     * marks it skipped (both arrive in one PARTIAL answer). */
    if (b == BUCKET_SKIPPED && f->deadline_hit)
        b = BUCKET_TIMED_OUT;
    if (b == BUCKET_COMPLETED)
        f->deadline_hit = false;
    f->where = b;
}

/* "flight_search" -> "flight search", in the arena. */
static const char *humanise(rd_arena *a, const char *tool_id)
{
    char *s = rd_arena_strdup(a, tool_id);
    if (s)
        for (char *p = s; *p; p++)
            if (*p == '_')
                *p = ' ';
    return s;
}

/* "a", "a and b", "a, b and c" */
static char *join_list(rd_arena *a, const char **names, size_t n)
{
    size_t len = 1;
    for (size_t i = 0; i < n; i++)
        len += strlen(names[i]) + 5;
    char *s = rd_arena_alloc(a, len);
    if (!s)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        if (i > 0)
            strcat(s, i + 1 == n ? " and " : ", ");
        strcat(s, names[i]);
    }
    return s;
}

static int humanised_list(rd_arena *a, const char **ids, size_t n, char **out)
{
    const char **names = rd_arena_alloc(a, (n ? n : 1) * sizeof(char *));
    if (!names)
        return RD_ERR_NOMEM;
    for (size_t i = 0; i < n; i++)
        if (!(names[i] = humanise(a, ids[i])))
            return RD_ERR_NOMEM;
    *out = join_list(a, names, n);
    return *out ? RD_OK : RD_ERR_NOMEM;
}

/* Appends "<sep><list><suffix>" when the list is not empty. */
static int append_clause(rd_arena *a, const char **sentence, const char *sep, const char **ids,
                         size_t n, const char *suffix)
{
    if (n == 0)
        return RD_OK;
    char *list;
    int rc = humanised_list(a, ids, n, &list);
    if (rc != RD_OK)
        return rc;
    *sentence = rd_arena_printf(a, "%s%s%s%s", *sentence, sep, list, suffix);
    return *sentence ? RD_OK : RD_ERR_NOMEM;
}

static int partial_sentence(rd_arena *a, const rd_turn_summary *s, const char **out)
{
    const char *sentence;
    int rc;
    if (s->n_completed > 0) {
        sentence = "Completed";
        rc = append_clause(a, &sentence, " ", s->completed, s->n_completed, "");
        if (rc == RD_OK)
            rc = append_clause(a, &sentence, ", but ", s->timed_out, s->n_timed_out,
                               " timed out");
    } else {
        sentence = "No tool completed";
        rc = append_clause(a, &sentence, "; ", s->timed_out, s->n_timed_out, " timed out");
    }
    if (rc == RD_OK)
        rc = append_clause(a, &sentence, "; ", s->failed, s->n_failed, " failed");
    if (rc == RD_OK)
        rc = append_clause(a, &sentence, "; ", s->skipped, s->n_skipped, " skipped");
    *out = sentence;
    return rc;
}

static int fill_buckets(rd_arena *a, const tool_fate *fates, size_t n_fates,
                        rd_turn_summary *out)
{
    const char **lists[] = {NULL, NULL, NULL, NULL, NULL};
    size_t *counts[] = {NULL, &out->n_completed, &out->n_failed, &out->n_timed_out,
                        &out->n_skipped};
    for (int b = BUCKET_COMPLETED; b <= BUCKET_SKIPPED; b++) {
        lists[b] = rd_arena_alloc(a, (n_fates ? n_fates : 1) * sizeof(char *));
        if (!lists[b])
            return RD_ERR_NOMEM;
    }
    for (size_t i = 0; i < n_fates; i++) {
        bucket b = fates[i].where;
        if (b != BUCKET_NONE)
            lists[b][(*counts[b])++] = fates[i].tool_id;
    }
    out->completed = lists[BUCKET_COMPLETED];
    out->failed = lists[BUCKET_FAILED];
    out->timed_out = lists[BUCKET_TIMED_OUT];
    out->skipped = lists[BUCKET_SKIPPED];
    return RD_OK;
}

int rd_turn_summarize(const rd_trace_event *events, size_t n, rd_arena *arena,
                      rd_turn_summary *out)
{
    *out = (rd_turn_summary){.partial_result = "", .turn_failed = true};
    /* One fate per tool, in order of first appearance. */
    tool_fate *fates = rd_arena_alloc(arena, (n ? n : 1) * sizeof(tool_fate));
    if (!fates)
        return RD_ERR_NOMEM;
    size_t n_fates = 0;
    for (size_t i = 0; i < n; i++) {
        if (events[i].executed)
            out->turn_failed = false;
        apply_event(fate_for(fates, &n_fates, events[i].tool_id), &events[i]);
    }
    int rc = fill_buckets(arena, fates, n_fates, out);
    if (rc != RD_OK || n == 0)
        return rc;
    return partial_sentence(arena, out, &out->partial_result);
}
