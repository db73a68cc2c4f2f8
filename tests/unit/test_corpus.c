/* Accuracy of the shipped classifier on the corpora of real error messages:
 * tests/corpus/errors.yaml (issue 4) and the vendor corpus of issue 34,
 * tests/corpus/errors-vendors.yaml and its later batches
 * (tests/corpus/errors-batch8.yaml to errors-batch74.yaml), whose held-out
 * fifth the rules were not tuned on. The goal is 97 % right on
 * retryability and 90 % on category: the issue 4 corpus and the tuning
 * split must meet it; the held-out split, which does not meet it yet, must
 * stay at or above a floor (HOLDOUT_FLOOR_*), and the gap to the goal is
 * printed. Figures on the entries marked `verified` (text checked against
 * the named source) are printed apart.
 *
 * Loads config/recovery.yaml (rules and tool manifests), classifies every
 * entry with rd_classify, prints per set the accuracy per source family,
 * per error source (tool, llm, mcp), per strongest structured field given,
 * per expected category and per deciding tier and a confusion table of
 * categories, and lists every miss of the tuning sets with the rule that
 * decided it, so a failing run says which rules to improve. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "config/config.h"
#include "domain/classify.h"
#include "corpus_files.h"
#include "corpus_reader.h"

#ifndef RD_SOURCE_DIR
#define RD_SOURCE_DIR "."
#endif

/* The goal of issues 4 and 34: 97 % right on retryability and 90 % on
 * category. The corpus of issue 4 and the tuning split of the vendor corpus
 * are held to it. */
#define MIN_RETRYABILITY_ACCURACY 0.97
#define MIN_CATEGORY_ACCURACY 0.90

/* The held-out split of the vendor corpus does NOT meet the goal yet (the
 * goal is 97 % retryability and 90 % category there too). Until it does,
 * the test asserts only that it does not fall below the figures it had
 * when the floor was set, and prints the gap to the goal. Raise the floor
 * whenever the held-out figures rise; never lower it to let a rule change
 * pass. Only a change of the corpus itself (a text corrected to what its
 * source really says, a new batch) sets it again, from the figures
 * measured then, with the words tier's counts recounted for it
 * and its word weights refitted (scripts/word-counts.sh,
 * scripts/word-weights.py: they follow the corpus mechanically) and no
 * rule written for it. The held-out split is 2,654 entries (through the
 * seventy-fourth batch), of which 2,388 and 1,956 are right (89.98 % and
 * 73.70 %) with word weights for the words at least three tuning
 * messages hold, rounded down to the tenth of a percent.
 * docs/CLASSIFICATION.md ("Figures measured") has the figures. */
#define HOLDOUT_FLOOR_RETRYABILITY 0.899
#define HOLDOUT_FLOOR_CATEGORY 0.737

/* What the corpus itself must hold (issues 4 and 34). */
#define MIN_CORPUS_ENTRIES 1000   /* all files together */
#define MAX_FAMILY_SHARE 0.12     /* of the family's own file */
#define MIN_HOLDOUT_SHARE 0.15    /* of the vendor corpus */
#define MAX_HOLDOUT_SHARE 0.25

#define CONFIG_PATH RD_SOURCE_DIR "/config/recovery.yaml"
#define MISS_MESSAGE_SHOWN 160 /* bytes of a missed message printed */

/* The vendor files (CORPUS_VENDORS on) as the summary names them. */
static const char *const VENDOR_FILE_LABELS[] = {"batches 1-7", "batch 8",  "batch 9",
                                                 "batch 10",    "batch 11", "batch 12",
                                                 "batch 13",    "batch 14", "batch 15",
                                                 "batch 16",    "batch 17", "batch 18",
                                                 "batch 19",    "batch 20", "batch 21",
                                                 "batch 22",    "batch 23", "batch 24",
                                                 "batch 25",    "batch 26", "batch 27",
                                                 "batch 28",    "batch 29", "batch 30",
                                                 "batch 31",    "batch 32", "batch 33",
                                                 "batch 34",    "batch 35", "batch 36",
                                                 "batch 37",    "batch 38", "batch 39",
                                                 "batch 40",    "batch 41", "batch 42",
                                                 "batch 43",    "batch 44", "batch 45",
                                                 "batch 46",    "batch 47", "batch 48",
                                                 "batch 49",    "batch 50", "batch 52",
                                                 "batch 53",    "batch 54", "batch 55",
                                                 "batch 56",    "batch 57", "batch 58",
                                                 "batch 59",    "batch 60", "batch 61",
                                                 "batch 62",    "batch 63", "batch 64",
                                                 "batch 65",    "batch 66", "batch 67",
                                                 "batch 68",    "batch 69", "batch 70",
                                                 "batch 71",    "batch 72", "batch 73",
                                                 "batch 74"};
