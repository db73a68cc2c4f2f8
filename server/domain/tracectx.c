/* W3C Trace Context parsing (see tracectx.h). */
#include "domain/tracectx.h"

#include <string.h>

/* Each byte's value as a lower-case hex digit plus one, 0 for every other
 * byte (upper case is invalid in traceparent): one load per character. */
static const uint8_t HEX_PLUS_ONE[256] = {
    ['0'] = 1, ['1'] = 2, ['2'] = 3, ['3'] = 4, ['4'] = 5, ['5'] = 6, ['6'] = 7, ['7'] = 8,
    ['8'] = 9, ['9'] = 10, ['a'] = 11, ['b'] = 12, ['c'] = 13, ['d'] = 14, ['e'] = 15,
    ['f'] = 16,
};

static int hex_value(char c)
{
    return HEX_PLUS_ONE[(unsigned char)c] - 1;
}

/* n lower-case hex digits at s, not all zero when nonzero_required. */
static bool hex_field(const char *s, size_t n, bool nonzero_required)
{
    uint8_t all = 1, any = 0; /* every digit valid; some digit nonzero */
    for (size_t i = 0; i < n; i++) {
        uint8_t v = HEX_PLUS_ONE[(unsigned char)s[i]];
        all &= v != 0;
        any |= v > 1;
    }
    return all && (any || !nonzero_required);
}

/* version "-" trace-id "-" parent-id "-" trace-flags: 2-32-16-2 characters. */
#define TRACEPARENT_LEN 55

bool rd_traceparent_parse(const char *s, size_t len, rd_trace_ctx *out)
{
    if (len < TRACEPARENT_LEN || len > RD_TRACEPARENT_MAX || s[2] != '-' || s[35] != '-' ||
        s[52] != '-')
        return false;
    if (!hex_field(s, 2, false) || (s[0] == 'f' && s[1] == 'f'))
        return false; /* version ff is forbidden */
    bool version_00 = s[0] == '0' && s[1] == '0';
    /* Version 00 is exactly 55 characters; a later version may go on
     * after a dash, and its first four fields are read as 00's. */
    if (version_00 ? len != TRACEPARENT_LEN : len > TRACEPARENT_LEN && s[55] != '-')
        return false;
    if (!hex_field(s + 3, RD_TRACE_ID_HEX, true) || !hex_field(s + 36, RD_SPAN_ID_HEX, true) ||
        !hex_field(s + 53, 2, false))
        return false;
    memcpy(out->trace_id, s + 3, RD_TRACE_ID_HEX);
    out->trace_id[RD_TRACE_ID_HEX] = '\0';
    memcpy(out->span_id, s + 36, RD_SPAN_ID_HEX);
    out->span_id[RD_SPAN_ID_HEX] = '\0';
    out->flags = (uint8_t)(hex_value(s[53]) << 4 | hex_value(s[54]));
    out->valid = true;
    return true;
}

/* ---- tracestate ---- */

static bool lcalpha(char c)
{
    return c >= 'a' && c <= 'z';
}

static bool key_char(char c)
{
    return lcalpha(c) || (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '*' || c == '/';
}

/* simple-key = lcalpha 0*255(key_char);
 * multi-tenant-key = tenant-id "@" system-id, tenant-id = (lcalpha / DIGIT)
 * 0*240(key_char), system-id = lcalpha 0*13(key_char). */
static bool valid_key(const char *k, size_t n)
{
    const char *at = memchr(k, '@', n);
    if (!at) {
        if (n == 0 || n > 256 || !lcalpha(k[0]))
            return false;
        for (size_t i = 1; i < n; i++)
            if (!key_char(k[i]))
                return false;
        return true;
    }
    size_t tenant = (size_t)(at - k), system = n - tenant - 1;
    if (tenant == 0 || tenant > 241 || system == 0 || system > 14 ||
        !(lcalpha(k[0]) || (k[0] >= '0' && k[0] <= '9')) || !lcalpha(at[1]))
        return false;
    for (size_t i = 1; i < n; i++)
        if (i != tenant && !key_char(k[i]))
            return false;
    return true;
}

/* value = 0*255(chr) nblk-chr; chr = %x20 / nblk-chr; nblk-chr = printable
 * ASCII but ',' and '='. */
static bool valid_value(const char *v, size_t n)
{
    if (n == 0 || n > 256 || v[n - 1] == ' ')
        return false;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)v[i];
        if (c < 0x20 || c > 0x7e || c == ',' || c == '=')
            return false;
    }
    return true;
}

static size_t count_members(const char *s, size_t len)
{
    size_t n = len > 0;
    for (size_t i = 0; i < len; i++)
        n += s[i] == ',';
    return n;
}

static bool discard(rd_trace_ctx *out)
{
    out->state[0] = '\0';
    out->state_len = 0;
    out->state_discarded = true;
    return false;
}

bool rd_tracestate_append(rd_trace_ctx *out, const char *s, size_t len)
{
    if (out->state_discarded)
        return false;
    size_t members = count_members(out->state, out->state_len);
    size_t i = 0;
    while (i <= len) {
        size_t start = i;
        while (i < len && s[i] != ',')
            i++;
        size_t a = start, b = i;
        i++; /* past the comma (or the end) */
        while (a < b && (s[a] == ' ' || s[a] == '\t'))
            a++;
        while (b > a && (s[b - 1] == ' ' || s[b - 1] == '\t'))
            b--;
        if (a == b)
            continue; /* empty members are allowed and dropped */
        const char *eq = memchr(s + a, '=', b - a);
        if (!eq || !valid_key(s + a, (size_t)(eq - (s + a))) ||
            !valid_value(eq + 1, (size_t)(s + b - eq - 1)))
            return discard(out);
        size_t n = b - a, sep = out->state_len > 0;
        if (members == RD_TRACESTATE_MEMBERS_MAX ||
            out->state_len + sep + n > RD_TRACESTATE_MAX)
            continue; /* over the bounds: dropped whole, the list stays valid */
        if (sep)
            out->state[out->state_len++] = ',';
        memcpy(out->state + out->state_len, s + a, n);
        out->state_len += n;
        out->state[out->state_len] = '\0';
        members++;
    }
    return true;
}
