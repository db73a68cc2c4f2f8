/* Reader for tests/corpus/errors.yaml, the corpus of real error messages
 * with the classification a careful operator expects.
 *
 * Header-only (static functions) because each unit test is built from its
 * single test_*.c file; the benchmark in bench/ includes it too.
 *
 * Errors: rd_corpus_load returns RD_CORPUS_OK or -1 and writes
 * "FILE:LINE: KEY: problem" into err.
 * Ownership: an rd_corpus owns every string and array it points to and is
 * released with rd_corpus_free (which accepts NULL and a zeroed corpus).
 * rd_corpus_to_error fills an rd_tool_error whose strings borrow from the
 * entry, so the entry must outlive it. */
#ifndef RD_TESTS_CORPUS_READER_H
#define RD_TESTS_CORPUS_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

#include "domain/types.h"

#define RD_CORPUS_OK 0
#define RD_CORPUS_ERR_MAX 512

typedef struct rd_corpus_entry {
    char *id;
    char *family;
    char *message;               /* may hold any bytes; message_len counts them */
    size_t message_len;
    int32_t http_status;         /* 0 = not given */
    int32_t grpc_code;           /* 0 = not given */
    char *code;                  /* "" = not given (never NULL after load) */
    char *exception_type;        /* "" = not given */
    char *tool;                  /* "" = no tool id */
    rd_error_kind kind;
    rd_error_source source;
    rd_retryability expect_retryability;
    rd_category expect_category;
    bool has_expect_kind;        /* expect.kind given */
    rd_error_kind expect_kind;
    char *why;                   /* "" when the label needs no comment */
    bool holdout;                /* split: holdout (not used to tune the rules) */
    char *provenance;
    bool has_verified;           /* `verified` given (required) */
    bool verified;               /* the text was found in the named source */
    int line;                    /* 1-based line of the entry in the file */
} rd_corpus_entry;

typedef struct rd_corpus {
    rd_corpus_entry *entries;
    size_t n_entries;
    char **families;             /* as declared at the top of the file */
    size_t n_families;
} rd_corpus;

/* ---- enum names (the corpus spells them as the rules file does) ---- */

static const char *const rd_corpus_kind_names[RD_KIND_COUNT] = {
    "", "unknown_tool", "not_permitted", "invalid_parameters", "limit_exceeded",
    "canceled", "timeout", "transport_error", "execution_error", "internal_error",
};
static const char *const rd_corpus_category_names[RD_CAT_COUNT] = {
    "", "transient", "input_validation", "external_service", "permission",
    "logic", "resource", "unknown",
};
static const char *const rd_corpus_source_names[RD_SOURCE_COUNT] = {"", "tool", "llm", "mcp"};

/* Index of name in names[1..n-1], or -1. */
static inline int rd_corpus_lookup(const char *const *names, int n, const char *name)
{
    for (int i = 1; i < n; i++)
        if (strcmp(names[i], name) == 0)
            return i;
    return -1;
}

static inline const char *rd_corpus_category_name(rd_category c)
{
    return (c > 0 && c < RD_CAT_COUNT) ? rd_corpus_category_names[c] : "?";
}

static inline const char *rd_corpus_retryability_name(rd_retryability r)
{
    return r == RD_TRANSIENT ? "transient" : r == RD_PERMANENT ? "permanent" : "?";
}

/* ---- parsing ---- */

typedef struct rd_corpus_ctx {
    yaml_document_t *doc;
    const char *path;
    char *err;
    size_t err_cap;
} rd_corpus_ctx;

static inline int rd_corpus_fail(const rd_corpus_ctx *c, const yaml_node_t *at, const char *key,
                                 const char *problem)
{
    snprintf(c->err, c->err_cap, "%s:%lu: %s: %s", c->path,
             at ? (unsigned long)at->start_mark.line + 1 : 0UL, key, problem);
    return -1;
}

