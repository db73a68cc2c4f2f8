/* The compiled form of the rules, shared by the files that build it
 * (matcher_build.c) and read it (matcher.c); nothing outside them uses it. */
#ifndef RD_DOMAIN_MATCHER_INTERNAL_H
#define RD_DOMAIN_MATCHER_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "domain/hash.h"
#include "domain/matcher.h"

#define HAS_OUTPUT UINT32_C(0x80000000)
#define NO_STATE UINT32_MAX
#define NONE SIZE_MAX

/* ASCII folding only: rules are ASCII, messages any bytes. */
static inline unsigned char fold(unsigned char c)
{
    return (c >= 'A' && c <= 'Z') ? (unsigned char)(c + ('a' - 'A')) : c;
}

/* ---- the compiled form ---- */

/* Which fields a rule's conditions read; a rule can only hold when the
 * error gives all of them (an absent field never matches a condition). */
enum {
    NEED_HTTP = 1 << 0,
    NEED_GRPC = 1 << 1,
    NEED_CODE = 1 << 2,
    NEED_EXCEPTION = 1 << 3,
    NEED_KIND = 1 << 4,
    NEED_SOURCE = 1 << 5,
};

#define NEED_MASKS 64 /* every combination of the NEED_* bits */

/* PASS_GENERIC: structured rules on generic exception types, read only
 * when neither the structured nor the message pass decided. */
typedef enum { PASS_STRUCTURED, PASS_MIXED, PASS_MESSAGE, PASS_GENERIC } rule_pass;

/* Rules in file order: a view into rd_matcher.lists. */
typedef struct rule_list {
    const uint32_t *v;
    size_t n;
} rule_list;

/* A code or exception type of some rule, lower-cased; a name index is
 * sorted by (name, rule), so the entries equal to one name form a run in
 * rule order. */
typedef struct name_entry {
    char *name;
    uint32_t rule;
} name_entry;

/* One distinct name of an index: its hash (name_hash), its length and
 * its run of entries. n == 0: an empty slot. */
typedef struct name_slot {
    uint64_t hash;
    uint32_t len, at, n;
} name_slot;

/* The entries, and an open-addressing table of their distinct names
 * (mask + 1 slots, a power of two at least twice their number), so a
 * lookup hashes the given name once and compares it whole about once. */
typedef struct name_index {
    name_entry *v;
    size_t n;
    name_slot *slots;
    size_t mask;
} name_index;

/* The bytes of w with A-Z made a-z, eight at a time (fold() on each): in
 * each byte's high bit, the first sum marks it >= 'A' and the second > 'Z';
 * bytes of 0x80 and above are left as they are. */
static inline uint64_t fold8(uint64_t w)
{
    const uint64_t ones = UINT64_C(0x0101010101010101), high = ones * 0x80;
    uint64_t low7 = w & ~high;
    uint64_t from_a = low7 + ones * (0x80 - 'A');
    uint64_t past_z = low7 + ones * (0x80 - 'Z' - 1);
    uint64_t upper = (from_a ^ past_z) & ~w & high;
    return w | (upper >> 2);
}

/* The key of a name index's table: the hash of s[0..n) folded, the same
 * for the stored names and for an error's. */
static inline uint64_t name_hash(const char *s, size_t n)
{
    return rd_hash_bytes(s, n, 0, fold8);
}

typedef struct name_run {
    const name_entry *v;
    size_t n;
} name_run;

typedef struct ac_pattern {
    uint32_t len;
    bool boundary_start, boundary_end;
    uint32_t rules_at, n_rules;   /* into pattern_rules, ascending */
} ac_pattern;

typedef struct state_outputs {
    uint32_t at, n;               /* into outputs: patterns ending in this state */
} state_outputs;

/* An Aho-Corasick automaton over some rules' patterns. */
typedef struct ac_automaton {
    uint8_t byte_class[256];
    uint32_t n_classes;
    size_t n_states;
    uint32_t *delta;              /* n_states * n_classes row entries */
    state_outputs *state_out;     /* by state */
    uint32_t *outputs;            /* pattern ids */
    ac_pattern *patterns;
    size_t n_patterns;
    uint32_t *pattern_rules;
} ac_automaton;

struct rd_matcher {
    size_t n_rules;
    uint8_t *need;                /* by rule: NEED_* bits */
    uint8_t *pass;                /* by rule: rule_pass */
    uint8_t *tier;                /* by rule: rd_tier of its id */
    /* By rule: the least range holding every http_status range of it (all
     * of int32 for a rule without one), so the structured pass passes
     * over most rules on HTTP status without testing their conditions. */
    rd_int_range *http_span;
    /* By the NEED_* bits an error gives, the rules naming no code or
     * exception type that can hold for it: an error sending only a message
     * skips every rule on HTTP status without testing each. The rules that
     * name one are reached through the name indexes' runs. At most 64 x 4
     * bytes per rule (1 MiB for RD_RULES_MAX rules). */
    rule_list structured[NEED_MASKS]; /* rules without patterns */
    rule_list mixed[NEED_MASKS];      /* structured conditions + patterns */
    rule_list generic[NEED_MASKS];    /* generic.* rules, after the message pass */
    uint32_t *lists;                  /* the storage of all three */
    name_index codes, exception_types;

    /* The patterns of the rules before late_from, and those of the
     * weak-word rules from late_from on: the last message rules, read only
     * when no earlier rule holds, so most texts never walk their patterns. */
    ac_automaton text, late;
    size_t late_from;
};


#endif
