/* Files and secrets named by configuration keys (see config_secret.h). */
#include "config/config_secret.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "domain/err.h"

#define PATH_TEXT_MAX 4096
#define ENV_NAME_MAX 256

/* `rel` against the directory of base_file; malloc'd (NULL: no memory). */
static char *resolve_against(const char *base_file, const char *rel)
{
    const char *slash = strrchr(base_file, '/');
    if (rel[0] == '/' || !slash)
        return strdup(rel);
    size_t n = (size_t)(slash - base_file) + 1 + strlen(rel) + 1;
    char *out = malloc(n);
    if (out)
        snprintf(out, n, "%.*s/%s", (int)(slash - base_file), base_file, rel);
    return out;
}

int rd_config_readable_file(const rd_yctx *c, int line, const char *path, const char *written,
                            char **out)
{
    char *resolved = resolve_against(c->file, written);
    if (!resolved)
        return rd_yerr(c, line, path, "out of memory");
    if (access(resolved, R_OK) != 0) {
        int rc = rd_yerr(c, line, path, "cannot read \"%s\": %s", resolved, strerror(errno));
        free(resolved);
        return rc;
    }
    free(*out);
    *out = resolved;
    return RD_OK;
}

/* A secret's first line without the blanks around it, in place: a file or
 * a Kubernetes Secret mounted as an environment variable usually ends with
 * a newline that is not part of the token. */
static char *trim_secret(char *text)
{
    text[strcspn(text, "\r\n")] = '\0';
    char *start = text + strspn(text, " \t");
    size_t n = strlen(start);
    while (n > 0 && (start[n - 1] == ' ' || start[n - 1] == '\t'))
        start[--n] = '\0';
    return start;
}

static int keep_secret(const rd_yctx *c, int line, const char *p, char *buf, size_t cap,
                       char **out)
{
    char *copy = strdup(trim_secret(buf));
    memset(buf, 0, cap);
    if (!copy)
        return rd_yerr(c, line, p, "out of memory");
    rd_config_free_secret(*out);
    *out = copy;
    return RD_OK;
}

static int read_secret_file(const rd_yctx *c, int line, const char *p, const char *file,
                            char **out)
{
    FILE *f = fopen(file, "r");
    if (!f)
        return rd_yerr(c, line, p, "cannot read \"%s\": %s", file, strerror(errno));
    char buf[RD_SECRET_MAX + 2];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    n = strlen(trim_secret(buf));
    if (n == 0 || n > RD_SECRET_MAX) {
        memset(buf, 0, sizeof buf);
        return rd_yerr(c, line, p, "\"%s\" holds no usable secret (1..%d bytes on its first line)",
                       file, RD_SECRET_MAX);
    }
    return keep_secret(c, line, p, buf, sizeof buf, out);
}

static int read_secret_env(const rd_yctx *c, int line, const char *p, const char *name,
                           char **out)
{
    const char *value = getenv(name);
    if (!value || !value[0])
        return rd_yerr(c, line, p, "environment variable %s is not set or empty", name);
    if (strlen(value) > RD_SECRET_MAX + 2)
        return rd_yerr(c, line, p, "environment variable %s is longer than %d bytes", name,
                       RD_SECRET_MAX);
    char buf[RD_SECRET_MAX + 3];
    snprintf(buf, sizeof buf, "%s", value);
    size_t n = strlen(trim_secret(buf));
    if (n == 0 || n > RD_SECRET_MAX) {
        memset(buf, 0, sizeof buf);
        return rd_yerr(c, line, p, "environment variable %s holds no usable secret "
                       "(1..%d bytes on its first line)", name, RD_SECRET_MAX);
    }
    return keep_secret(c, line, p, buf, sizeof buf, out);
}

/* map.key as text, "" or no value = absent. */
static int optional_text(const rd_yctx *c, const rd_ynode *map, const char *path,
                         const char *key, size_t max_len, const char **out)
{
    const rd_ynode *v = rd_ymap_get(map, key);
    *out = NULL;
    if (!v || (v->type == RD_YSCALAR && (rd_yis_null(v) || v->len == 0)))
        return RD_OK;
    char p[RD_YPATH_MAX];
    return rd_yscalar_str(c, v, rd_ypath(p, path, key), max_len, out);
}

int rd_config_secret(const rd_yctx *c, const rd_ynode *map, const char *path, const char *name,
                     char **out)
{
    char file_key[64], env_key[64], fp[RD_YPATH_MAX], ep[RD_YPATH_MAX];
    snprintf(file_key, sizeof file_key, "%s_file", name);
    snprintf(env_key, sizeof env_key, "%s_env", name);
    rd_ypath(fp, path, file_key);
    rd_ypath(ep, path, env_key);
    const char *file_text, *env;
    char *file = NULL;
    int rc = optional_text(c, map, path, file_key, PATH_TEXT_MAX, &file_text);
    if (rc == RD_OK && file_text)
        rc = rd_config_readable_file(c, rd_ymap_key_line(map, file_key), fp, file_text, &file);
    if (rc == RD_OK)
        rc = optional_text(c, map, path, env_key, ENV_NAME_MAX, &env);
    if (rc == RD_OK && file && env)
        rc = rd_yerr(c, rd_ymap_key_line(map, env_key), ep, "give %s or %s, not both", file_key,
                     env_key);
    if (rc == RD_OK && file)
        rc = read_secret_file(c, rd_ymap_key_line(map, file_key), fp, file, out);
    else if (rc == RD_OK && env)
        rc = read_secret_env(c, rd_ymap_key_line(map, env_key), ep, env, out);
    free(file);
    return rc;
}

void rd_config_free_secret(char *secret)
{
    if (secret)
        memset(secret, 0, strlen(secret)); /* do not leave tokens in freed memory */
    free(secret);
}