static inline char *rd_corpus_strndup(const char *s, size_t n)
{
    char *p = malloc(n + 1);
    if (p) {
        memcpy(p, s, n);
        p[n] = '\0';
    }
    return p;
}

static inline const char *rd_corpus_scalar(const yaml_node_t *n)
{
    return (const char *)n->data.scalar.value;
}

/* Copies a scalar (with its length, so NUL bytes survive) into *out. */
static inline int rd_corpus_take_string(const rd_corpus_ctx *c, const yaml_node_t *n,
                                        const char *key, char **out, size_t *out_len)
{
    if (n->type != YAML_SCALAR_NODE)
        return rd_corpus_fail(c, n, key, "expected a string");
    free(*out);
    *out = rd_corpus_strndup(rd_corpus_scalar(n), n->data.scalar.length);
    if (!*out)
        return rd_corpus_fail(c, n, key, "out of memory");
    if (out_len)
        *out_len = n->data.scalar.length;
    return RD_CORPUS_OK;
}

static inline int rd_corpus_take_int(const rd_corpus_ctx *c, const yaml_node_t *n,
                                     const char *key, long lo, long hi, int32_t *out)
{
    if (n->type != YAML_SCALAR_NODE)
        return rd_corpus_fail(c, n, key, "expected an integer");
    char *end = NULL;
    long v = strtol(rd_corpus_scalar(n), &end, 10);
    if (end == rd_corpus_scalar(n) || *end != '\0')
        return rd_corpus_fail(c, n, key, "expected an integer");
    if (v < lo || v > hi)
        return rd_corpus_fail(c, n, key, "out of range");
    *out = (int32_t)v;
    return RD_CORPUS_OK;
}

static inline int rd_corpus_take_enum(const rd_corpus_ctx *c, const yaml_node_t *n,
                                      const char *key, const char *const *names, int count,
                                      int *out)
{
    if (n->type != YAML_SCALAR_NODE)
        return rd_corpus_fail(c, n, key, "expected a name");
    if (n->data.scalar.length == 0) {
        *out = 0;
        return RD_CORPUS_OK;
    }
    int v = rd_corpus_lookup(names, count, rd_corpus_scalar(n));
    if (v < 0)
        return rd_corpus_fail(c, n, key, "unknown name");
    *out = v;
    return RD_CORPUS_OK;
}

static inline int rd_corpus_take_expect(const rd_corpus_ctx *c, const yaml_node_t *n,
                                        rd_corpus_entry *e)
{
    if (n->type != YAML_MAPPING_NODE)
        return rd_corpus_fail(c, n, "expect", "expected a mapping");
    for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
        yaml_node_t *k = yaml_document_get_node(c->doc, p->key);
        yaml_node_t *v = yaml_document_get_node(c->doc, p->value);
        const char *name = k->type == YAML_SCALAR_NODE ? rd_corpus_scalar(k) : "";
        if (v->type != YAML_SCALAR_NODE)
            return rd_corpus_fail(c, v, "expect", "expected a name");
        if (strcmp(name, "retryability") == 0) {
            if (strcmp(rd_corpus_scalar(v), "transient") == 0)
                e->expect_retryability = RD_TRANSIENT;
            else if (strcmp(rd_corpus_scalar(v), "permanent") == 0)
                e->expect_retryability = RD_PERMANENT;
            else
                return rd_corpus_fail(c, v, "expect.retryability", "transient or permanent");
        } else if (strcmp(name, "category") == 0) {
            int cat = rd_corpus_lookup(rd_corpus_category_names, RD_CAT_COUNT, rd_corpus_scalar(v));
            if (cat < 0)
                return rd_corpus_fail(c, v, "expect.category", "unknown category");
            e->expect_category = (rd_category)cat;
        } else if (strcmp(name, "kind") == 0) {
            int kind = 0;
            if (rd_corpus_take_enum(c, v, "expect.kind", rd_corpus_kind_names, RD_KIND_COUNT,
                                    &kind))
                return -1;
            e->expect_kind = (rd_error_kind)kind;
            e->has_expect_kind = true;
        } else {
            return rd_corpus_fail(c, k, "expect", "unknown key");
        }
    }
    if (!e->expect_retryability || !e->expect_category)
        return rd_corpus_fail(c, n, "expect", "needs retryability and category");
    return RD_CORPUS_OK;
}

