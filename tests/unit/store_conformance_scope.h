/* Part of the store conformance suite (store_conformance.h, which
 * includes it): scoped breaker keys (domain/scope.h). The engine keeps a
 * scoped breaker under "<tool>|<dim>=<value>|...", which a store keeps as
 * it keeps a tool id: each key its own breaker with its own probe, listed
 * by its full name, up to RD_ID_MAX bytes. */
#ifndef RD_TESTS_STORE_CONFORMANCE_SCOPE_H
#define RD_TESTS_STORE_CONFORMANCE_SCOPE_H

#include "store_conformance_fixture.h"

#define CONF_SCOPE_KEYS 4

typedef struct conf_scope_seen {
    char names[CONF_SCOPE_KEYS][RD_ID_MAX + 1];
    rd_breaker_status status[CONF_SCOPE_KEYS];
    size_t n;
} conf_scope_seen;

static int conf_scope_visit(void *ctx, const char *tool_id, const rd_breaker *b)
{
    conf_scope_seen *seen = ctx;
    assert_true(seen->n < CONF_SCOPE_KEYS);
    assert_true(strlen(tool_id) <= RD_ID_MAX);
    strcpy(seen->names[seen->n], tool_id);
    seen->status[seen->n] = b->stored;
    seen->n++;
    return 0;
}

static void conf_scoped_keys_are_separate_breakers(void **state)
{
    rd_store_limits lim = conf_limits();
    rd_store *s = conf_make(state, &lim);
    char longest[RD_ID_MAX + 1];
    int head = snprintf(longest, sizeof longest, "chat|provider=openai|credential=");
    memset(longest + head, 'k', RD_ID_MAX - (size_t)head);
    longest[RD_ID_MAX] = '\0';
    const char *keys[CONF_SCOPE_KEYS] = {"chat", "chat|provider=openai",
                                         "chat|provider=openai|credential=k1", longest};
    /* open the credential key and the longest one; the tool and provider stay closed */
    for (int i = 0; i < 3; i++) {
        conf_record(s, keys[2], &conf_policy, 10 + i, RD_OUTCOME_TRANSIENT_FAILURE, 0);
        conf_record(s, keys[3], &conf_policy, 10 + i, RD_OUTCOME_TRANSIENT_FAILURE, 0);
    }
    conf_record(s, keys[1], &conf_policy, 20, RD_OUTCOME_TRANSIENT_FAILURE, 0);
    assert_int_equal(conf_admit(s, keys[0], &conf_policy, 30).admission, RD_ADMIT_YES);
    assert_int_equal(conf_admit(s, keys[1], &conf_policy, 30).admission, RD_ADMIT_YES);
    assert_int_equal(conf_admit(s, keys[2], &conf_policy, 30).admission, RD_ADMIT_NO);
    assert_int_equal(conf_admit(s, keys[3], &conf_policy, 30).admission, RD_ADMIT_NO);
    bool found;
    assert_int_equal(conf_get(s, keys[1], 30, &found).consecutive_failures, 1);
    assert_true(found);

    /* half-open: one probe per key, independently */
    rd_store_result a = conf_admit(s, keys[2], &conf_policy, 1100);
    rd_store_result b = conf_admit(s, keys[3], &conf_policy, 1100);
    assert_int_equal(a.admission, RD_ADMIT_PROBE);
    assert_int_equal(b.admission, RD_ADMIT_PROBE);
    assert_int_equal(conf_admit(s, keys[2], &conf_policy, 1101).admission, RD_ADMIT_NO);
    /* another key's permit closes nothing here */
    rd_store_result r = conf_record(s, keys[2], &conf_policy, 1102, RD_OUTCOME_SUCCESS,
                                    b.permit_token);
    assert_int_not_equal(r.transition, RD_TRANSITION_CLOSED);
    r = conf_record(s, keys[2], &conf_policy, 1103, RD_OUTCOME_SUCCESS, a.permit_token);
    assert_int_equal(r.transition, RD_TRANSITION_CLOSED);
    assert_int_equal(conf_admit(s, keys[3], &conf_policy, 1104).admission, RD_ADMIT_NO);

    conf_scope_seen *seen = calloc(1, sizeof *seen);
    assert_non_null(seen);
    rd_status st = {0};
    assert_int_equal(s->ops->list(s, 10, conf_scope_visit, seen, &st), RD_OK);
    assert_int_equal(seen->n, CONF_SCOPE_KEYS);
    for (size_t k = 0; k < CONF_SCOPE_KEYS; k++) {
        size_t hits = 0;
        for (size_t i = 0; i < seen->n; i++)
            hits += strcmp(seen->names[i], keys[k]) == 0;
        assert_int_equal(hits, 1);
    }
    free(seen);
    rd_store_destroy(s);
}

#endif
