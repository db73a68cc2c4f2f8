/* The key tables (see config_keys.h): defaults, parsing, release, docs. */
#include "config/config_keys.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/config_secret.h"
#include "domain/err.h"

#define ENUM_TEXT_MAX 256
#define KNOWN_LIST_MAX 768

static void *field_of(void *base, const rd_key *k)
{
    return (char *)base + k->offset;
}

static bool has_field(const rd_key *k)
{
    return k->offset != RD_KEY_NO_FIELD;
}

/* An integer into a field of k->width bytes (ranges keep it in bounds). */
static void store_int(void *field, size_t width, int64_t v)
{
    switch (width) {
    case 8: { int64_t x = v; memcpy(field, &x, 8); break; }
    case 4: { int32_t x = (int32_t)v; memcpy(field, &x, 4); break; }
    case 2: { int16_t x = (int16_t)v; memcpy(field, &x, 2); break; }
    case 1: { int8_t x = (int8_t)v; memcpy(field, &x, 1); break; }
    default: break;
    }
}

static void store_text(void *field, char *text)
{
    char **slot = field;
    free(*slot);
    *slot = text;
}

/* ---- keys that need a restart ---- */

static bool texts_differ(const char *a, const char *b)
{
    return (!a || !b) ? a != b : strcmp(a, b) != 0;
}

static bool field_differs(const rd_key *k, const void *a, const void *b)
{
    const char *fa = (const char *)a + k->offset, *fb = (const char *)b + k->offset;
    switch (k->type) {
    case RD_KEY_TEXT:
    case RD_KEY_OPT_TEXT:
    case RD_KEY_FILE:
    case RD_KEY_SECRET:
        return texts_differ(*(char *const *)(const void *)fa, *(char *const *)(const void *)fb);
    case RD_KEY_CUSTOM:
        return k->differs && k->differs(a, b);
    default:
        return memcmp(fa, fb, k->width) != 0;
    }
}

static void restart_changes(const rd_key_table *t, const void *a, const void *b,
                            const char *path, bool restart, rd_key_change_fn report, void *ctx)
{
    restart = restart || t->restart;
    for (size_t i = 0; i < t->n; i++) {
        const rd_key *k = &t->keys[i];
        char p[RD_YPATH_MAX];
        if (k->type == RD_KEY_INCLUDE) {
            restart_changes(k->sub, (const char *)a + k->offset, (const char *)b + k->offset,
                            path, restart || k->restart, report, ctx);
        } else if (k->type == RD_KEY_SECTION) {
            restart_changes(k->sub, (const char *)a + k->offset, (const char *)b + k->offset,
                            rd_ypath(p, path, k->name), restart || k->restart, report, ctx);
        } else if ((restart || k->restart) && (has_field(k) || k->differs) &&
                   field_differs(k, a, b)) {
            report(rd_ypath(p, path, k->name), ctx);
        }
    }
}

void rd_keys_restart_changes(const rd_key_table *t, const void *a, const void *b,
                             const char *path, rd_key_change_fn report, void *ctx)
{
    restart_changes(t, a, b, path, false, report, ctx);
}

/* ---- copying ---- */

int rd_keys_copy(const rd_key_table *t, void *dst, const void *src)
{
    for (size_t i = 0; i < t->n; i++) {
        const rd_key *k = &t->keys[i];
        if (!has_field(k) || k->type == RD_KEY_CUSTOM)
            continue;
        void *d = field_of(dst, k);
        const void *s = (const char *)src + k->offset;
        int rc = RD_OK;
        switch (k->type) {
        case RD_KEY_SECTION:
        case RD_KEY_INCLUDE:
            rc = rd_keys_copy(k->sub, d, s);
            break;
        case RD_KEY_TEXT:
        case RD_KEY_OPT_TEXT:
        case RD_KEY_FILE:
        case RD_KEY_SECRET: {
            const char *text = *(char *const *)s;
            char *copy = text ? strdup(text) : NULL;
            if (text && !copy)
                return RD_ERR_NOMEM;
            store_text(d, copy);
            break;
        }
        default:
            memcpy(d, s, k->width);
            break;
        }
        if (rc != RD_OK)
            return rc;
    }
    return RD_OK;
}

/* ---- defaults and release ---- */

