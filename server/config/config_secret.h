/* Values the configuration reads from elsewhere: files named by a key
 * (resolved against the directory of the file that names them, checked to
 * be readable) and secrets given as <name>_file or <name>_env. A secret is
 * the first line of the file or variable without the blanks around it, is
 * never written into an error message, and is wiped when released.
 * Errors: "FILE:LINE: KEY: problem", RD_ERR_CONFIG. */
#ifndef RD_CONFIG_CONFIG_SECRET_H
#define RD_CONFIG_CONFIG_SECRET_H

#include "config/yaml_util.h"

#define RD_SECRET_MAX 4096

/* `written` resolved against the directory of c->file and checked to be
 * readable; *out receives a malloc'd copy (the previous one is freed). */
int rd_config_readable_file(const rd_yctx *c, int line, const char *path, const char *written,
                            char **out);

/* <name>_file or <name>_env of map (at most one): *out becomes the secret
 * (malloc'd; the previous one is wiped and freed), or stays as it was
 * when neither key is given. `path` names the map. */
int rd_config_secret(const rd_yctx *c, const rd_ynode *map, const char *path, const char *name,
                     char **out);

/* Wipes and frees a secret; NULL is fine. */
void rd_config_free_secret(char *secret);

#endif
