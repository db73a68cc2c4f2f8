#include "config/yaml_util.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <yaml.h>

#include "domain/err.h"

int rd_yerr(const rd_yctx *c, int line, const char *path, const char *fmt, ...)
{
    if (c->err && c->err_cap > 0) {
        int n = snprintf(c->err, c->err_cap, "%s:%d: %s: ", c->file, line, path);
        if (n >= 0 && (size_t)n < c->err_cap) {
            va_list ap;
            va_start(ap, fmt);
            vsnprintf(c->err + n, c->err_cap - (size_t)n, fmt, ap);
            va_end(ap);
        }
    }
    return RD_ERR_CONFIG;
}

/* ---- reading the file ---- */

/* The whole file in one malloc'd buffer (caller frees), bounded in size so a
 * wrong path (a device, a huge log) cannot exhaust memory. */
static int read_file(const rd_yctx *c, unsigned char **data, size_t *len)
{
    *data = NULL;
    FILE *f = fopen(c->file, "rb");
    if (!f)
        return rd_yerr(c, 0, "(file)", "cannot open: %s", strerror(errno));
    struct stat sb;
    if (fstat(fileno(f), &sb) != 0 || !S_ISREG(sb.st_mode)) {
        fclose(f);
        return rd_yerr(c, 0, "(file)", "not a regular file");
    }
    if ((uint64_t)sb.st_size > RD_YAML_MAX_BYTES) {
        fclose(f);
        return rd_yerr(c, 0, "(file)", "larger than %u bytes", RD_YAML_MAX_BYTES);
    }
    unsigned char *buf = malloc((size_t)sb.st_size + 1);
    if (!buf) {
        fclose(f);
        return rd_yerr(c, 0, "(file)", "out of memory");
    }
    size_t got = fread(buf, 1, (size_t)sb.st_size, f);
    int read_failed = ferror(f);
    fclose(f);
    if (read_failed) {
        free(buf);
        return rd_yerr(c, 0, "(file)", "read error");
    }
    *data = buf;
    *len = got;
    return RD_OK;
}

/* ---- building the tree from libyaml events ---- */

typedef struct tree_builder {
    const rd_yctx *c;
    rd_ynode *root;
    rd_ynode *stack[RD_YAML_MAX_DEPTH];
    size_t depth;
    size_t n_nodes;
    bool seen_document;
} tree_builder;

void rd_yaml_free(rd_ynode *node)
{
    if (!node)
        return;
    for (size_t i = 0; i < node->n; i++) {
        if (node->keys)
            rd_yaml_free(node->keys[i]);
        rd_yaml_free(node->items[i]);
    }
    rd_yaml_free(node->pending_key);
    free(node->keys);
    free(node->items);
    free(node->text);
    free(node);
}

static int push_child(rd_ynode *parent, rd_ynode *child)
{
    if (parent->n == parent->cap) {
        size_t cap = parent->cap ? parent->cap * 2 : 4;
        rd_ynode **items = realloc(parent->items, cap * sizeof *items);
        if (!items)
            return RD_ERR_NOMEM;
        parent->items = items;
        if (parent->type == RD_YMAP) {
            rd_ynode **keys = realloc(parent->keys, cap * sizeof *keys);
            if (!keys)
                return RD_ERR_NOMEM;
            parent->keys = keys;
        }
        parent->cap = cap;
    }
    if (parent->type == RD_YMAP)
        parent->keys[parent->n] = parent->pending_key;
    parent->items[parent->n++] = child;
    parent->pending_key = NULL;
    return RD_OK;
}

/* Hands a finished node to its parent (or makes it the root). On error the
 * node is freed here. */
static int attach(tree_builder *b, rd_ynode *node)
{
    if (b->depth == 0) {
        b->root = node;
        return RD_OK;
    }
    rd_ynode *parent = b->stack[b->depth - 1];
    if (parent->type == RD_YMAP && !parent->pending_key) {
        if (node->type != RD_YSCALAR) {
            int line = node->line;
            rd_yaml_free(node);
            return rd_yerr(b->c, line, "(yaml)", "only plain text keys are supported");
        }
        parent->pending_key = node;
        return RD_OK;
    }
    if (parent->type == RD_YMAP) {
        node->key_line = parent->pending_key->line;
        /* "key:" with nothing after it: report problems at the key's line. */
        if (node->type == RD_YSCALAR && node->len == 0 && node->plain)
            node->line = node->key_line;
    }
    if (push_child(parent, node) != RD_OK) {
        int line = node->line;
        rd_yaml_free(node);
        return rd_yerr(b->c, line, "(yaml)", "out of memory");
    }
    return RD_OK;
}

