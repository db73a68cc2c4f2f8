"""Generated messages and service stub of recovery.v1 (scripts/gen-stubs.sh)."""
from . import recovery_pb2, recovery_pb2_grpc

__all__ = ["recovery_pb2", "recovery_pb2_grpc"]
