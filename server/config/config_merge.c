/* Drop-in configuration fragments merged over the main file, node by node
 * (the rules are in config_merge.h). */
#include "config/config_merge.h"

#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "domain/err.h"

char *rd_config_main_file(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode))
        return strdup(path);
    size_t n = strlen(path);
    while (n > 1 && path[n - 1] == '/')
        n--;
    size_t cap = n + 1 + sizeof RD_MERGE_MAIN_NAME;
    char *out = malloc(cap);
    if (out)
        snprintf(out, cap, "%.*s/%s", (int)n, path, RD_MERGE_MAIN_NAME);
    return out;
}

static bool ends_with(const char *s, size_t len, const char *suffix)
{
    size_t n = strlen(suffix);
    return len >= n && memcmp(s + len - n, suffix, n) == 0;
}

char *rd_config_dropin_dir(const char *main_file)
{
    const char *slash = strrchr(main_file, '/');
    const char *base = slash ? slash + 1 : main_file;
    size_t len = strlen(main_file);
    if (ends_with(base, strlen(base), ".yaml"))
        len -= 5;
    else if (ends_with(base, strlen(base), ".yml"))
        len -= 4;
    char *out = malloc(len + 3);
    if (out)
        snprintf(out, len + 3, "%.*s.d", (int)len, main_file);
    return out;
}

void rd_config_sources_free(rd_config_sources *src)
{
    if (!src)
        return;
    for (size_t i = 0; i < src->n; i++)
        free(src->fragments[i]);
    free(src->fragments);
    src->fragments = NULL;
    src->n = 0;
}

/* ---- finding the fragments ---- */

