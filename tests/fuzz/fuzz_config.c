/* libFuzzer target: the main configuration loader (config/config.c,
 * the key tables of config_keys.c over yaml_util.c). Each input is written as recovery.yaml
 * into a scratch directory that also holds the shipped rules.yaml and
 * tools.d/, and loaded with rd_config_load, as `recoveryd --config` would.
 *
 * Besides sanitizer reports: a refused file must come with a message that
 * names the file, and a loaded one must have what the daemon relies on
 * (a listen address, at least one worker, the rules, tools sorted by id
 * for bsearch). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "config/config.h"
#include "fuzz_support.h"

static char *main_path;

static void fail(const char *what, const char *detail)
{
    fprintf(stderr, "fuzz config: %s: %s\n", what, detail);
    abort();
}

static void setup(void)
{
    fuzz_quiet_logs();
    const char *dir = fuzz_scratch_dir();
    fuzz_copy_shipped(dir, "rules.yaml");
    fuzz_copy_shipped_tools(dir);
    main_path = fuzz_path(dir, "recovery.yaml");
}

static void check_loaded(const rd_config *cfg)
{
    if (!cfg->server.listen || !cfg->server.listen[0])
        fail("loaded without a listen address", "");
    if (cfg->server.workers == 0)
        fail("loaded with zero workers", "");
    if (cfg->rules.n_rules == 0)
        fail("loaded without rules", "");
    for (size_t i = 1; i < cfg->n_tools; i++)
        if (strcmp(cfg->tools[i - 1].id, cfg->tools[i].id) >= 0)
            fail("tools not sorted by id", cfg->tools[i].id);
    for (size_t i = 0; i < cfg->n_tools; i++)
        if (rd_config_find_tool(cfg, cfg->tools[i].id) != &cfg->tools[i])
            fail("a loaded tool is not found by id", cfg->tools[i].id);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!main_path)
        setup();
    fuzz_write_file(main_path, data, size);
    char err[RD_CONFIG_ERR_MAX];
    err[0] = '\0';
    rd_config *cfg = rd_config_load(main_path, err, sizeof err);
    if (cfg)
        check_loaded(cfg);
    else if (!err[0] || !strchr(err, ':'))
        fail("refused without a file:line message", err);
    rd_config_free(cfg);
    return 0;
}