int rd_keys_defaults(const rd_key_table *t, void *base)
{
    for (size_t i = 0; i < t->n; i++) {
        const rd_key *k = &t->keys[i];
        if (!has_field(k))
            continue;
        void *f = field_of(base, k);
        switch (k->type) {
        case RD_KEY_INT:
        case RD_KEY_OFF_OR_INT:
            store_int(f, k->width, k->def);
            break;
        case RD_KEY_DOUBLE:
            *(double *)f = k->ddef;
            break;
        case RD_KEY_BOOL:
            *(bool *)f = k->def != 0;
            break;
        case RD_KEY_TEXT:
        case RD_KEY_OPT_TEXT:
            if (k->sdef && !(*(char **)f = strdup(k->sdef)))
                return RD_ERR_NOMEM;
            break;
        case RD_KEY_ENUM:
            store_int(f, k->width, k->values ? k->values[k->def] : k->def);
            break;
        case RD_KEY_SECTION:
        case RD_KEY_INCLUDE:
            if (rd_keys_defaults(k->sub, f) != RD_OK)
                return RD_ERR_NOMEM;
            break;
        case RD_KEY_FILE:
        case RD_KEY_SECRET:
        case RD_KEY_CUSTOM:
            break;
        }
    }
    return RD_OK;
}

void rd_keys_free(const rd_key_table *t, void *base)
{
    for (size_t i = 0; i < t->n; i++) {
        const rd_key *k = &t->keys[i];
        if (k->type == RD_KEY_CUSTOM && k->release)
            k->release(base);
        if (!has_field(k))
            continue;
        void *f = field_of(base, k);
        switch (k->type) {
        case RD_KEY_TEXT:
        case RD_KEY_OPT_TEXT:
        case RD_KEY_FILE:
            store_text(f, NULL);
            break;
        case RD_KEY_SECRET:
            rd_config_free_secret(*(char **)f);
            *(char **)f = NULL;
            break;
        case RD_KEY_SECTION:
        case RD_KEY_INCLUDE:
            rd_keys_free(k->sub, f);
            break;
        default:
            break;
        }
    }
}

/* ---- which keys a table knows ---- */

static bool row_knows(const rd_key *k, const char *key)
{
    if (k->type == RD_KEY_INCLUDE) {
        for (size_t i = 0; i < k->sub->n; i++)
            if (row_knows(&k->sub->keys[i], key))
                return true;
        return false;
    }
    if (k->type != RD_KEY_SECRET)
        return strcmp(k->name, key) == 0;
    size_t n = strlen(k->name);
    return strncmp(key, k->name, n) == 0 &&
           (strcmp(key + n, "_file") == 0 || strcmp(key + n, "_env") == 0);
}

static bool table_knows(const rd_key_table *t, const char *key)
{
    for (size_t i = 0; i < t->n; i++)
        if (row_knows(&t->keys[i], key))
            return true;
    return false;
}

typedef struct known_list {
    char text[KNOWN_LIST_MAX];
    size_t used;
    const char *nearest;         /* the known key closest to the unknown one */
    char nearest_buf[64];
    size_t nearest_distance;
} known_list;

/* Edit distance of two short keys (longer ones count as far apart). */
static size_t distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la >= 64 || lb >= 64)
        return SIZE_MAX;
    size_t row[64];
    for (size_t j = 0; j <= lb; j++)
        row[j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t up = row[j];
            size_t best = diag + (a[i - 1] != b[j - 1]);
            if (up + 1 < best)
                best = up + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[lb];
}

static void add_known(known_list *l, const char *name, const char *unknown)
{
    if (l->used < sizeof l->text) {
        int n = snprintf(l->text + l->used, sizeof l->text - l->used, "%s%s",
                         l->used ? ", " : "", name);
        l->used += n > 0 ? (size_t)n : 0;
    }
    size_t d = distance(name, unknown);
    size_t n = strlen(unknown);
    if (n > 2 && strncmp(name, unknown, n) == 0 && name[n] == '_')
        d = 1; /* the unit left out: "timeout" for "timeout_ms" */
    if (d < l->nearest_distance) {
        l->nearest_distance = d;
        snprintf(l->nearest_buf, sizeof l->nearest_buf, "%s", name);
        l->nearest = l->nearest_buf;
    }
}

