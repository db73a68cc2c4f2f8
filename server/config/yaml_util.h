/* A small layer over libyaml for the configuration loader.
 *
 * rd_yaml_load turns one file into a tree of nodes that remember their line;
 * the getters below check a value's type and range and, when it is wrong,
 * write "FILE:LINE: KEY: problem" into the context's error buffer and return
 * RD_ERR_CONFIG.
 *
 * Deliberately refused, with a message: anchors, aliases and explicit tags
 * (the formats need none, and aliases would let a tiny file expand into a
 * huge tree), more than one document, non-scalar mapping keys, NUL bytes in
 * a scalar, nesting deeper than RD_YAML_MAX_DEPTH, files larger than
 * RD_YAML_MAX_BYTES and trees of more than RD_YAML_MAX_NODES nodes.
 *
 * Ownership: the tree from rd_yaml_load belongs to the caller, who releases
 * it with rd_yaml_free (NULL is fine). Getters that return text either
 * borrow it from the tree (const char *) or return a malloc'd copy that the
 * caller owns (char **), as each one says. */
#ifndef RD_CONFIG_YAML_UTIL_H
#define RD_CONFIG_YAML_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RD_YAML_MAX_DEPTH 32
#define RD_YAML_MAX_BYTES (4u * 1024u * 1024u)
#define RD_YAML_MAX_NODES 1000000u
#define RD_YPATH_MAX 512

typedef enum { RD_YSCALAR = 1, RD_YMAP, RD_YSEQ } rd_ynode_type;

typedef struct rd_ynode rd_ynode;
struct rd_ynode {
    rd_ynode_type type;
    int line;            /* 1-based, where the node itself starts */
    int key_line;        /* the line of the key holding this node (where a
                            missing sub-key is reported); else `line` */
    /* scalar */
    char *text;          /* NUL-terminated, never NULL for a scalar */
    size_t len;
    bool plain;          /* unquoted: may be read as a number, a bool or null */
    /* mapping: keys[i] -> items[i]; sequence: items[i] (keys is NULL) */
    rd_ynode **keys;
    rd_ynode **items;
    size_t n;
    size_t cap;
    rd_ynode *pending_key; /* while building: a key still waiting for its value */
};

/* Where errors go. `file` is the path printed in messages. */
typedef struct rd_yctx {
    const char *file;
    char *err;
    size_t err_cap;
} rd_yctx;

/* Writes "FILE:LINE: PATH: <fmt>" and returns RD_ERR_CONFIG. */
int rd_yerr(const rd_yctx *c, int line, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Parses c->file. On success *root is a tree the caller frees; on error
 * *root is NULL and the message names the file and line. An empty file (or
 * one with only comments) is an error. */
int rd_yaml_load(const rd_yctx *c, rd_ynode **root);
void rd_yaml_free(rd_ynode *node);

/* "parent.key" (or "key" at the top) and "parent[i]", into buf. */
const char *rd_ypath(char *buf, const char *parent, const char *key);
const char *rd_ypath_index(char *buf, const char *parent, size_t i);

const char *rd_ytype_name(const rd_ynode *node);
/* A plain empty scalar, "~" or null: a key written with no value. */
bool rd_yis_null(const rd_ynode *node);

/* Type check: RD_OK, or "expected a mapping, got a list". */
int rd_yexpect(const rd_yctx *c, const rd_ynode *node, const char *path, rd_ynode_type type);

/* Rejects keys not in `allowed` (NULL-terminated) and keys given twice. */
int rd_ymap_check(const rd_yctx *c, const rd_ynode *map, const char *path,
                  const char *const *allowed);
/* The value of key in map, or NULL when absent. */
const rd_ynode *rd_ymap_get(const rd_ynode *map, const char *key);
/* The line of key in map, or the map's own line when absent. */
int rd_ymap_key_line(const rd_ynode *map, const char *key);

/* Scalar readers. `path` names the value in messages. */
int rd_yscalar_int(const rd_yctx *c, const rd_ynode *node, const char *path, int64_t lo,
                   int64_t hi, int64_t *out);
int rd_yscalar_double(const rd_yctx *c, const rd_ynode *node, const char *path, double lo,
                      double hi, double *out);
int rd_yscalar_bool(const rd_yctx *c, const rd_ynode *node, const char *path, bool *out);
/* Non-empty text of at most max_len bytes, borrowed from the tree. */
int rd_yscalar_str(const rd_yctx *c, const rd_ynode *node, const char *path, size_t max_len,
                   const char **out);

/* An optional text key of a mapping: when it is absent, *out is left as
 * it was and RD_OK is returned; when present, *out is replaced by a
 * malloc'd copy the caller owns (the previous *out is freed). The keys
 * of the configuration files go through config_keys.h instead. */
int rd_yget_str(const rd_yctx *c, const rd_ynode *map, const char *path, const char *key,
                size_t max_len, char **out);

#endif
