#include "domain/store.h"

#include <stdatomic.h>
#include <string.h>

int rd_store_check_id(const char *field, const char *id, rd_status *st)
{
    if (!id || !id[0])
        return rd_status_set(st, RD_ERR_INVALID, "%s: empty", field);
    if (strnlen(id, RD_ID_MAX + 1) > RD_ID_MAX)
        return rd_status_set(st, RD_ERR_INVALID, "%s: longer than %d bytes", field, RD_ID_MAX);
    return RD_OK;
}

static atomic_uint_fast64_t displaced;

void rd_store_count_displaced(uint64_t n)
{
    atomic_fetch_add_explicit(&displaced, n, memory_order_relaxed);
}

uint64_t rd_store_displaced_total(void)
{
    return atomic_load_explicit(&displaced, memory_order_relaxed);
}
