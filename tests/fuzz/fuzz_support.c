#define _GNU_SOURCE /* nftw */

#include "fuzz_support.h"

#include <dirent.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "domain/log.h"
#include "transport/pbpack.h"

static char scratch[512];

static void die(const char *what, const char *path)
{
    fprintf(stderr, "fuzz setup: %s: %s\n", what, path);
    abort();
}

static int remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb; (void)flag; (void)ftw;
    remove(path);
    return 0;
}

static void remove_scratch(void)
{
    if (scratch[0])
        nftw(scratch, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

const char *fuzz_scratch_dir(void)
{
    if (scratch[0])
        return scratch;
    const char *base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    snprintf(scratch, sizeof scratch, "%s/rd-fuzz-XXXXXX", base);
    if (!mkdtemp(scratch))
        die("cannot create a scratch directory under", base);
    atexit(remove_scratch);
    return scratch;
}

char *fuzz_path(const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *p = malloc(n);
    if (!p)
        die("out of memory", name);
    snprintf(p, n, "%s/%s", dir, name);
    return p;
}

void fuzz_write_file(const char *path, const uint8_t *data, size_t size)
{
    FILE *f = fopen(path, "wb");
    if (!f || (size && fwrite(data, 1, size, f) != size) || fclose(f) != 0)
        die("cannot write", path);
}

static void copy_file(const char *from, const char *to)
{
    FILE *in = fopen(from, "rb");
    if (!in)
        die("cannot read", from);
    FILE *out = fopen(to, "wb");
    if (!out)
        die("cannot write", to);
    char buf[8192];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, in)) > 0)
        if (fwrite(buf, 1, n, out) != n)
            die("cannot write", to);
    fclose(in);
    if (fclose(out) != 0)
        die("cannot write", to);
}

void fuzz_copy_shipped(const char *dir, const char *name)
{
    char *from = fuzz_path(RD_SOURCE_DIR "/config", name);
    char *to = fuzz_path(dir, name);
    copy_file(from, to);
    free(from);
    free(to);
}

void fuzz_copy_shipped_tools(const char *dir)
{
    const char *shipped = RD_SOURCE_DIR "/config/tools.d";
    char *tools = fuzz_path(dir, "tools.d");
    if (mkdir(tools, 0700) != 0)
        die("cannot create", tools);
    DIR *d = opendir(shipped);
    if (!d)
        die("cannot open", shipped);
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.')
            continue;
        char *from = fuzz_path(shipped, e->d_name);
        char *to = fuzz_path(tools, e->d_name);
        copy_file(from, to);
        free(from);
        free(to);
    }
    closedir(d);
    free(tools);
}

void fuzz_quiet_logs(void)
{
    rd_log_set_level(RD_LOG_ERROR);
}

const char *fuzz_packing_mismatch(const ProtobufCMessage *msg)
{
    size_t len = protobuf_c_message_get_packed_size(msg);
    size_t cap = len + RD_PB_PACK_SLACK;
    uint8_t *expected = malloc(len + 1), *buf = malloc(cap);
    if (!expected || !buf)
        die("out of memory", "");
    const char *why = NULL;
    if (protobuf_c_message_pack(msg, expected) != len)
        why = "protobuf-c packed a size other than get_packed_size";
    else if (rd_pb_pack_backward(msg, buf, cap) != len)
        why = "pbpack packed another length";
    else if (memcmp(buf + RD_PB_PACK_SLACK, expected, len) != 0)
        why = "pbpack packed other bytes";
    else if (len > 0 && rd_pb_pack_backward(msg, buf, len - 1) != SIZE_MAX)
        why = "pbpack accepted a buffer too small";
    free(expected);
    free(buf);
    return why;
}
