/* Private to the library. */
#ifndef RDC_INTERNAL_H
#define RDC_INTERNAL_H

#include <grpc/grpc.h>

#include "recoveryd_client.h"

struct rdc_client {
    grpc_channel *channel; /* owned */
    rdc_options opts;      /* defaults applied; executor_id points at the copy below */
    char *executor_id;     /* owned copy */
    char *authorization;   /* owned "Bearer <token>", NULL = no token */
    char *tenant;          /* owned x-recoveryd-tenant value, NULL = none */
};

#endif
