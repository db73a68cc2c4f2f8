/* The key tables as Markdown (rd_keys_markdown in config_keys.h): the
 * documentation's key tables are this output, so they cannot drift from
 * what the loader accepts. */
#include <inttypes.h>
#include <string.h>

#include "config/config_keys.h"

#define MAX_TABLES 64

/* A table cell: '|' would end the cell, so it is escaped. */
static void cell(FILE *out, const char *text)
{
    fputc(' ', out);
    for (; *text; text++) {
        if (*text == '|')
            fputc('\\', out);
        fputc(*text, out);
    }
    fputs(" |", out);
}

static void key_cell(FILE *out, const rd_key *k)
{
    char text[160];
    if (k->type == RD_KEY_SECRET)
        snprintf(text, sizeof text, "`%s_file`, `%s_env`", k->name, k->name);
    else
        snprintf(text, sizeof text, "`%s`", k->name);
    fputc('|', out);
    cell(out, text);
}

static const char *type_text(const rd_key *k)
{
    switch (k->type) {
    case RD_KEY_INT:
    case RD_KEY_OFF_OR_INT: return "integer";
    case RD_KEY_DOUBLE: return "number";
    case RD_KEY_BOOL: return "bool";
    case RD_KEY_TEXT:
    case RD_KEY_OPT_TEXT: return "text";
    case RD_KEY_FILE: return "file";
    case RD_KEY_SECRET: return "secret";
    case RD_KEY_ENUM: return "choice";
    case RD_KEY_SECTION: return "section";
    case RD_KEY_CUSTOM: return k->type_doc ? k->type_doc : "";
    case RD_KEY_INCLUDE: break;
    }
    return "";
}

static void range_text(const rd_key *k, char *buf, size_t cap)
{
    if (k->range_doc) {
        snprintf(buf, cap, "%s", k->range_doc);
        return;
    }
    size_t used = 0;
    switch (k->type) {
    case RD_KEY_INT:
        snprintf(buf, cap, "%" PRId64 "..%" PRId64, k->lo, k->hi);
        return;
    case RD_KEY_OFF_OR_INT:
        snprintf(buf, cap, "0 (off) or %" PRId64 "..%" PRId64, k->lo, k->hi);
        return;
    case RD_KEY_DOUBLE:
        snprintf(buf, cap, "%g..%g", k->dlo, k->dhi);
        return;
    case RD_KEY_BOOL:
        snprintf(buf, cap, "true, false");
        return;
    case RD_KEY_TEXT:
        snprintf(buf, cap, "1..%" PRId64 " bytes", k->hi);
        return;
    case RD_KEY_OPT_TEXT:
        snprintf(buf, cap, "1..%" PRId64 " bytes, or \"\" (unset)", k->hi);
        return;
    case RD_KEY_FILE:
        snprintf(buf, cap, "a readable file, relative to this file's directory");
        return;
    case RD_KEY_SECRET:
        snprintf(buf, cap, "the first line of the file, or of the environment variable");
        return;
    case RD_KEY_ENUM:
        buf[0] = '\0';
        for (size_t i = 0; k->names[i] && used < cap; i++) {
            int n = snprintf(buf + used, cap - used, "%s`%s`", i ? " | " : "", k->names[i]);
            used += n > 0 ? (size_t)n : 0;
        }
        return;
    case RD_KEY_SECTION: {
        /* the table's first place is enough to find it */
        size_t n = strcspn(k->sub->title, ",");
        snprintf(buf, cap, "mapping: `%.*s`", (int)n, k->sub->title);
        return;
    }
    case RD_KEY_CUSTOM:
    case RD_KEY_INCLUDE:
        break;
    }
    buf[0] = '\0';
}