static rd_ynode *new_node(tree_builder *b, rd_ynode_type type, const yaml_event_t *ev)
{
    if (b->n_nodes >= RD_YAML_MAX_NODES) {
        rd_yerr(b->c, (int)ev->start_mark.line + 1, "(yaml)", "more than %u nodes",
                RD_YAML_MAX_NODES);
        return NULL;
    }
    rd_ynode *node = calloc(1, sizeof *node);
    if (!node) {
        rd_yerr(b->c, (int)ev->start_mark.line + 1, "(yaml)", "out of memory");
        return NULL;
    }
    b->n_nodes++;
    node->type = type;
    node->line = (int)ev->start_mark.line + 1;
    node->key_line = node->line;
    return node;
}

/* Anchors, aliases and tags are outside the supported subset. */
static int refuse_decorations(tree_builder *b, const yaml_event_t *ev,
                              const yaml_char_t *anchor, const yaml_char_t *tag)
{
    int line = (int)ev->start_mark.line + 1;
    if (anchor)
        return rd_yerr(b->c, line, "(yaml)", "anchors (&%s) are not supported", anchor);
    if (tag)
        return rd_yerr(b->c, line, "(yaml)", "tags (%s) are not supported", tag);
    return RD_OK;
}

static int on_scalar(tree_builder *b, const yaml_event_t *ev)
{
    int rc = refuse_decorations(b, ev, ev->data.scalar.anchor, ev->data.scalar.tag);
    if (rc != RD_OK)
        return rc;
    const char *value = (const char *)ev->data.scalar.value;
    size_t len = ev->data.scalar.length;
    if (memchr(value, '\0', len))
        return rd_yerr(b->c, (int)ev->start_mark.line + 1, "(yaml)",
                       "NUL bytes are not allowed in text");
    rd_ynode *node = new_node(b, RD_YSCALAR, ev);
    if (!node)
        return RD_ERR_CONFIG;
    node->text = malloc(len + 1);
    if (!node->text) {
        rd_yaml_free(node);
        return rd_yerr(b->c, (int)ev->start_mark.line + 1, "(yaml)", "out of memory");
    }
    memcpy(node->text, value, len);
    node->text[len] = '\0';
    node->len = len;
    node->plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
    return attach(b, node);
}

static int on_collection_start(tree_builder *b, const yaml_event_t *ev, rd_ynode_type type)
{
    const yaml_char_t *anchor = type == RD_YMAP ? ev->data.mapping_start.anchor
                                                : ev->data.sequence_start.anchor;
    const yaml_char_t *tag = type == RD_YMAP ? ev->data.mapping_start.tag
                                             : ev->data.sequence_start.tag;
    int rc = refuse_decorations(b, ev, anchor, tag);
    if (rc != RD_OK)
        return rc;
    if (b->depth >= RD_YAML_MAX_DEPTH)
        return rd_yerr(b->c, (int)ev->start_mark.line + 1, "(yaml)",
                       "nested deeper than %d levels", RD_YAML_MAX_DEPTH);
    rd_ynode *node = new_node(b, type, ev);
    if (!node)
        return RD_ERR_CONFIG;
    /* Attach first so the tree owns it; then it becomes the open container. */
    if (b->depth > 0) {
        rc = attach(b, node);
        if (rc != RD_OK)
            return rc;
    } else {
        b->root = node;
    }
    b->stack[b->depth++] = node;
    return RD_OK;
}

static int on_event(tree_builder *b, const yaml_event_t *ev)
{
    switch (ev->type) {
    case YAML_DOCUMENT_START_EVENT:
        if (b->seen_document)
            return rd_yerr(b->c, (int)ev->start_mark.line + 1, "(yaml)",
                           "only one document per file is supported");
        b->seen_document = true;
        return RD_OK;
    case YAML_ALIAS_EVENT:
        return rd_yerr(b->c, (int)ev->start_mark.line + 1, "(yaml)",
                       "aliases (*%s) are not supported", ev->data.alias.anchor);
    case YAML_SCALAR_EVENT:
        return on_scalar(b, ev);
    case YAML_SEQUENCE_START_EVENT:
        return on_collection_start(b, ev, RD_YSEQ);
    case YAML_MAPPING_START_EVENT:
        return on_collection_start(b, ev, RD_YMAP);
    case YAML_SEQUENCE_END_EVENT:
    case YAML_MAPPING_END_EVENT:
        if (b->depth > 0)
            b->depth--;
        return RD_OK;
    default:
        return RD_OK;
    }
}

static int parser_error(const rd_yctx *c, const yaml_parser_t *p)
{
    int line = (int)p->problem_mark.line + 1;
    if (p->error == YAML_READER_ERROR)
        return rd_yerr(c, line, "(yaml)", "%s at byte %zu",
                       p->problem ? p->problem : "unreadable input", p->problem_offset);
    if (p->context)
        return rd_yerr(c, line, "(yaml)", "%s %s", p->problem ? p->problem : "syntax error",
                       p->context);
    return rd_yerr(c, line, "(yaml)", "%s", p->problem ? p->problem : "syntax error");
}

