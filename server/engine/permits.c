/* Probe permits: the permit id on the wire ("p-<generation>-<token hex>"),
 * written and read. */
#include "engine/engine_internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- permits ---- */

void rd_permit_format(char *buf, size_t cap, uint64_t generation, uint64_t token)
{
    snprintf(buf, cap, "p-%" PRIu64 "-%" PRIx64, generation, token);
}

/* Parses digits of `base` up to `stop` (exclusive: '\0' or '-'), without
 * overflow, at least one digit. Returns the end or NULL. */
static const char *parse_u64(const char *s, int base, char stop, uint64_t *out)
{
    uint64_t v = 0;
    const char *p = s;
    for (; *p && *p != stop; p++) {
        int d;
        if (*p >= '0' && *p <= '9')
            d = *p - '0';
        else if (base == 16 && *p >= 'a' && *p <= 'f')
            d = *p - 'a' + 10;
        else if (base == 16 && *p >= 'A' && *p <= 'F')
            d = *p - 'A' + 10;
        else
            return NULL;
        if (v > (UINT64_MAX - (uint64_t)d) / (uint64_t)base)
            return NULL;
        v = v * (uint64_t)base + (uint64_t)d;
    }
    if (p == s || *p != stop)
        return NULL;
    *out = v;
    return p;
}

bool rd_permit_parse(const char *s, uint64_t *generation, uint64_t *token)
{
    uint64_t gen, tok;
    if (!s || strncmp(s, "p-", 2) != 0)
        return false;
    const char *p = parse_u64(s + 2, 10, '-', &gen);
    if (!p || !parse_u64(p + 1, 16, '\0', &tok) || tok == 0)
        return false; /* token 0 means "no probe" and is never granted */
    *generation = gen;
    *token = tok;
    return true;
}


/* An empty permit_id means the caller holds no probe (token 0). */
int eng_parse_permit(const char *permit_id, uint64_t *token, rd_status *st)
{
    uint64_t generation;
    *token = 0;
    if (!permit_id || !permit_id[0])
        return RD_OK;
    if (strlen(permit_id) > RD_PERMIT_ID_MAX ||
        !rd_permit_parse(permit_id, &generation, token))
        return rd_status_set(st, RD_ERR_INVALID, "permit_id: malformed");
    return RD_OK;
}

const char *eng_format_permit(rd_arena *a, uint64_t generation, uint64_t token)
{
    char *buf = rd_arena_alloc(a, RD_PERMIT_ID_MAX + 1);
    if (buf)
        rd_permit_format(buf, RD_PERMIT_ID_MAX + 1, generation, token);
    return buf;
}