static void default_text(const rd_key *k, char *buf, size_t cap)
{
    if (k->default_doc) {
        snprintf(buf, cap, "%s", k->default_doc);
        return;
    }
    if (k->required) {
        snprintf(buf, cap, "required");
        return;
    }
    switch (k->type) {
    case RD_KEY_INT:
        snprintf(buf, cap, "%" PRId64, k->def);
        return;
    case RD_KEY_OFF_OR_INT:
        snprintf(buf, cap, k->def ? "%" PRId64 : "%" PRId64 " (off)", k->def);
        return;
    case RD_KEY_DOUBLE:
        snprintf(buf, cap, "%g", k->ddef);
        return;
    case RD_KEY_BOOL:
        snprintf(buf, cap, "%s", k->def ? "true" : "false");
        return;
    case RD_KEY_TEXT:
    case RD_KEY_OPT_TEXT:
        snprintf(buf, cap, k->sdef ? "`\"%s\"`" : "unset", k->sdef);
        return;
    case RD_KEY_FILE:
    case RD_KEY_SECRET:
        snprintf(buf, cap, "unset");
        return;
    case RD_KEY_ENUM:
        snprintf(buf, cap, "`%s`", k->names[k->def]);
        return;
    case RD_KEY_SECTION:
    case RD_KEY_CUSTOM:
    case RD_KEY_INCLUDE:
        break;
    }
    snprintf(buf, cap, "—");
}

static void rows(FILE *out, const rd_key_table *t)
{
    for (size_t i = 0; i < t->n; i++) {
        const rd_key *k = &t->keys[i];
        if (k->type == RD_KEY_INCLUDE) {
            rows(out, k->sub);
            continue;
        }
        char range[256], def[128];
        range_text(k, range, sizeof range);
        default_text(k, def, sizeof def);
        key_cell(out, k);
        cell(out, type_text(k));
        cell(out, range);
        cell(out, def);
        char what[512];
        snprintf(what, sizeof what, "%s%s", k->doc ? k->doc : "",
                 k->restart ? " (restart)" : "");
        cell(out, what);
        fputc('\n', out);
    }
}

typedef struct seen_tables {
    const rd_key_table *t[MAX_TABLES];
    size_t n;
} seen_tables;

static bool first_visit(seen_tables *s, const rd_key_table *t)
{
    for (size_t i = 0; i < s->n; i++)
        if (s->t[i] == t)
            return false;
    if (s->n < MAX_TABLES)
        s->t[s->n++] = t;
    return true;
}

static void sections_under(FILE *out, const rd_key_table *t, const char *heading,
                           seen_tables *seen);

/* "### `a`, `b`" for the title "a, b". */
static void heading_line(FILE *out, const char *heading, const char *title)
{
    fprintf(out, "%s ", heading);
    for (;;) {
        size_t n = strcspn(title, ",");
        fprintf(out, "`%.*s`", (int)n, title);
        if (!title[n])
            break;
        fputs(", ", out);
        title += n + 1;
        title += strspn(title, " ");
    }
    fputs("\n\n", out);
}

static void table(FILE *out, const rd_key_table *t, const char *heading, seen_tables *seen)
{
    if (!first_visit(seen, t))
        return;
    heading_line(out, heading, t->title);
    if (t->note || t->restart)
        fprintf(out, "%s%s%s\n\n", t->restart ? "A change of any key here needs a restart." : "",
                t->note && t->restart ? " " : "", t->note ? t->note : "");
    fputs("| Key | Type | Range | Default | What it does |\n", out);
    fputs("|-----|------|-------|---------|--------------|\n", out);
    rows(out, t);
    fputc('\n', out);
    sections_under(out, t, heading, seen);
}

static void sections_under(FILE *out, const rd_key_table *t, const char *heading,
                           seen_tables *seen)
{
    for (size_t i = 0; i < t->n; i++) {
        const rd_key *k = &t->keys[i];
        if (k->type == RD_KEY_SECTION || (k->type == RD_KEY_CUSTOM && k->sub))
            table(out, k->sub, heading, seen);
        else if (k->type == RD_KEY_INCLUDE)
            sections_under(out, k->sub, heading, seen);
    }
}

void rd_keys_markdown(FILE *out, const rd_key_table *const *files, size_t n_files,
                      const char *heading)
{
    seen_tables seen = {.n = 0};
    /* A file is a list of sections, each with a table of its own; a table
     * two files share (the policies) is shown once. */
    for (size_t i = 0; i < n_files; i++) {
        first_visit(&seen, files[i]);
        sections_under(out, files[i], heading, &seen);
    }
}