_Static_assert(sizeof VENDOR_FILE_LABELS / sizeof VENDOR_FILE_LABELS[0] ==
                   N_CORPORA - CORPUS_VENDORS,
               "one label per vendor file");

typedef struct fixture {
    rd_config *cfg;
    rd_corpus corpus[N_CORPORA];
} fixture;

static int teardown(void **state);

static int setup(void **state)
{
    static fixture fx;
    char err[RD_CONFIG_ERR_MAX];
    /* RD_CORPUS_CONFIG measures another ruleset (scripts/rule-precision.py) */
    const char *config = getenv("RD_CORPUS_CONFIG");
    fx.cfg = rd_config_load(config && *config ? config : CONFIG_PATH, err, sizeof err);
    if (!fx.cfg) {
        fprintf(stderr, "config: %s\n", err);
        return -1;
    }
    *state = &fx;
    for (int k = 0; k < N_CORPORA; k++) {
        char cerr[RD_CORPUS_ERR_MAX];
        if (rd_corpus_load(CORPUS_PATHS[k], &fx.corpus[k], cerr, sizeof cerr) != RD_CORPUS_OK) {
            fprintf(stderr, "corpus: %s\n", cerr);
            teardown(state);
            return -1;
        }
    }
    return 0;
}

static int teardown(void **state)
{
    fixture *fx = *state;
    for (int k = 0; k < N_CORPORA; k++) {
        rd_corpus_free(&fx->corpus[k]);
        memset(&fx->corpus[k], 0, sizeof fx->corpus[k]);
    }
    rd_config_free(fx->cfg);
    fx->cfg = NULL; /* cmocka tears down after a failed setup too */
    return 0;
}

/* ---- the corpus is what issues 4 and 34 ask for ---- */

static size_t family_size(const rd_corpus *c, const char *family, size_t *transient,
                          size_t *permanent)
{
    size_t n = 0;
    *transient = *permanent = 0;
    for (size_t i = 0; i < c->n_entries; i++) {
        if (strcmp(c->entries[i].family, family) != 0)
            continue;
        n++;
        if (c->entries[i].expect_retryability == RD_TRANSIENT)
            (*transient)++;
        else
            (*permanent)++;
    }
    return n;
}

static void test_corpus_is_large_spread_and_sourced(void **state)
{
    const fixture *fx = *state;
    size_t total = 0;
    for (int k = 0; k < N_CORPORA; k++) {
        const rd_corpus *c = &fx->corpus[k];
        total += c->n_entries;
        for (size_t i = 0; i < c->n_entries; i++)
            assert_true(strlen(c->entries[i].provenance) > 0);
        for (size_t f = 0; f < c->n_families; f++) {
            size_t transient, permanent;
            size_t n = family_size(c, c->families[f], &transient, &permanent);
            if ((double)n > MAX_FAMILY_SHARE * (double)c->n_entries || transient == 0
                || permanent == 0)
                fprintf(stderr, "family %s: %zu entries (%zu transient, %zu permanent)\n",
                        c->families[f], n, transient, permanent);
            assert_true((double)n <= MAX_FAMILY_SHARE * (double)c->n_entries);
            assert_true(transient > 0 && permanent > 0);
        }
    }
    assert_true(total >= MIN_CORPUS_ENTRIES);
}

/* The held-out split is the hash's, not a choice made after seeing misses:
 * every entry of the vendor files is held out exactly when its id hashes
 * there, and the issue 4 corpus (tuned on already) has none. */
