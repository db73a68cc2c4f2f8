/* Builds the store the configuration asks for. The daemon calls this and
 * nothing else, so backends can change without touching main.c.
 * Ownership: the caller frees the result with rd_store_destroy. */
#ifndef RD_STORE_FACTORY_H
#define RD_STORE_FACTORY_H

#include "domain/signature.h"
#include "domain/store.h"

/* `c` is the store: section; `learning` sizes the signature table; a Redis
 * store keeps a connection per worker thread (and one more). *shared (when
 * not NULL) receives the backend other replicas share, without the
 * degraded-mode wrapper (borrowed: it lives as long as the store), or NULL
 * for a store only this replica uses. */
rd_store *rd_store_from_config(const rd_store_config *c, const rd_learning_policy *learning,
                               unsigned workers, rd_store **shared, rd_status *st);

#endif
