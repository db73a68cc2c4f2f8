/* Builds the store the configuration asks for. The daemon calls this and
 * nothing else, so backends can change without touching main.c.
 * Ownership: the caller frees the result with rd_store_destroy. */
#ifndef RD_STORE_FACTORY_H
#define RD_STORE_FACTORY_H

#include "config/config.h"
#include "domain/store.h"

rd_store *rd_store_from_config(const rd_config *cfg, rd_status *st);

#endif