static inline int rd_corpus_take_field(const rd_corpus_ctx *c, const char *key,
                                       const yaml_node_t *v, rd_corpus_entry *e)
{
    int tmp = 0;
    if (strcmp(key, "id") == 0)
        return rd_corpus_take_string(c, v, key, &e->id, NULL);
    if (strcmp(key, "family") == 0)
        return rd_corpus_take_string(c, v, key, &e->family, NULL);
    if (strcmp(key, "message") == 0)
        return rd_corpus_take_string(c, v, key, &e->message, &e->message_len);
    if (strcmp(key, "code") == 0)
        return rd_corpus_take_string(c, v, key, &e->code, NULL);
    if (strcmp(key, "exception_type") == 0)
        return rd_corpus_take_string(c, v, key, &e->exception_type, NULL);
    if (strcmp(key, "tool") == 0)
        return rd_corpus_take_string(c, v, key, &e->tool, NULL);
    if (strcmp(key, "why") == 0)
        return rd_corpus_take_string(c, v, key, &e->why, NULL);
    if (strcmp(key, "provenance") == 0)
        return rd_corpus_take_string(c, v, key, &e->provenance, NULL);
    if (strcmp(key, "http_status") == 0)
        return rd_corpus_take_int(c, v, key, 0, 599, &e->http_status);
    if (strcmp(key, "grpc_code") == 0)
        return rd_corpus_take_int(c, v, key, 0, 16, &e->grpc_code);
    if (strcmp(key, "expect") == 0)
        return rd_corpus_take_expect(c, v, e);
    if (strcmp(key, "split") == 0) {
        if (v->type != YAML_SCALAR_NODE || strcmp(rd_corpus_scalar(v), "holdout") != 0)
            return rd_corpus_fail(c, v, key, "the only split named is holdout");
        e->holdout = true;
        return RD_CORPUS_OK;
    }
    if (strcmp(key, "verified") == 0) {
        const char *b = v->type == YAML_SCALAR_NODE ? rd_corpus_scalar(v) : "";
        if (strcmp(b, "true") != 0 && strcmp(b, "false") != 0)
            return rd_corpus_fail(c, v, key, "expected true or false");
        e->has_verified = true;
        e->verified = strcmp(b, "true") == 0;
        return RD_CORPUS_OK;
    }
    if (strcmp(key, "kind") == 0) {
        if (rd_corpus_take_enum(c, v, key, rd_corpus_kind_names, RD_KIND_COUNT, &tmp))
            return -1;
        e->kind = (rd_error_kind)tmp;
        return RD_CORPUS_OK;
    }
    if (strcmp(key, "source") == 0) {
        if (rd_corpus_take_enum(c, v, key, rd_corpus_source_names, RD_SOURCE_COUNT, &tmp))
            return -1;
        e->source = (rd_error_source)tmp;
        return RD_CORPUS_OK;
    }
    return rd_corpus_fail(c, v, key, "unknown key");
}

/* Absent optional strings become "" so callers never see NULL. */
static inline int rd_corpus_default_strings(const rd_corpus_ctx *c, const yaml_node_t *at,
                                            rd_corpus_entry *e)
{
    char **optional[] = {&e->code, &e->exception_type, &e->tool, &e->why};
    for (size_t i = 0; i < sizeof optional / sizeof optional[0]; i++)
        if (!*optional[i] && !(*optional[i] = rd_corpus_strndup("", 0)))
            return rd_corpus_fail(c, at, "entries", "out of memory");
    return RD_CORPUS_OK;
}