static void test_corpus_split_is_fixed(void **state)
{
    const fixture *fx = *state;
    const rd_corpus *old = &fx->corpus[CORPUS_ISSUE4];
    for (size_t i = 0; i < old->n_entries; i++)
        assert_false(old->entries[i].holdout);
    for (int k = CORPUS_VENDORS; k <= CORPUS_BATCH9; k++) {
        const rd_corpus *c = &fx->corpus[k];
        size_t held = 0;
        for (size_t i = 0; i < c->n_entries; i++) {
            const rd_corpus_entry *e = &c->entries[i];
            if (e->holdout != rd_corpus_hash_says_holdout(e->id))
                fprintf(stderr, "%s: split %s, the hash says %s\n", e->id,
                        e->holdout ? "holdout" : "tuning",
                        rd_corpus_hash_says_holdout(e->id) ? "holdout" : "tuning");
            assert_int_equal(e->holdout, rd_corpus_hash_says_holdout(e->id));
            held += e->holdout;
        }
        assert_true((double)held >= MIN_HOLDOUT_SHARE * (double)c->n_entries);
        assert_true((double)held <= MAX_HOLDOUT_SHARE * (double)c->n_entries);
    }
}

/* ---- accuracy ---- */

typedef struct tally {
    size_t n, retry_ok, category_ok;
} tally;

static double ratio(size_t part, size_t whole)
{
    return whole ? (double)part / (double)whole : 1.0;
}

/* Prints up to MISS_MESSAGE_SHOWN bytes of a message on one line, with
 * control bytes escaped so a miss stays readable. */
static void print_escaped(const char *msg, size_t len)
{
    size_t shown = len < MISS_MESSAGE_SHOWN ? len : MISS_MESSAGE_SHOWN;
    for (size_t i = 0; i < shown; i++) {
        unsigned char ch = (unsigned char)msg[i];
        if (ch == '\n')
            fputs("\\n", stdout);
        else if (ch == '\t')
            fputs("\\t", stdout);
        else if (ch < 0x20)
            printf("\\x%02x", ch);
        else
            putchar(ch);
    }
    if (shown < len)
        fputs("...", stdout);
}

static void print_miss(const rd_corpus_entry *e, const rd_classification *got)
{
    printf("MISS %-34s expected %s/%s got %s/%s rule=%s%s\n     \"", e->id,
           rd_corpus_retryability_name(e->expect_retryability),
           rd_corpus_category_name(e->expect_category),
           rd_corpus_retryability_name(got->retryability), rd_corpus_category_name(got->category),
           got->rule_id, got->overridden ? " (overridden)" : "");
    print_escaped(e->message, e->message_len);
    puts("\"");
}

static void classify_entry(const rd_config *cfg, const rd_corpus_entry *e, rd_classification *out)
{
    rd_tool_error err;
    rd_corpus_to_error(e, &err);
    rd_classify(&cfg->rules, rd_config_find_tool(cfg, e->tool), e->tool, &err, out);
}

static void print_line(const char *name, const tally *t)
{
    printf("  %-24s %5zu %9.1f%% %9.1f%%\n", name, t->n, 100.0 * ratio(t->retry_ok, t->n),
           100.0 * ratio(t->category_ok, t->n));
}

static void count(tally *t, bool retry_ok, bool category_ok)
{
    t->n++;
    t->retry_ok += retry_ok;
    t->category_ok += category_ok;
}

/* The strongest structured field an entry carries, in the order the rules
 * file reads them (docs/CLASSIFICATION.md, "Precedence"). */
enum { SIGNAL_CODE, SIGNAL_HTTP, SIGNAL_GRPC, SIGNAL_EXCEPTION, SIGNAL_KIND, SIGNAL_TEXT, N_SIGNALS };
static const char *const SIGNAL_NAMES[N_SIGNALS] = {
    "code", "http status", "grpc code", "exception type", "kind", "message only",
};

static int signal_of(const rd_corpus_entry *e)
{
    if (e->code[0])
        return SIGNAL_CODE;
    if (e->http_status)
        return SIGNAL_HTTP;
    if (e->grpc_code)
        return SIGNAL_GRPC;
    if (e->exception_type[0])
        return SIGNAL_EXCEPTION;
    return e->kind ? SIGNAL_KIND : SIGNAL_TEXT;
}