static int run_parser(tree_builder *b, const unsigned char *data, size_t len)
{
    yaml_parser_t parser;
    if (!yaml_parser_initialize(&parser))
        return rd_yerr(b->c, 0, "(yaml)", "out of memory");
    yaml_parser_set_input_string(&parser, data, len);
    int rc = RD_OK;
    for (bool done = false; !done && rc == RD_OK;) {
        yaml_event_t ev;
        if (!yaml_parser_parse(&parser, &ev)) {
            rc = parser_error(b->c, &parser);
            break;
        }
        rc = on_event(b, &ev);
        done = ev.type == YAML_STREAM_END_EVENT;
        yaml_event_delete(&ev);
    }
    yaml_parser_delete(&parser);
    return rc;
}

int rd_yaml_load(const rd_yctx *c, rd_ynode **root)
{
    *root = NULL;
    unsigned char *data = NULL;
    size_t len = 0;
    int rc = read_file(c, &data, &len);
    if (rc != RD_OK)
        return rc;
    tree_builder b = {.c = c};
    rc = run_parser(&b, data, len);
    free(data);
    if (rc != RD_OK) {
        rd_yaml_free(b.root);
        return rc;
    }
    if (!b.root || (b.root->type == RD_YSCALAR && rd_yis_null(b.root))) {
        rd_yaml_free(b.root);
        return rd_yerr(c, 1, "(file)", "empty file");
    }
    *root = b.root;
    return RD_OK;
}

/* ---- paths and types ---- */

const char *rd_ypath(char *buf, const char *parent, const char *key)
{
    if (!parent || !*parent)
        snprintf(buf, RD_YPATH_MAX, "%s", key);
    else
        snprintf(buf, RD_YPATH_MAX, "%s.%s", parent, key);
    return buf;
}

const char *rd_ypath_index(char *buf, const char *parent, size_t i)
{
    snprintf(buf, RD_YPATH_MAX, "%s[%zu]", parent, i);
    return buf;
}

bool rd_yis_null(const rd_ynode *node)
{
    if (node->type != RD_YSCALAR || !node->plain)
        return false;
    return node->len == 0 || strcmp(node->text, "~") == 0 || strcmp(node->text, "null") == 0 ||
           strcmp(node->text, "Null") == 0 || strcmp(node->text, "NULL") == 0;
}

const char *rd_ytype_name(const rd_ynode *node)
{
    switch (node->type) {
    case RD_YMAP: return "a mapping";
    case RD_YSEQ: return "a list";
    case RD_YSCALAR: return rd_yis_null(node) ? "no value" : "a scalar";
    }
    return "?";
}

int rd_yexpect(const rd_yctx *c, const rd_ynode *node, const char *path, rd_ynode_type type)
{
    if (node->type == type && !rd_yis_null(node))
        return RD_OK;
    const char *want = type == RD_YMAP ? "a mapping" : type == RD_YSEQ ? "a list" : "a scalar";
    return rd_yerr(c, node->line, path, "expected %s, got %s", want, rd_ytype_name(node));
}

/* ---- mappings ---- */

static bool key_allowed(const char *key, const char *const *allowed)
{
    for (; *allowed; allowed++)
        if (strcmp(key, *allowed) == 0)
            return true;
    return false;
}

static int unknown_key(const rd_yctx *c, const rd_ynode *key, const char *path,
                       const char *const *allowed)
{
    char list[RD_YPATH_MAX] = "";
    size_t used = 0;
    for (; *allowed && used < sizeof list; allowed++) {
        int n = snprintf(list + used, sizeof list - used, "%s%s", used ? ", " : "", *allowed);
        if (n < 0)
            break;
        used += (size_t)n;
    }
    char p[RD_YPATH_MAX];
    return rd_yerr(c, key->line, rd_ypath(p, path, key->text),
                   "unknown key (expected one of: %s)", list);
}

