import type { ErrorKind as _recovery_v1_ErrorKind, ErrorKind__Output as _recovery_v1_ErrorKind__Output } from '../../recovery/v1/ErrorKind';
import type { ErrorSource as _recovery_v1_ErrorSource, ErrorSource__Output as _recovery_v1_ErrorSource__Output } from '../../recovery/v1/ErrorSource';
import type { Long } from '@grpc/proto-loader';
export interface ToolError {
    'message'?: (string);
    'http_status'?: (number);
    'grpc_code'?: (number);
    'code'?: (string);
    'exception_type'?: (string);
    'kind'?: (_recovery_v1_ErrorKind);
    'source'?: (_recovery_v1_ErrorSource);
    'retry_after_ms'?: (number | string | Long);
}
export interface ToolError__Output {
    'message': (string);
    'http_status': (number);
    'grpc_code': (number);
    'code': (string);
    'exception_type': (string);
    'kind': (_recovery_v1_ErrorKind__Output);
    'source': (_recovery_v1_ErrorSource__Output);
    'retry_after_ms': (number);
}