/* One measured set: the entries of one or more corpora whose split is
 * `holdout`. */
typedef struct set_report {
    tally total;
    tally by_source[RD_SOURCE_COUNT]; /* by the error's source (tool, llm, mcp; unset) */
    tally by_signal[N_SIGNALS];       /* by the strongest field given */
    tally by_category[RD_CAT_COUNT];  /* by the expected category */
    tally by_tier[RD_TIER_COUNT];     /* by the tier that decided */
    size_t confusion[RD_CAT_COUNT][RD_CAT_COUNT]; /* [expected][got] */
    tally verified;                   /* the entries whose text was checked */
} set_report;

static void print_confusion(const set_report *r)
{
    printf("  confusion (rows: expected category, columns: answered)\n  %-17s", "");
    for (int g = 1; g < RD_CAT_COUNT; g++)
        printf(" %6.6s", rd_corpus_category_names[g]);
    putchar('\n');
    for (int x = 1; x < RD_CAT_COUNT; x++) {
        printf("  %-17s", rd_corpus_category_names[x]);
        for (int g = 1; g < RD_CAT_COUNT; g++)
            printf(" %6zu", r->confusion[x][g]);
        putchar('\n');
    }
}

/* Measures one set (the entries of corpora cs[0..n_cs) with the given
 * split), prints its figures (per family, per expected category, per
 * deciding tier, the confusion table) and, when show_misses, every miss.
 * Families are those declared by cs[0]; the other files use its names. */
static void measure_set(const rd_config *cfg, const rd_corpus *const *cs, size_t n_cs,
                        bool holdout, const char *title, bool show_misses, set_report *r)
{
    memset(r, 0, sizeof *r);
    const rd_corpus *c = cs[0];
    tally *per_family = calloc(c->n_families ? c->n_families : 1, sizeof *per_family);
    assert_non_null(per_family);
    printf("\n==== %s ====\n", title);
    if (show_misses)
        printf("Misses (retryability or category differs from the corpus):\n");
    for (size_t k = 0; k < n_cs; k++) {
        for (size_t i = 0; i < cs[k]->n_entries; i++) {
            const rd_corpus_entry *e = &cs[k]->entries[i];
            if (e->holdout != holdout)
                continue;
            rd_classification got;
            classify_entry(cfg, e, &got);
            bool retry_ok = got.retryability == e->expect_retryability;
            bool category_ok = got.category == e->expect_category;
            for (size_t f = 0; f < c->n_families; f++)
                if (strcmp(c->families[f], e->family) == 0)
                    count(&per_family[f], retry_ok, category_ok);
            count(&r->total, retry_ok, category_ok);
            if (e->verified)
                count(&r->verified, retry_ok, category_ok);
            count(&r->by_category[e->expect_category], retry_ok, category_ok);
            count(&r->by_source[e->source], retry_ok, category_ok);
            count(&r->by_signal[signal_of(e)], retry_ok, category_ok);
            count(&r->by_tier[rd_rule_tier(got.rule_id)], retry_ok, category_ok);
            if (got.category > 0 && got.category < RD_CAT_COUNT)
                r->confusion[e->expect_category][got.category]++;
            if (show_misses && (!retry_ok || !category_ok))
                print_miss(e, &got);
        }
    }
    printf("\n  %-24s %5s %10s %10s\n", "family", "n", "retry", "category");
    for (size_t f = 0; f < c->n_families; f++)
        if (per_family[f].n)
            print_line(c->families[f], &per_family[f]);
    printf("  %-24s %5s %10s %10s\n", "error source", "n", "retry", "category");
    for (int k = 0; k < RD_SOURCE_COUNT; k++)
        if (r->by_source[k].n)
            print_line(k ? rd_corpus_source_names[k] : "(not given)", &r->by_source[k]);
    printf("  %-24s %5s %10s %10s\n", "strongest field given", "n", "retry", "category");
    for (int k = 0; k < N_SIGNALS; k++)
        if (r->by_signal[k].n)
            print_line(SIGNAL_NAMES[k], &r->by_signal[k]);
    printf("  %-24s %5s %10s %10s\n", "expected category", "n", "retry", "category");
    for (int k = 1; k < RD_CAT_COUNT; k++)
        if (r->by_category[k].n)
            print_line(rd_corpus_category_names[k], &r->by_category[k]);
    printf("  %-24s %5s %10s %10s\n", "deciding tier", "n", "retry", "category");
    for (int t = 0; t < RD_TIER_COUNT; t++)
        if (r->by_tier[t].n)
            print_line(rd_tier_name((rd_tier)t), &r->by_tier[t]);
    print_confusion(r);
    print_line("verified entries", &r->verified);
    print_line("OVERALL", &r->total);
    free(per_family);
}

