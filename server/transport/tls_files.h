/* The server's TLS files, picked up again when they change.
 *
 * gRPC asks the fetcher (grpc_ssl_server_credentials_create_options_using_
 * config_fetcher) for the certificate at startup and before each handshake;
 * it looks at the files at most once a second (stat: inode, size, mtime)
 * and, when one changed, reads and checks all of them and hands gRPC the new
 * pair. New connections get the new certificate, open ones keep theirs. A
 * change that does not load (a half-written file, a key that does not match)
 * is logged and the previous pair stays in use. cert-manager and the
 * kubelet replace a mounted Secret by swapping a symlink: that is a new
 * inode.
 *
 * The certificate's notAfter is kept for the expiry metric and warning
 * (main.c). */
#ifndef RD_TRANSPORT_TLS_FILES_H
#define RD_TRANSPORT_TLS_FILES_H

#include <grpc/grpc_security.h>
#include <stdint.h>

#include "domain/err.h"

typedef struct rd_tls_files rd_tls_files;

/* Reads and checks the files (the key must match the certificate); NULL
 * with st set when they do not load. ca_file NULL = no client certificates. */
rd_tls_files *rd_tls_files_new(const char *cert_file, const char *key_file, const char *ca_file,
                               rd_status *st);
/* Credentials that follow the files; tf must outlive the server. */
grpc_server_credentials *rd_tls_files_credentials(rd_tls_files *tf);
/* The certificate in use: its notAfter (Unix seconds) and how many times it
 * was replaced since startup. */
int64_t rd_tls_files_not_after(const rd_tls_files *tf);
uint64_t rd_tls_files_reloads(const rd_tls_files *tf);
void rd_tls_files_free(rd_tls_files *tf);

#endif
