import type { ErrorKind as _recovery_v1_ErrorKind, ErrorKind__Output as _recovery_v1_ErrorKind__Output } from '../../recovery/v1/ErrorKind';
import type { ErrorSource as _recovery_v1_ErrorSource, ErrorSource__Output as _recovery_v1_ErrorSource__Output } from '../../recovery/v1/ErrorSource';
import type { Hint as _recovery_v1_Hint, Hint__Output as _recovery_v1_Hint__Output } from '../../recovery/v1/Hint';
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
    'read_only_hint'?: (_recovery_v1_Hint);
    'destructive_hint'?: (_recovery_v1_Hint);
    'idempotent_hint'?: (_recovery_v1_Hint);
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
    'read_only_hint': (_recovery_v1_Hint__Output);
    'destructive_hint': (_recovery_v1_Hint__Output);
    'idempotent_hint': (_recovery_v1_Hint__Output);
}