static void list_known(known_list *l, const rd_key_table *t, const char *unknown)
{
    for (size_t i = 0; i < t->n; i++) {
        const rd_key *k = &t->keys[i];
        char name[96];
        if (k->type == RD_KEY_INCLUDE) {
            list_known(l, k->sub, unknown);
        } else if (k->type == RD_KEY_SECRET) {
            snprintf(name, sizeof name, "%s_file", k->name);
            add_known(l, name, unknown);
            snprintf(name, sizeof name, "%s_env", k->name);
            add_known(l, name, unknown);
        } else {
            add_known(l, k->name, unknown);
        }
    }
}

static int unknown_key(const rd_yctx *c, const rd_ynode *key, const char *path,
                       const rd_key_table *t)
{
    known_list l = {.nearest_distance = SIZE_MAX};
    list_known(&l, t, key->text);
    char p[RD_YPATH_MAX], hint[96] = "";
    /* A near miss is a misspelling: at most 2 edits, and fewer than half the key. */
    if (l.nearest && l.nearest_distance <= 2 && l.nearest_distance * 2 < strlen(key->text))
        snprintf(hint, sizeof hint, "; did you mean \"%s\"?", l.nearest);
    return rd_yerr(c, key->line, rd_ypath(p, path, key->text),
                   "unknown key (expected one of: %s)%s", l.text, hint);
}

static int check_keys(const rd_yctx *c, const rd_ynode *map, const char *path,
                      const rd_key_table *t)
{
    for (size_t i = 0; i < map->n; i++) {
        const rd_ynode *key = map->keys[i];
        if (!table_knows(t, key->text))
            return unknown_key(c, key, path, t);
        for (size_t j = 0; j < i; j++) {
            if (strcmp(map->keys[j]->text, key->text) == 0) {
                char p[RD_YPATH_MAX];
                return rd_yerr(c, key->line, rd_ypath(p, path, key->text),
                               "duplicate key (first at line %d)", map->keys[j]->line);
            }
        }
    }
    return RD_OK;
}

/* ---- reading values ---- */

static int read_enum(const rd_yctx *c, const rd_ynode *v, const char *p, const rd_key *k,
                     void *base)
{
    const char *text;
    int rc = rd_yscalar_str(c, v, p, ENUM_TEXT_MAX, &text);
    if (rc != RD_OK)
        return rc;
    for (size_t i = 0; k->names[i]; i++) {
        if (strcmp(text, k->names[i]) == 0) {
            if (has_field(k))
                store_int(field_of(base, k), k->width, k->values ? k->values[i] : (int64_t)i);
            return RD_OK;
        }
    }
    char names[256] = "";
    size_t used = 0;
    for (size_t i = 0; k->names[i] && used < sizeof names; i++) {
        int n = snprintf(names + used, sizeof names - used, "%s%s", i ? " | " : "", k->names[i]);
        used += n > 0 ? (size_t)n : 0;
    }
    return rd_yerr(c, v->line, p, "unknown %s \"%s\" (%s)", k->name, text, names);
}

static bool unset_text(const rd_ynode *v)
{
    return v->type == RD_YSCALAR && (rd_yis_null(v) || v->len == 0);
}

static int read_text(const rd_yctx *c, const rd_ynode *v, const char *p, const rd_key *k,
                     void *field)
{
    const char *text;
    int rc = rd_yscalar_str(c, v, p, (size_t)k->hi, &text);
    char *copy = rc == RD_OK ? strdup(text) : NULL;
    if (rc == RD_OK && !copy)
        rc = rd_yerr(c, v->line, p, "out of memory");
    if (rc == RD_OK)
        store_text(field, copy);
    return rc;
}

