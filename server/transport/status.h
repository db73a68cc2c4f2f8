/* The one place where the server's errors become gRPC status codes. */
#ifndef RD_TRANSPORT_STATUS_H
#define RD_TRANSPORT_STATUS_H

#include <grpc/status.h>

#include "domain/err.h"

grpc_status_code rd_status_to_grpc(rd_err code);

#endif