static bool meets(const tally *t, double min_retry, double min_category)
{
    return ratio(t->retry_ok, t->n) >= min_retry && ratio(t->category_ok, t->n) >= min_category;
}

static bool meets_goal(const tally *t)
{
    return meets(t, MIN_RETRYABILITY_ACCURACY, MIN_CATEGORY_ACCURACY);
}

/* RD_CORPUS_DUMP=FILE writes every entry's answer as a tab-separated line
 * (file, id, split, expected and answered retryability/category, rule,
 * tier), for measuring rules across batches; held-out lines are for
 * figures, not for tuning. */
static void dump_answers(const rd_config *cfg, const rd_corpus *corpora, const char *path)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "file\tid\tsplit\texpected\tanswered\trule\ttier\n");
    for (int k = 0; k < N_CORPORA; k++) {
        const char *name = strrchr(CORPUS_PATHS[k], '/');
        for (size_t i = 0; i < corpora[k].n_entries; i++) {
            const rd_corpus_entry *e = &corpora[k].entries[i];
            rd_classification got;
            classify_entry(cfg, e, &got);
            fprintf(f, "%s\t%s\t%s\t%s/%s\t%s/%s\t%s\t%s\n", name + 1, e->id,
                    e->holdout ? "holdout" : "tuning",
                    rd_corpus_retryability_name(e->expect_retryability),
                    rd_corpus_category_name(e->expect_category),
                    rd_corpus_retryability_name(got.retryability),
                    rd_corpus_category_name(got.category), got.rule_id,
                    rd_tier_name(rd_rule_tier(got.rule_id)));
        }
    }
    assert_int_equal(fclose(f), 0);
}

/* The held-out misses are not listed unless asked for
 * (RD_CORPUS_SHOW_HOLDOUT=1): rules are tuned on the other sets only. */
