/* Learning from outcomes (000 section 6.2, "episodic memory";
 * docs/FLEET.md): errors are grouped by a normalised signature, and for
 * each signature the store counts how often a retry after it later
 * succeeded or failed. Once there is enough evidence, an error no rule
 * knows is classified from that record.
 *
 * Normalisation (rd_signature_normalise): lower case; then quoted strings,
 * URLs, paths, UUIDs, IPv4 addresses (with a port), host:port pairs, hex
 * ids and numbers become placeholders (<str> <url> <path> <uuid> <ip>
 * <host> <hex> <n>); runs of white space become one space. The signature
 * is "<tool_id>|<normalised text>", cut at RD_SIGNATURE_MAX bytes, and is
 * named by a 64-bit FNV-1a hash written as 16 hex digits.
 *
 * Pure: no clock, no allocation. */
#ifndef RD_DOMAIN_SIGNATURE_H
#define RD_DOMAIN_SIGNATURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "domain/types.h"

#define RD_SIGNATURE_MAX 512
#define RD_SIGNATURE_ID_LEN 16

typedef struct rd_learning_policy {
    bool enabled;
    uint32_t min_samples;        /* retries settled before a signature decides */
    size_t max_signatures;       /* kept at once (least recently used go first) */
    int64_t ttl_ms;              /* a signature unused this long is forgotten */
} rd_learning_policy;

/* A retry after an error of this signature succeeded this share of the
 * time or more: the error is transient. */
#define RD_LEARN_TRANSIENT_RATIO 0.5
/* ... this share or less: permanent. In between: no verdict. */
#define RD_LEARN_PERMANENT_RATIO 0.1

typedef struct rd_signature {
    char text[RD_SIGNATURE_MAX + 1];
    uint64_t hash;
    char id[RD_SIGNATURE_ID_LEN + 1]; /* hash as hex */
} rd_signature;

/* Writes the normalised form of in[0..len) into out (NUL-terminated, cut
 * to cap - 1 bytes); returns its length. */
size_t rd_signature_normalise(const char *in, size_t len, char *out, size_t cap);

/* The signature of an error message reported for tool_id. */
void rd_signature_of(const char *tool_id, const char *message, size_t len, rd_signature *out);

/* The verdict of the evidence: RD_TRANSIENT, RD_PERMANENT, or
 * RD_RETRYABILITY_UNSPECIFIED (too few samples, or a ratio in between). */
rd_retryability rd_learned_retryability(const rd_learning_policy *p, uint64_t successes,
                                        uint64_t failures);

#endif