static inline bool rd_corpus_has_family(const rd_corpus *corpus, const char *family)
{
    for (size_t i = 0; i < corpus->n_families; i++)
        if (strcmp(corpus->families[i], family) == 0)
            return true;
    return false;
}

static inline int rd_corpus_take_entry(const rd_corpus_ctx *c, const yaml_node_t *n,
                                       const rd_corpus *corpus, rd_corpus_entry *e)
{
    if (n->type != YAML_MAPPING_NODE)
        return rd_corpus_fail(c, n, "entries[]", "expected a mapping");
    e->line = (int)n->start_mark.line + 1;
    for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
        yaml_node_t *k = yaml_document_get_node(c->doc, p->key);
        if (k->type != YAML_SCALAR_NODE)
            return rd_corpus_fail(c, k, "entries[]", "keys must be strings");
        if (rd_corpus_take_field(c, rd_corpus_scalar(k), yaml_document_get_node(c->doc, p->value), e))
            return -1;
    }
    if (!e->id || !e->family || !e->message || !e->provenance || !e->expect_retryability
        || !e->has_verified)
        return rd_corpus_fail(c, n, "entries[]",
                              "id, family, message, expect, provenance and verified are required");
    if (!rd_corpus_has_family(corpus, e->family))
        return rd_corpus_fail(c, n, "family", "not listed in families");
    return rd_corpus_default_strings(c, n, e);
}

static inline int rd_corpus_take_families(const rd_corpus_ctx *c, const yaml_node_t *n,
                                          rd_corpus *corpus)
{
    if (n->type != YAML_SEQUENCE_NODE)
        return rd_corpus_fail(c, n, "families", "expected a list");
    size_t count = (size_t)(n->data.sequence.items.top - n->data.sequence.items.start);
    corpus->families = calloc(count ? count : 1, sizeof *corpus->families);
    if (!corpus->families)
        return rd_corpus_fail(c, n, "families", "out of memory");
    for (size_t i = 0; i < count; i++) {
        yaml_node_t *item = yaml_document_get_node(c->doc, n->data.sequence.items.start[i]);
        if (rd_corpus_take_string(c, item, "families[]", &corpus->families[i], NULL))
            return -1;
        corpus->n_families = i + 1;
    }
    return RD_CORPUS_OK;
}

static inline int rd_corpus_check_unique_ids(const rd_corpus_ctx *c, const rd_corpus *corpus)
{
    for (size_t i = 0; i < corpus->n_entries; i++)
        for (size_t j = 0; j < i; j++)
            if (strcmp(corpus->entries[i].id, corpus->entries[j].id) == 0) {
                snprintf(c->err, c->err_cap, "%s:%d: id: duplicate of line %d", c->path,
                         corpus->entries[i].line, corpus->entries[j].line);
                return -1;
            }
    return RD_CORPUS_OK;
}

static inline int rd_corpus_take_entries(const rd_corpus_ctx *c, const yaml_node_t *n,
                                         rd_corpus *corpus)
{
    if (n->type != YAML_SEQUENCE_NODE)
        return rd_corpus_fail(c, n, "entries", "expected a list");
    size_t count = (size_t)(n->data.sequence.items.top - n->data.sequence.items.start);
    corpus->entries = calloc(count ? count : 1, sizeof *corpus->entries);
    if (!corpus->entries)
        return rd_corpus_fail(c, n, "entries", "out of memory");
    for (size_t i = 0; i < count; i++) {
        yaml_node_t *item = yaml_document_get_node(c->doc, n->data.sequence.items.start[i]);
        corpus->n_entries = i + 1; /* counted first so a half-filled entry is freed */
        if (rd_corpus_take_entry(c, item, corpus, &corpus->entries[i]))
            return -1;
    }
    return rd_corpus_check_unique_ids(c, corpus);
}

/* families must come before entries in the file, so entries can be checked
 * against them as they are read. */
