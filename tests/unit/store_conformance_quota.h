/* Part of the store conformance suite (store_conformance.h, which
 * includes it): the capped sets behind a tenant's limits (the store's
 * quota operation, engine/tenant.h). */
#ifndef RD_TESTS_STORE_CONFORMANCE_QUOTA_H
#define RD_TESTS_STORE_CONFORMANCE_QUOTA_H

#include "store_conformance_fixture.h"

static int conf_quota(rd_store *s, const char *set, const char *member, size_t max,
                      int64_t now_ms, int64_t ttl_ms)
{
    rd_status st = {0};
    int rc = s->ops->quota(s, set, member, max, now_ms, ttl_ms, &st);
    if (rc == RD_ERR_EXHAUSTED)
        assert_non_null(strstr(st.msg, set)); /* the refusal names the set */
    return rc;
}

static void conf_quota_counts_members_used_lately(void **state)
{
    rd_store_limits lim = conf_limits();
    rd_store *s = conf_make(state, &lim);
    assert_non_null(s->ops->quota);
    const int64_t ttl = 60000;
    assert_int_equal(conf_quota(s, "t/tools", "a", 2, 1000, ttl), RD_OK);
    assert_int_equal(conf_quota(s, "t/tools", "b", 2, 2000, ttl), RD_OK);
    assert_int_equal(conf_quota(s, "t/tools", "a", 2, 3000, ttl), RD_OK); /* known: no room needed */
    assert_int_equal(conf_quota(s, "t/tools", "c", 2, 4000, ttl), RD_ERR_EXHAUSTED);
    /* another set is counted apart */
    assert_int_equal(conf_quota(s, "u/tools", "c", 2, 4000, ttl), RD_OK);
    /* b, unused for ttl, no longer counts; a, used at 3000, still does */
    assert_int_equal(conf_quota(s, "t/tools", "c", 2, 2000 + ttl - 1, ttl), RD_ERR_EXHAUSTED);
    assert_int_equal(conf_quota(s, "t/tools", "c", 2, 2000 + ttl, ttl), RD_OK);
    assert_int_equal(conf_quota(s, "t/tools", "d", 2, 2000 + ttl, ttl), RD_ERR_EXHAUSTED);
    /* a refused member was not counted: once a ages out, d gets the room */
    assert_int_equal(conf_quota(s, "t/tools", "d", 2, 3000 + ttl, ttl), RD_OK);
    /* without an idle time, members never age out */
    assert_int_equal(conf_quota(s, "t/turns", "p", 1, 0, 0), RD_OK);
    assert_int_equal(conf_quota(s, "t/turns", "q", 1, 1000000000, 0), RD_ERR_EXHAUSTED);
    assert_int_equal(conf_quota(s, "t/turns", "p", 1, 1000000000, 0), RD_OK);
    rd_status st = {0};
    assert_int_equal(s->ops->quota(s, "t/tools", "", 2, 0, ttl, &st), RD_ERR_INVALID);
    assert_int_equal(s->ops->quota(s, "", "x", 2, 0, ttl, &st), RD_ERR_INVALID);
    rd_store_destroy(s);
}

#endif
