/* A temporary directory per test for the unit tests that write
 * configuration files (test_config_merge.c, and those that include
 * config_fixture.h): make_dir and remove_dir as cmocka setup and teardown,
 * in_dir and put to name and write the files in it. Include after
 * cmocka.h, ftw.h, limits.h, sys/stat.h and unistd.h (with _GNU_SOURCE for
 * nftw). */
#ifndef RD_TEST_TEMP_DIR_H
#define RD_TEST_TEMP_DIR_H

static char g_dir[64];

static int make_dir(void **state)
{
    (void)state;
    snprintf(g_dir, sizeof g_dir, "/tmp/rd_test_XXXXXX");
    return mkdtemp(g_dir) ? 0 : -1;
}

static int remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static int remove_dir(void **state)
{
    (void)state;
    return nftw(g_dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static const char *in_dir(char *buf, const char *rel)
{
    snprintf(buf, PATH_MAX, "%s/%s", g_dir, rel);
    return buf;
}

/* Writes g_dir/rel, creating its parent directories. */
static void put(const char *rel, const char *text)
{
    char path[PATH_MAX];
    in_dir(path, rel);
    for (char *p = path + strlen(g_dir) + 1; (p = strchr(p, '/')) != NULL; p++) {
        *p = '\0';
        mkdir(path, 0755);
        *p = '/';
    }
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

#endif