static bool is_fragment_name(const char *name)
{
    size_t n = strlen(name);
    return name[0] != '.' && (ends_with(name, n, ".yaml") || ends_with(name, n, ".yml"));
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Regular files only: a ConfigMap mount's "..data" entries start with a dot
 * and are skipped by name; stat follows the links of projected files. */
static int list_fragments(const rd_yctx *c, const char *dir, rd_config_sources *src)
{
    DIR *d = opendir(dir);
    if (!d) {
        if (errno == ENOENT)
            return RD_OK;
        return rd_yerr(c, 0, "(drop-in directory)", "cannot read \"%s\": %s", dir,
                       strerror(errno));
    }
    int rc = RD_OK;
    size_t cap = 0;
    struct dirent *e;
    while (rc == RD_OK && (e = readdir(d))) {
        if (!is_fragment_name(e->d_name))
            continue;
        size_t plen = strlen(dir) + 1 + strlen(e->d_name) + 1;
        char *path = malloc(plen);
        if (!path) {
            rc = rd_yerr(c, 0, "(drop-in directory)", "out of memory");
            break;
        }
        snprintf(path, plen, "%s/%s", dir, e->d_name);
        struct stat st;
        if (stat(path, &st) != 0 || !S_ISREG(st.st_mode)) {
            free(path);
            continue;
        }
        if (src->n == RD_MERGE_MAX_FRAGMENTS) {
            free(path);
            rc = rd_yerr(c, 0, "(drop-in directory)", "more than %d fragments in \"%s\"",
                         RD_MERGE_MAX_FRAGMENTS, dir);
            break;
        }
        if (src->n == cap) {
            cap = cap ? cap * 2 : 8;
            char **grown = realloc(src->fragments, cap * sizeof *grown);
            if (!grown) {
                free(path);
                rc = rd_yerr(c, 0, "(drop-in directory)", "out of memory");
                break;
            }
            src->fragments = grown;
        }
        src->fragments[src->n++] = path;
    }
    closedir(d);
    if (rc == RD_OK && src->n > 1)
        qsort(src->fragments, src->n, sizeof *src->fragments, by_name);
    return rc;
}

/* ---- merging trees ---- */

static void shift_lines(rd_ynode *node, int offset)
{
    if (!node)
        return;
    node->line += offset;
    node->key_line += offset;
    for (size_t i = 0; i < node->n; i++) {
        if (node->keys)
            shift_lines(node->keys[i], offset);
        shift_lines(node->items[i], offset);
    }
}

static ptrdiff_t find_key(const rd_ynode *map, const char *key)
{
    for (size_t i = 0; i < map->n; i++)
        if (strcmp(map->keys[i]->text, key) == 0)
            return (ptrdiff_t)i;
    return -1;
}

static int append_pair(rd_ynode *map, rd_ynode *key, rd_ynode *value)
{
    if (map->n == map->cap) {
        size_t cap = map->cap ? map->cap * 2 : 4;
        rd_ynode **items = realloc(map->items, cap * sizeof *items);
        if (!items)
            return RD_ERR_NOMEM;
        map->items = items;
        rd_ynode **keys = realloc(map->keys, cap * sizeof *keys);
        if (!keys)
            return RD_ERR_NOMEM;
        map->keys = keys;
        map->cap = cap;
    }
    map->keys[map->n] = key;
    map->items[map->n++] = value;
    return RD_OK;
}

static void remove_pair(rd_ynode *map, size_t i)
{
    rd_yaml_free(map->keys[i]);
    rd_yaml_free(map->items[i]);
    memmove(map->keys + i, map->keys + i + 1, (map->n - i - 1) * sizeof *map->keys);
    memmove(map->items + i, map->items + i + 1, (map->n - i - 1) * sizeof *map->items);
    map->n--;
}

/* Moves every pair of `over` (a fragment's mapping) into `into`; what
 * `over` still holds afterwards is freed by its owner. `path` names the
 * mapping in messages, `fc` is the fragment's own context (unshifted
 * lines are reported through it). */
static int merge_map(const rd_yctx *fc, rd_ynode *into, rd_ynode *over, const char *path,
                     int offset)
{
    for (size_t i = 0; i < over->n; i++) {
        rd_ynode *key = over->keys[i];
        char p[RD_YPATH_MAX];
        rd_ypath(p, path, key->text);
        for (size_t j = 0; j < i; j++)
            if (strcmp(over->keys[j]->text, key->text) == 0)
                return rd_yerr(fc, key->line - offset, p, "duplicate key (first at line %d)",
                               over->keys[j]->line - offset);
    }
    for (size_t i = 0; i < over->n; i++) {
        rd_ynode *key = over->keys[i], *value = over->items[i];
        ptrdiff_t at = find_key(into, key->text);
        char p[RD_YPATH_MAX];
        rd_ypath(p, path, key->text);
        if (rd_yis_null(value)) {
            if (at >= 0)
                remove_pair(into, (size_t)at);
            continue;
        }
        if (at >= 0 && into->items[at]->type == RD_YMAP && value->type == RD_YMAP) {
            int rc = merge_map(fc, into->items[at], value, p, offset);
            if (rc != RD_OK)
                return rc;
            continue;
        }
        if (at >= 0) {
            rd_yaml_free(into->items[at]);
            into->items[at] = value;
        } else if (append_pair(into, key, value) != RD_OK) {
            return rd_yerr(fc, key->line - offset, p, "out of memory");
        } else {
            over->keys[i] = NULL;
        }
        over->items[i] = NULL;
    }
    return RD_OK;
}

/* Frees what merge_map left in a fragment's tree (moved pairs are NULL). */
static void free_leftover(rd_ynode *node)
{
    if (!node)
        return;
    for (size_t i = 0; i < node->n; i++) {
        if (node->keys)
            free_leftover(node->keys[i]);
        free_leftover(node->items[i]);
    }
    node->n = 0;
    rd_yaml_free(node);
}

static int merge_fragment(const rd_yctx *c, rd_ynode *root, const char *file, int index)
{
    rd_yctx fc = {.file = file, .err = c->err, .err_cap = c->err_cap};
    rd_ynode *frag;
    int rc = rd_yaml_load(&fc, &frag);
    if (rc != RD_OK)
        return rc;
    rc = rd_yexpect(&fc, frag, "(file)", RD_YMAP);
    if (rc == RD_OK) {
        int offset = index * RD_MERGE_LINE_STRIDE;
        shift_lines(frag, offset);
        rc = merge_map(&fc, root, frag, "", offset);
    }
    free_leftover(frag);
    return rc;
}

int rd_config_merge_load(const rd_yctx *c, rd_ynode **root, rd_config_sources *src)
{
    *root = NULL;
    int rc = rd_yaml_load(c, root);
    if (rc != RD_OK)
        return rc;
    char *dir = rd_config_dropin_dir(c->file);
    if (!dir)
        rc = rd_yerr(c, 0, "(file)", "out of memory");
    if (rc == RD_OK)
        rc = list_fragments(c, dir, src);
    free(dir);
    /* The main file must be a mapping for fragments to merge into; when it
     * is not, the loader's own check reports it. */
    if (rc == RD_OK && src->n > 0)
        rc = rd_yexpect(c, *root, "(file)", RD_YMAP);
    for (size_t k = 0; rc == RD_OK && k < src->n; k++)
        rc = merge_fragment(c, *root, src->fragments[k], (int)k + 1);
    if (rc != RD_OK) {
        rd_yaml_free(*root);
        *root = NULL;
    }
    return rc;
}

void rd_config_merge_blame(const rd_config_sources *src, const char *main_file, char *err,
                           size_t err_cap)
{
    size_t mlen = strlen(main_file);
    if (!src || src->n == 0 || strncmp(err, main_file, mlen) != 0 || err[mlen] != ':')
        return;
    char *end;
    errno = 0;
    long line = strtol(err + mlen + 1, &end, 10);
    if (errno || *end != ':' || line < RD_MERGE_LINE_STRIDE)
        return;
    long k = line / RD_MERGE_LINE_STRIDE;
    if (k < 1 || (size_t)k > src->n)
        return;
    char *rest = strdup(end);
    if (!rest)
        return;
    snprintf(err, err_cap, "%s:%ld%s", src->fragments[k - 1], line % RD_MERGE_LINE_STRIDE, rest);
    free(rest);
}