static inline int rd_corpus_take_root(const rd_corpus_ctx *c, const yaml_node_t *root,
                                      rd_corpus *corpus)
{
    if (!root || root->type != YAML_MAPPING_NODE)
        return rd_corpus_fail(c, root, "(root)", "expected a mapping with families and entries");
    for (yaml_node_pair_t *p = root->data.mapping.pairs.start; p < root->data.mapping.pairs.top; p++) {
        yaml_node_t *k = yaml_document_get_node(c->doc, p->key);
        yaml_node_t *v = yaml_document_get_node(c->doc, p->value);
        const char *name = k->type == YAML_SCALAR_NODE ? rd_corpus_scalar(k) : "";
        int rc;
        if (strcmp(name, "families") == 0)
            rc = rd_corpus_take_families(c, v, corpus);
        else if (strcmp(name, "entries") == 0)
            rc = rd_corpus_take_entries(c, v, corpus);
        else
            rc = rd_corpus_fail(c, k, name, "unknown key");
        if (rc)
            return rc;
    }
    if (!corpus->entries)
        return rd_corpus_fail(c, root, "entries", "missing");
    return RD_CORPUS_OK;
}

static inline void rd_corpus_free(rd_corpus *corpus)
{
    if (!corpus)
        return;
    for (size_t i = 0; i < corpus->n_entries; i++) {
        rd_corpus_entry *e = &corpus->entries[i];
        free(e->id);
        free(e->family);
        free(e->message);
        free(e->code);
        free(e->exception_type);
        free(e->tool);
        free(e->why);
        free(e->provenance);
    }
    free(corpus->entries);
    for (size_t i = 0; i < corpus->n_families; i++)
        free(corpus->families[i]);
    free(corpus->families);
    memset(corpus, 0, sizeof *corpus);
}

/* Fills *out (zeroed first). On failure *out is left empty. */
static inline int rd_corpus_load(const char *path, rd_corpus *out, char *err, size_t err_cap)
{
    memset(out, 0, sizeof *out);
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, err_cap, "%s:0: (file): cannot open", path);
        return -1;
    }
    yaml_parser_t parser;
    yaml_document_t doc;
    yaml_parser_initialize(&parser);
    yaml_parser_set_input_file(&parser, f);
    int rc = -1;
    if (!yaml_parser_load(&parser, &doc)) {
        snprintf(err, err_cap, "%s:%lu: (yaml): %s", path,
                 (unsigned long)parser.problem_mark.line + 1,
                 parser.problem ? parser.problem : "syntax error");
    } else {
        rd_corpus_ctx c = {&doc, path, err, err_cap};
        rc = rd_corpus_take_root(&c, yaml_document_get_root_node(&doc), out);
        yaml_document_delete(&doc);
    }
    yaml_parser_delete(&parser);
    fclose(f);
    if (rc)
        rd_corpus_free(out);
    return rc;
}

/* 32-bit FNV-1a of an entry id: the held-out split is the ids whose hash
 * is 0 modulo 5, fixed before the rules were tuned on the rest. */
static inline uint32_t rd_corpus_id_hash(const char *id)
{
    uint32_t h = 2166136261u;
    for (const unsigned char *p = (const unsigned char *)id; *p; p++) {
        h ^= *p;
        h *= 16777619u;
    }
    return h;
}

static inline bool rd_corpus_hash_says_holdout(const char *id)
{
    return rd_corpus_id_hash(id) % 5 == 0;
}

/* The error an executor would send for this entry. Borrows from e. */
static inline void rd_corpus_to_error(const rd_corpus_entry *e, rd_tool_error *out)
{
    memset(out, 0, sizeof *out);
    out->message = e->message;
    out->message_len = e->message_len;
    out->http_status = e->http_status;
    out->grpc_code = e->grpc_code;
    out->code = e->code;
    out->exception_type = e->exception_type;
    out->kind = e->kind;
    out->source = e->source;
}

#endif