static int read_value(const rd_yctx *c, const rd_ynode *map, const rd_ynode *v, const char *p,
                      const rd_key *k, void *base)
{
    void *f = has_field(k) ? field_of(base, k) : NULL;
    int64_t i64;
    int rc;
    switch (k->type) {
    case RD_KEY_INT:
        rc = rd_yscalar_int(c, v, p, k->lo, k->hi, &i64);
        if (rc == RD_OK)
            store_int(f, k->width, i64);
        return rc;
    case RD_KEY_OFF_OR_INT:
        rc = rd_yscalar_int(c, v, p, 0, k->hi, &i64);
        if (rc == RD_OK && i64 != 0 && i64 < k->lo)
            rc = rd_yerr(c, v->line, p, "must be 0 (off) or %" PRId64 "..%" PRId64, k->lo, k->hi);
        if (rc == RD_OK)
            store_int(f, k->width, i64);
        return rc;
    case RD_KEY_DOUBLE:
        return rd_yscalar_double(c, v, p, k->dlo, k->dhi, f);
    case RD_KEY_BOOL:
        return rd_yscalar_bool(c, v, p, f);
    case RD_KEY_OPT_TEXT:
        if (unset_text(v)) {
            store_text(f, NULL);
            return RD_OK;
        }
        return read_text(c, v, p, k, f);
    case RD_KEY_TEXT:
        return read_text(c, v, p, k, f);
    case RD_KEY_FILE: {
        const char *text;
        if (unset_text(v)) {
            store_text(f, NULL);
            return RD_OK;
        }
        rc = rd_yscalar_str(c, v, p, 4096, &text);
        return rc == RD_OK ? rd_config_readable_file(c, v->key_line, p, text, f) : rc;
    }
    case RD_KEY_ENUM:
        return read_enum(c, v, p, k, base);
    case RD_KEY_SECTION:
        return rd_keys_parse(c, v, v->line, p, k->sub, f);
    case RD_KEY_CUSTOM:
        return k->parse(c, map, v, p, base);
    case RD_KEY_SECRET:
    case RD_KEY_INCLUDE:
        break;
    }
    return RD_OK;
}

/* The first required key under an absent section, reported at `line`. */
static int missing_required(const rd_yctx *c, int line, const char *path, const rd_key_table *t)
{
    char p[RD_YPATH_MAX];
    for (size_t i = 0; i < t->n; i++) {
        const rd_key *k = &t->keys[i];
        if (k->type == RD_KEY_INCLUDE && missing_required(c, line, path, k->sub) != RD_OK)
            return RD_ERR_CONFIG;
        if (!k->required)
            continue;
        rd_ypath(p, path, k->name);
        if (k->type == RD_KEY_SECTION)
            return missing_required(c, line, p, k->sub) != RD_OK
                       ? RD_ERR_CONFIG
                       : rd_yerr(c, line, p, "missing (required)");
        return rd_yerr(c, line, p, "missing (required)");
    }
    return RD_OK;
}

static int parse_rows(const rd_yctx *c, const rd_ynode *map, const char *path,
                      const rd_key_table *t, void *base)
{
    int rc = RD_OK;
    char p[RD_YPATH_MAX];
    for (size_t i = 0; i < t->n && rc == RD_OK; i++) {
        const rd_key *k = &t->keys[i];
        if (k->type == RD_KEY_INCLUDE) {
            rc = parse_rows(c, map, path, k->sub, field_of(base, k));
            if (rc == RD_OK && k->sub->check)
                rc = k->sub->check(c, map, path, field_of(base, k));
            continue;
        }
        if (k->type == RD_KEY_SECRET) {
            rc = rd_config_secret(c, map, path, k->name, field_of(base, k));
            continue;
        }
        rd_ypath(p, path, k->name);
        const rd_ynode *v = rd_ymap_get(map, k->name);
        if (!v) {
            if (k->required)
                rc = k->type == RD_KEY_SECTION
                         ? missing_required(c, map->key_line, p, k->sub)
                         : rd_yerr(c, map->key_line, p, "missing (required)");
            continue;
        }
        rc = read_value(c, map, v, p, k, base);
        if (rc == RD_OK && k->check)
            rc = k->check(c, rd_ymap_key_line(map, k->name), p,
                          has_field(k) ? field_of(base, k) : NULL);
    }
    return rc;
}

int rd_keys_parse(const rd_yctx *c, const rd_ynode *map, int line, const char *path,
                  const rd_key_table *t, void *base)
{
    if (!map)
        return missing_required(c, line, path, t);
    int rc = rd_yexpect(c, map, *path ? path : "(file)", RD_YMAP);
    if (rc == RD_OK)
        rc = check_keys(c, map, path, t);
    if (rc == RD_OK)
        rc = parse_rows(c, map, path, t, base);
    if (rc == RD_OK && t->check)
        rc = t->check(c, map, path, base);
    return rc;
}

/* ---- the tables' own consistency ---- */

