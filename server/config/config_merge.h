/* Drop-in configuration: the main file plus the fragments of the directory
 * beside it, merged into one YAML tree before it is read.
 *
 * For a main file DIR/NAME.yaml (or NAME.yml, or NAME) the drop-in
 * directory is DIR/NAME.d. `--config` may also name a directory D: the main
 * file is then D/recovery.yaml (and the drop-ins D/recovery.d). Fragments
 * are the directory's *.yaml and *.yml files whose names do not start with
 * a dot, read in byte order of their names (`10-base.yaml` before
 * `20-production.yaml`), each one over the result of the ones before:
 *   - a mapping merges into a mapping key by key, at every depth;
 *   - anything else (a scalar, a list, a mapping over a non-mapping)
 *     replaces the earlier value;
 *   - a key set to null (`key: ~`, or `key:` with nothing after it) removes
 *     the key, so the built-in default applies again.
 * A missing drop-in directory is no error; an unreadable one is. Relative
 * paths in any fragment (rules_file, tools.directory) resolve against the
 * main file's directory, as in the main file.
 *
 * Errors keep naming the file and line that wrote the value: a node taken
 * from fragment k carries its line plus k * RD_MERGE_LINE_STRIDE, and
 * rd_config_merge_blame rewrites "MAIN:ENCODED:" at the front of the error
 * message into "FRAGMENT:LINE:". */
#ifndef RD_CONFIG_MERGE_H
#define RD_CONFIG_MERGE_H

#include <stddef.h>

#include "config/yaml_util.h"

#define RD_MERGE_MAX_FRAGMENTS 200   /* 200 x stride stays below INT_MAX */
#define RD_MERGE_LINE_STRIDE 10000000 /* more lines than a 4 MiB file can have */
#define RD_MERGE_MAIN_NAME "recovery.yaml"

/* The fragments one load merged, to name them in errors. Owns its paths. */
typedef struct rd_config_sources {
    char **fragments;   /* fragments[k - 1] is fragment k */
    size_t n;
} rd_config_sources;

/* The main file for `path`: path itself, or path/recovery.yaml when path
 * is a directory. malloc'd (NULL when out of memory). */
char *rd_config_main_file(const char *path);

/* The drop-in directory of a main file (see above); malloc'd. */
char *rd_config_dropin_dir(const char *main_file);

/* Parses c->file and merges its drop-in fragments over it. On success *root
 * is the merged tree (the caller frees it with rd_yaml_free) and *src names
 * the fragments; on error *root is NULL and the message names the file and
 * line. *src must be released with rd_config_sources_free either way. */
int rd_config_merge_load(const rd_yctx *c, rd_ynode **root, rd_config_sources *src);

/* When err starts with "MAIN:LINE:" and LINE belongs to a fragment, writes
 * the fragment's path and own line there instead. */
void rd_config_merge_blame(const rd_config_sources *src, const char *main_file, char *err,
                           size_t err_cap);

void rd_config_sources_free(rd_config_sources *src);

#endif
