/* The exception type named at the start of a message or of its last line
 * (domain/type_in_text.h). */
#include "domain/type_in_text.h"

#include <string.h>

static bool is_name_start(unsigned char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_' || c == '$';
}

static bool is_name_byte(unsigned char c)
{
    return is_name_start(c) || (c >= '0' && c <= '9') || c == '.';
}

static bool ends_with(const char *s, size_t n, const char *suffix)
{
    size_t k = strlen(suffix);
    return n >= k && memcmp(s + n - k, suffix, k) == 0;
}

/* The name starting at msg[at] (after spaces and tabs), when it is one. */
static bool name_at(const char *msg, size_t len, size_t at, char *out, size_t cap)
{
    while (at < len && (msg[at] == ' ' || msg[at] == '\t'))
        at++;
    if (at >= len || !is_name_start((unsigned char)msg[at]))
        return false;
    size_t end = at;
    while (end < len && is_name_byte((unsigned char)msg[end]))
        end++;
    size_t n = end - at;
    if (n + 1 > cap || n + 1 > RD_TYPE_IN_TEXT_MAX)
        return false;
    if (end < len && msg[end] != ':' && msg[end] != '[' && msg[end] != '(' && msg[end] != '\n'
        && msg[end] != '\r')
        return false;
    if (!ends_with(msg + at, n, "Error") && !ends_with(msg + at, n, "Exception"))
        return false;
    memcpy(out, msg + at, n);
    out[n] = '\0';
    return true;
}

/* The start of the last line with anything but white space on it. */
static size_t last_line_start(const char *msg, size_t len)
{
    size_t end = len;
    while (end > 0 && (msg[end - 1] == '\n' || msg[end - 1] == '\r' || msg[end - 1] == ' '
                       || msg[end - 1] == '\t'))
        end--;
    size_t start = end;
    while (start > 0 && msg[start - 1] != '\n')
        start--;
    return start;
}

bool rd_type_named_in_text(const char *msg, size_t len, char *out, size_t cap)
{
    if (!msg || !out || cap == 0)
        return false;
    if (name_at(msg, len, 0, out, cap))
        return true;
    size_t last = last_line_start(msg, len);
    return last > 0 && name_at(msg, len, last, out, cap);
}