static int bad_row(const rd_key_table *t, const rd_key *k, char *err, size_t cap,
                   const char *what)
{
    snprintf(err, cap, "%s.%s: %s", t->title, k->name ? k->name : "?", what);
    return RD_ERR_INTERNAL;
}

static int check_int_row(const rd_key_table *t, const rd_key *k, char *err, size_t cap)
{
    int64_t max = k->width == 8 ? INT64_MAX : k->width == 4 ? INT32_MAX
                : k->width == 2 ? INT16_MAX : k->width == 1 ? INT8_MAX : 0;
    if (max == 0)
        return bad_row(t, k, err, cap, "the field is not an integer of 1, 2, 4 or 8 bytes");
    if (k->lo > k->hi || k->hi > max || k->lo < 0)
        return bad_row(t, k, err, cap, "the range does not fit the field");
    bool in_range = k->def >= k->lo && k->def <= k->hi;
    if (!in_range && !(k->type == RD_KEY_OFF_OR_INT && k->def == 0))
        return bad_row(t, k, err, cap, "the default is out of range");
    return RD_OK;
}

static int self_check(const rd_key_table *t, bool restart, char *err, size_t err_cap);

/* restart: the row's table (or one above it) needs a restart for all keys. */
static int check_row(const rd_key_table *t, const rd_key *k, bool restart, char *err, size_t cap)
{
    restart = restart || k->restart;
    if (!k->name || (k->type != RD_KEY_INCLUDE && !k->doc))
        return bad_row(t, k, err, cap, "no name or no description");
    if (!has_field(k) && k->type != RD_KEY_CUSTOM && k->type != RD_KEY_ENUM)
        return bad_row(t, k, err, cap, "no field");
    size_t n = 0;
    switch (k->type) {
    case RD_KEY_INT:
    case RD_KEY_OFF_OR_INT:
        return check_int_row(t, k, err, cap);
    case RD_KEY_DOUBLE:
        if (k->width != sizeof(double) || k->dlo > k->dhi || k->ddef < k->dlo || k->ddef > k->dhi)
            return bad_row(t, k, err, cap, "not a double, or the default is out of range");
        return RD_OK;
    case RD_KEY_BOOL:
        return k->width == sizeof(bool) ? RD_OK : bad_row(t, k, err, cap, "not a bool");
    case RD_KEY_TEXT:
    case RD_KEY_OPT_TEXT:
        if (k->hi < 1 || (k->sdef && strlen(k->sdef) > (size_t)k->hi))
            return bad_row(t, k, err, cap, "no length limit, or the default is longer");
        /* fall through */
    case RD_KEY_FILE:
    case RD_KEY_SECRET:
        return k->width == sizeof(char *) ? RD_OK : bad_row(t, k, err, cap, "not a char *");
    case RD_KEY_ENUM:
        while (k->names && k->names[n])
            n++;
        if (n == 0 || k->def < 0 || (size_t)k->def >= n)
            return bad_row(t, k, err, cap, "no names, or the default is not one of them");
        if (has_field(k) && k->width != sizeof(int))
            return bad_row(t, k, err, cap, "not an enum field");
        return RD_OK;
    case RD_KEY_SECTION:
    case RD_KEY_INCLUDE:
        return self_check(k->sub, restart, err, cap);
    case RD_KEY_CUSTOM:
        if (!k->parse)
            return bad_row(t, k, err, cap, "no parse function");
        if (restart && !k->differs)
            return bad_row(t, k, err, cap, "needs a restart but cannot tell a change");
        return k->sub ? self_check(k->sub, restart, err, cap) : RD_OK;
    }
    return bad_row(t, k, err, cap, "unknown type");
}

int rd_keys_self_check(const rd_key_table *t, char *err, size_t err_cap)
{
    return self_check(t, false, err, err_cap);
}

static int self_check(const rd_key_table *t, bool restart, char *err, size_t err_cap)
{
    restart = restart || t->restart;
    for (size_t i = 0; i < t->n; i++) {
        const rd_key *k = &t->keys[i];
        int rc = check_row(t, k, restart, err, err_cap);
        if (rc != RD_OK)
            return rc;
        for (size_t j = 0; j < i && k->type != RD_KEY_INCLUDE; j++)
            if (t->keys[j].type != RD_KEY_INCLUDE && strcmp(t->keys[j].name, k->name) == 0)
                return bad_row(t, k, err, err_cap, "named twice");
    }
    return RD_OK;
}
