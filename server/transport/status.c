#include "transport/status.h"

/* | rd_err             | gRPC status         | when                              |
 * |--------------------|---------------------|-----------------------------------|
 * | RD_OK              | OK                  |                                   |
 * | RD_ERR_INVALID     | INVALID_ARGUMENT    | malformed or out-of-range request |
 * | RD_ERR_NOT_FOUND   | NOT_FOUND           | unknown turn, rejected tool       |
 * | RD_ERR_EXHAUSTED   | RESOURCE_EXHAUSTED  | tracked-tool capacity full        |
 * | RD_ERR_UNAVAILABLE | UNAVAILABLE         | the store cannot answer           |
 * | RD_ERR_DEADLINE    | DEADLINE_EXCEEDED   | the caller's deadline passed      |
 * | RD_ERR_NOMEM       | RESOURCE_EXHAUSTED  | out of memory for this call       |
 * | RD_ERR_CONFIG      | FAILED_PRECONDITION | no usable configuration           |
 * | RD_ERR_INTERNAL    | INTERNAL            | a bug                             | */
grpc_status_code rd_status_to_grpc(rd_err code)
{
    switch (code) {
    case RD_OK: return GRPC_STATUS_OK;
    case RD_ERR_INVALID: return GRPC_STATUS_INVALID_ARGUMENT;
    case RD_ERR_NOT_FOUND: return GRPC_STATUS_NOT_FOUND;
    case RD_ERR_EXHAUSTED: return GRPC_STATUS_RESOURCE_EXHAUSTED;
    case RD_ERR_UNAVAILABLE: return GRPC_STATUS_UNAVAILABLE;
    case RD_ERR_DEADLINE: return GRPC_STATUS_DEADLINE_EXCEEDED;
    case RD_ERR_NOMEM: return GRPC_STATUS_RESOURCE_EXHAUSTED;
    case RD_ERR_CONFIG: return GRPC_STATUS_FAILED_PRECONDITION;
    case RD_ERR_INTERNAL: return GRPC_STATUS_INTERNAL;
    }
    return GRPC_STATUS_INTERNAL;
}
