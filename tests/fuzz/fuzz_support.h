/* What the libFuzzer targets share: where the shipped configuration is, a
 * private scratch directory, and whole-file reads and writes.
 *
 * Every function aborts on an environment failure (no scratch directory, a
 * missing shipped file): that is a broken setup, never a finding, and
 * aborting says so at once instead of fuzzing nothing.
 *
 * Ownership: strings returned by fuzz_path are malloc'd and the caller
 * frees them; fuzz_scratch_dir's result lives until the process exits. */
#ifndef RD_FUZZ_SUPPORT_H
#define RD_FUZZ_SUPPORT_H

#include <protobuf-c/protobuf-c.h>
#include <stddef.h>
#include <stdint.h>

#ifndef RD_SOURCE_DIR
#error "RD_SOURCE_DIR (the repository root) must be defined"
/* NULL when transport/pbpack.c packs msg into protobuf-c's bytes (in a
 * buffer of the size plus RD_PB_PACK_SLACK, and refuses one a byte short),
 * else what differed. */
const char *fuzz_packing_mismatch(const ProtobufCMessage *msg);

#endif

/* A directory of this process's own, removed at exit (tmpfs when there is
 * one, since the config targets write a file per input). */
const char *fuzz_scratch_dir(void);

/* dir + "/" + name, malloc'd. */
char *fuzz_path(const char *dir, const char *name);

/* Replaces `path` with exactly these bytes. */
void fuzz_write_file(const char *path, const uint8_t *data, size_t size);

/* Copies the shipped file config/<name> to dir/<name>. */
void fuzz_copy_shipped(const char *dir, const char *name);

/* Copies the shipped config/tools.d/ manifests into dir/tools.d/. */
void fuzz_copy_shipped_tools(const char *dir);

/* Keeps only error-level log lines, so the fuzzer's own output stays
 * readable (every Decide logs its trace events at info). */
void fuzz_quiet_logs(void);

/* NULL when transport/pbpack.c packs msg into protobuf-c's bytes (in a
 * buffer of the size plus RD_PB_PACK_SLACK, and refuses one a byte short),
 * else what differed. */
const char *fuzz_packing_mismatch(const ProtobufCMessage *msg);

#endif
