/* Configuration keys described once. A section of a configuration file is
 * a table of rows; each row says what the key is called, its type and
 * range, its default, where in the struct it goes and what it does. From
 * the tables come the defaults (rd_keys_defaults), the parsing with every
 * error as "FILE:LINE: KEY: problem" (rd_keys_parse), the release of what
 * parsing allocated (rd_keys_free) and the documentation's key tables
 * (rd_keys_markdown). Adding a key is adding a row, to the table of its
 * section (config_tables.h says which file holds which), e.g.
 *
 *     RD_K_BOOL(rd_redis_config, "cluster", cluster, false, "Redis Cluster"),
 *
 * beside the field in its struct, then refreshing the docs with
 * scripts/config-keys-doc.sh (ctest config.docs_key_table compares them).
 *
 * Checks between keys (a certificate needs its key, sentinels need a
 * master name) are a table's `check`, run after its rows are read.
 *
 * Ownership: text rows write malloc'd strings into char * fields, which
 * rd_keys_free releases (secrets are wiped first). Custom rows own what
 * they allocate and release it in their `release`. */
#ifndef RD_CONFIG_CONFIG_KEYS_H
#define RD_CONFIG_CONFIG_KEYS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "config/yaml_util.h"

#define RD_DAY_MS 86400000LL

typedef enum {
    RD_KEY_INT,        /* integer lo..hi (0 <= lo), into an integer field of `width` bytes */
    RD_KEY_OFF_OR_INT, /* 0 (off) or lo..hi */
    RD_KEY_DOUBLE,     /* number dlo..dhi, into a double */
    RD_KEY_BOOL,       /* true | false */
    RD_KEY_TEXT,       /* non-empty text of at most `hi` bytes, into a char * */
    RD_KEY_OPT_TEXT,   /* the same, or "" for unset (NULL) */
    RD_KEY_FILE,       /* a readable file, resolved against the file being read; "" = unset */
    RD_KEY_SECRET,     /* <name>_file or <name>_env: the first line of either, never printed */
    RD_KEY_ENUM,       /* one of `names`, stored as values[i] (or i) in an int-sized field */
    RD_KEY_SECTION,    /* a mapping read with `sub`, at base + offset */
    RD_KEY_INCLUDE,    /* the rows of `sub` belong to this mapping too (base + offset) */
    RD_KEY_CUSTOM,     /* read by `parse` */
} rd_key_type;

#define RD_KEY_NO_FIELD ((size_t)-1)

typedef struct rd_key_table rd_key_table;
typedef struct rd_key rd_key;

/* A custom row's reader: `value` is the key's node in `map`, `path` its
 * dotted name, `base` the table's struct. */
typedef int (*rd_key_parse_fn)(const rd_yctx *c, const rd_ynode *map, const rd_ynode *value,
                               const char *path, void *base);
/* A value check after the row is read: `field` points at the stored value. */
typedef int (*rd_key_check_fn)(const rd_yctx *c, int line, const char *path, const void *field);
/* A table's checks between its keys, after its rows are read. */
typedef int (*rd_table_check_fn)(const rd_yctx *c, const rd_ynode *map, const char *path,
                                 void *base);

struct rd_key {
    const char *name;
    rd_key_type type;
    size_t offset;               /* of the field in the table's struct; RD_KEY_NO_FIELD = none */
    size_t width;                /* sizeof the field */
    int64_t lo, hi;              /* INT, OFF_OR_INT; the longest text for TEXT, OPT_TEXT */
    double dlo, dhi;             /* DOUBLE */
    int64_t def;                 /* INT, OFF_OR_INT, BOOL; ENUM: index into names */
    double ddef;                 /* DOUBLE */
    const char *sdef;            /* TEXT, OPT_TEXT (NULL = unset) */
    const char *const *names;    /* ENUM, NULL-terminated */
    const int *values;           /* ENUM; NULL = the index */
    const rd_key_table *sub;     /* SECTION, INCLUDE; CUSTOM: the table it reads entries with */
    rd_key_parse_fn parse;       /* CUSTOM */
    void (*release)(void *base); /* CUSTOM: frees what parse stored */
    rd_key_check_fn check;       /* optional, after the value is stored */
    bool required;
    const char *type_doc;        /* CUSTOM: the type column of the docs */
    const char *range_doc;       /* CUSTOM (and overrides the generated range text) */
    const char *default_doc;     /* overrides the generated default text */
    const char *doc;             /* one line: what it does */
    bool restart;                /* a new value takes effect only after a restart */
    /* CUSTOM rows that need a restart: whether two structs differ in it */
    bool (*differs)(const void *a_base, const void *b_base);
};

struct rd_key_table {
    const char *title;           /* where it is: "server", or "defaults.retry_policy, tool.retry_policy" */
    const char *note;            /* a sentence under the heading in the docs, or NULL */
    const rd_key *keys;
    size_t n;
    rd_table_check_fn check;
    bool restart;                /* every key in it (and under it) needs a restart */
};

#define RD_KEY_TABLE(title_, note_, rows_, check_) \
    {title_, note_, rows_, sizeof rows_ / sizeof rows_[0], check_, false}