static void test_corpus_accuracy(void **state)
{
    const fixture *fx = *state;
    bool show_holdout = getenv("RD_CORPUS_SHOW_HOLDOUT") != NULL;
    const char *dump = getenv("RD_CORPUS_DUMP");
    if (dump && *dump)
        dump_answers(fx->cfg, fx->corpus, dump);
    const rd_corpus *issue4[] = {&fx->corpus[CORPUS_ISSUE4]};
    enum { N_VENDOR_FILES = N_CORPORA - CORPUS_VENDORS };
    const rd_corpus *vendors[N_VENDOR_FILES];
    for (size_t k = 0; k < N_VENDOR_FILES; k++)
        vendors[k] = &fx->corpus[CORPUS_VENDORS + k];
    set_report old, tuning, held, per_file[N_VENDOR_FILES][2]; /* [k][0] tuning, [k][1] held out */
    measure_set(fx->cfg, issue4, 1, false, "errors.yaml (issue 4)", true, &old);
    measure_set(fx->cfg, vendors, N_VENDOR_FILES, false,
                "vendor corpus (all its files), tuning split", true, &tuning);
    measure_set(fx->cfg, vendors, N_VENDOR_FILES, true,
                "vendor corpus (all its files), held-out split", show_holdout, &held);
    for (size_t k = 0; k < N_VENDOR_FILES; k++)
        for (int h = 0; h < 2; h++) {
            const char *path = CORPUS_PATHS[CORPUS_VENDORS + k], *name = strrchr(path, '/');
            char title[96];
            snprintf(title, sizeof title, "%s, %s split", name ? name + 1 : path,
                     h ? "held-out" : "tuning");
            measure_set(fx->cfg, vendors + k, 1, h, title, false, &per_file[k][h]);
        }
    printf("\n%-26s %5s %10s %10s\n", "set", "n", "retry", "category");
    print_line("errors.yaml", &old.total);
    print_line("vendors, tuning", &tuning.total);
    for (size_t k = 0; k < N_VENDOR_FILES; k++) {
        char label[48];
        snprintf(label, sizeof label, "  of it %s", VENDOR_FILE_LABELS[k]);
        print_line(label, &per_file[k][0].total);
    }
    print_line("vendors, held out", &held.total);
    for (size_t k = 0; k < N_VENDOR_FILES; k++) {
        char label[48];
        snprintf(label, sizeof label, "  of it %s", VENDOR_FILE_LABELS[k]);
        print_line(label, &per_file[k][1].total);
    }
    printf("%-26s %5s %10s %10s\n", "verified entries only", "n", "retry", "category");
    print_line("errors.yaml", &old.verified);
    print_line("vendors, tuning", &tuning.verified);
    print_line("vendors, held out", &held.verified);
    printf("goal: retryability >= %.0f%%, category >= %.0f%% (asserted on errors.yaml and "
           "the tuning split)\n",
           100.0 * MIN_RETRYABILITY_ACCURACY, 100.0 * MIN_CATEGORY_ACCURACY);
    printf("held out: floor %.1f%% / %.1f%% (asserted); gap to the goal %+.1f / %+.1f "
           "points%s\n",
           100.0 * HOLDOUT_FLOOR_RETRYABILITY, 100.0 * HOLDOUT_FLOOR_CATEGORY,
           100.0 * (ratio(held.total.retry_ok, held.total.n) - MIN_RETRYABILITY_ACCURACY),
           100.0 * (ratio(held.total.category_ok, held.total.n) - MIN_CATEGORY_ACCURACY),
           meets_goal(&held.total) ? " (goal met: make it the assertion)" : " (goal not met)");
    /* exact counts, since a floor raised from rounded percentages can sit
     * above the figures it was read from */
    printf("held out: %zu and %zu of %zu right; the floor asks for %.0f and %.0f\n",
           held.total.retry_ok, held.total.category_ok, held.total.n,
           ceil(HOLDOUT_FLOOR_RETRYABILITY * (double)held.total.n - 1e-9),
           ceil(HOLDOUT_FLOOR_CATEGORY * (double)held.total.n - 1e-9));

    assert_true(meets_goal(&old.total));
    assert_true(meets_goal(&tuning.total));
    assert_true(meets(&held.total, HOLDOUT_FLOOR_RETRYABILITY, HOLDOUT_FLOOR_CATEGORY));
}

/* Entries that name a kind must get exactly it: whether the tool ran
 * (004) is read from the kind, so a near miss is a wrong turn verdict. */
static void test_corpus_kinds(void **state)
{
    const fixture *fx = *state;
    size_t checked = 0, wrong = 0;
    for (int k = 0; k < N_CORPORA; k++) {
        const rd_corpus *c = &fx->corpus[k];
        for (size_t i = 0; i < c->n_entries; i++) {
            const rd_corpus_entry *e = &c->entries[i];
            if (!e->has_expect_kind)
                continue;
            rd_classification got;
            classify_entry(fx->cfg, e, &got);
            checked++;
            if (got.kind != e->expect_kind || got.executed != rd_kind_executed(e->expect_kind)) {
                wrong++;
                printf("KIND MISS %s: expected %s got %s (executed %d) rule=%s\n", e->id,
                       rd_corpus_kind_names[e->expect_kind], rd_corpus_kind_names[got.kind],
                       got.executed, got.rule_id);
            }
        }
    }
    assert_true(checked > 0);
    assert_int_equal(wrong, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_corpus_is_large_spread_and_sourced),
        cmocka_unit_test(test_corpus_split_is_fixed),
        cmocka_unit_test(test_corpus_accuracy),
        cmocka_unit_test(test_corpus_kinds),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