int rd_ymap_check(const rd_yctx *c, const rd_ynode *map, const char *path,
                  const char *const *allowed)
{
    int rc = rd_yexpect(c, map, path, RD_YMAP);
    if (rc != RD_OK)
        return rc;
    for (size_t i = 0; i < map->n; i++) {
        const rd_ynode *key = map->keys[i];
        if (!key_allowed(key->text, allowed))
            return unknown_key(c, key, path, allowed);
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

const rd_ynode *rd_ymap_get(const rd_ynode *map, const char *key)
{
    if (!map || map->type != RD_YMAP)
        return NULL;
    for (size_t i = 0; i < map->n; i++)
        if (strcmp(map->keys[i]->text, key) == 0)
            return map->items[i];
    return NULL;
}

int rd_ymap_key_line(const rd_ynode *map, const char *key)
{
    for (size_t i = 0; map && map->type == RD_YMAP && i < map->n; i++)
        if (strcmp(map->keys[i]->text, key) == 0)
            return map->keys[i]->line;
    return map ? map->key_line : 0;
}

/* ---- scalars ---- */

/* Numbers and booleans must be unquoted: "5" in quotes is text. */
static int expect_plain_value(const rd_yctx *c, const rd_ynode *node, const char *path,
                              const char *want)
{
    if (node->type != RD_YSCALAR || rd_yis_null(node))
        return rd_yerr(c, node->line, path, "expected %s, got %s", want, rd_ytype_name(node));
    if (!node->plain)
        return rd_yerr(c, node->line, path, "expected %s, got the quoted text \"%s\"", want,
                       node->text);
    return RD_OK;
}

static bool is_decimal_integer(const char *s)
{
    if (*s == '+' || *s == '-')
        s++;
    if (!*s)
        return false;
    for (; *s; s++)
        if (*s < '0' || *s > '9')
            return false;
    return true;
}

int rd_yscalar_int(const rd_yctx *c, const rd_ynode *node, const char *path, int64_t lo,
                   int64_t hi, int64_t *out)
{
    int rc = expect_plain_value(c, node, path, "an integer");
    if (rc != RD_OK)
        return rc;
    if (!is_decimal_integer(node->text))
        return rd_yerr(c, node->line, path, "expected an integer, got \"%s\"", node->text);
    errno = 0;
    long long v = strtoll(node->text, NULL, 10);
    if (errno == ERANGE || v < lo || v > hi)
        return rd_yerr(c, node->line, path, "%s is out of range (%" PRId64 "..%" PRId64 ")",
                       node->text, lo, hi);
    *out = (int64_t)v;
    return RD_OK;
}

static bool is_decimal_number(const char *s)
{
    if (!*s)
        return false;
    for (; *s; s++)
        if (!strchr("0123456789+-.eE", *s))
            return false;
    return true;
}

int rd_yscalar_double(const rd_yctx *c, const rd_ynode *node, const char *path, double lo,
                      double hi, double *out)
{
    int rc = expect_plain_value(c, node, path, "a number");
    if (rc != RD_OK)
        return rc;
    char *end = NULL;
    errno = 0;
    double v = is_decimal_number(node->text) ? strtod(node->text, &end) : 0.0;
    if (!end || *end != '\0')
        return rd_yerr(c, node->line, path, "expected a number, got \"%s\"", node->text);
    if (errno == ERANGE || !isfinite(v) || v < lo || v > hi)
        return rd_yerr(c, node->line, path, "%s is out of range (%g..%g)", node->text, lo, hi);
    *out = v;
    return RD_OK;
}

int rd_yscalar_bool(const rd_yctx *c, const rd_ynode *node, const char *path, bool *out)
{
    int rc = expect_plain_value(c, node, path, "true or false");
    if (rc != RD_OK)
        return rc;
    if (strcmp(node->text, "true") == 0) {
        *out = true;
        return RD_OK;
    }
    if (strcmp(node->text, "false") == 0) {
        *out = false;
        return RD_OK;
    }
    return rd_yerr(c, node->line, path,
                   "expected true or false, got \"%s\" (yes/no/on/off are not accepted)",
                   node->text);
}

int rd_yscalar_str(const rd_yctx *c, const rd_ynode *node, const char *path, size_t max_len,
                   const char **out)
{
    if (node->type != RD_YSCALAR || rd_yis_null(node))
        return rd_yerr(c, node->line, path, "expected text, got %s", rd_ytype_name(node));
    if (node->len == 0)
        return rd_yerr(c, node->line, path, "empty text");
    if (node->len > max_len)
        return rd_yerr(c, node->line, path, "longer than %zu bytes", max_len);
    *out = node->text;
    return RD_OK;
}

/* ---- optional keys ---- */

int rd_yget_str(const rd_yctx *c, const rd_ynode *map, const char *path, const char *key,
                size_t max_len, char **out)
{
    const rd_ynode *v = rd_ymap_get(map, key);
    if (!v)
        return RD_OK;
    char p[RD_YPATH_MAX];
    const char *text;
    int rc = rd_yscalar_str(c, v, rd_ypath(p, path, key), max_len, &text);
    if (rc != RD_OK)
        return rc;
    char *copy = strdup(text);
    if (!copy)
        return rd_yerr(c, v->line, p, "out of memory");
    free(*out);
    *out = copy;
    return RD_OK;
}