/* A table whose every key takes effect only after a restart. */
#define RD_KEY_TABLE_RESTART(title_, note_, rows_, check_) \
    {title_, note_, rows_, sizeof rows_ / sizeof rows_[0], check_, true}

/* Field of a row: its offset and width in struct `st`. */
#define RD_FIELD(st, f) .offset = offsetof(st, f), .width = sizeof(((st *)0)->f)

/* One row each, over struct `st` (field `f`). After the description, a
 * row may carry more designators, e.g. RD_RESTART. */
#define RD_RESTART .restart = true
#define RD_K_INT(st, key, f, lo_, hi_, def_, doc_, ...) \
    {.name = key, .type = RD_KEY_INT, RD_FIELD(st, f), .lo = lo_, .hi = hi_, .def = def_, \
     .doc = doc_, __VA_ARGS__}
#define RD_K_OFF(st, key, f, lo_, hi_, def_, doc_, ...) \
    {.name = key, .type = RD_KEY_OFF_OR_INT, RD_FIELD(st, f), .lo = lo_, .hi = hi_, \
     .def = def_, .doc = doc_, __VA_ARGS__}
#define RD_K_DOUBLE(st, key, f, lo_, hi_, def_, doc_, ...) \
    {.name = key, .type = RD_KEY_DOUBLE, RD_FIELD(st, f), .dlo = lo_, .dhi = hi_, \
     .ddef = def_, .doc = doc_, __VA_ARGS__}
#define RD_K_BOOL(st, key, f, def_, doc_, ...) \
    {.name = key, .type = RD_KEY_BOOL, RD_FIELD(st, f), .def = def_, .doc = doc_, __VA_ARGS__}
#define RD_K_TEXT(st, key, f, max_, def_, doc_, ...) \
    {.name = key, .type = RD_KEY_TEXT, RD_FIELD(st, f), .hi = max_, .sdef = def_, \
     .doc = doc_, __VA_ARGS__}
#define RD_K_FILE(st, key, f, doc_, ...) \
    {.name = key, .type = RD_KEY_FILE, RD_FIELD(st, f), .doc = doc_, __VA_ARGS__}
#define RD_K_SECRET(st, key, f, doc_, ...) \
    {.name = key, .type = RD_KEY_SECRET, RD_FIELD(st, f), .doc = doc_, __VA_ARGS__}
#define RD_K_ENUM(st, key, f, names_, values_, def_, doc_, ...) \
    {.name = key, .type = RD_KEY_ENUM, RD_FIELD(st, f), .names = names_, .values = values_, \
     .def = def_, .doc = doc_, __VA_ARGS__}
/* A nested mapping read into field f (a struct, or for a token its char *). */
#define RD_K_SECTION(st, key, f, sub_, doc_, ...) \
    {.name = key, .type = RD_KEY_SECTION, RD_FIELD(st, f), .sub = sub_, .doc = doc_, __VA_ARGS__}
/* A nested mapping whose keys go into the same struct as its parent's. */
#define RD_K_SECTION_HERE(key, sub_, doc_, ...) \
    {.name = key, .type = RD_KEY_SECTION, .offset = 0, .sub = sub_, .doc = doc_, __VA_ARGS__}

/* Sets every row's default into base, a zeroed struct (text rows:
 * strdup'd). RD_OK or RD_ERR_NOMEM. */
int rd_keys_defaults(const rd_key_table *t, void *base);

/* Reads `map` (the value of `path`) with table t into base: unknown and
 * duplicate keys are refused, naming the keys the table knows; keys
 * absent keep what base holds. map NULL: the section is absent, and a
 * required key in it is reported at `line`. */
int rd_keys_parse(const rd_yctx *c, const rd_ynode *map, int line, const char *path,
                  const rd_key_table *t, void *base);

/* Calls report(key, ctx) with the dotted name of every key of t that
 * needs a restart (its row's or its table's `restart`) and whose value
 * differs between the structs a and b. */
typedef void (*rd_key_change_fn)(const char *key, void *ctx);
void rd_keys_restart_changes(const rd_key_table *t, const void *a, const void *b,
                             const char *path, rd_key_change_fn report, void *ctx);

/* Copies the value of every row of t (and the tables under it) from src to
 * dst: what a manifest starts from. Text rows are strdup'd; custom rows are
 * not copied. RD_OK or RD_ERR_NOMEM. */
int rd_keys_copy(const rd_key_table *t, void *dst, const void *src);

/* Frees the text rows (and custom rows' release) of t in base. */
void rd_keys_free(const rd_key_table *t, void *base);

/* Whether every row of t (and the tables under it) is well formed: its
 * field width fits its type and range, its default lies in its range,
 * no key is named twice. RD_OK, or RD_ERR_INTERNAL with the first
 * problem in err ("table.key: problem"). For the tests. */
int rd_keys_self_check(const rd_key_table *t, char *err, size_t err_cap);

/* The sections of each file's table as Markdown, each table once: a
 * heading (`heading`, e.g. "###", then the title) and a row per key. */
void rd_keys_markdown(FILE *out, const rd_key_table *const *files, size_t n_files,
                      const char *heading);

#endif
