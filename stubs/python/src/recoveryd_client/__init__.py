"""Client for the recoveryd recovery-decision service.

``RecoveryClient.run_tool`` runs a tool call under the service's decisions;
``RecoveryClient.stub`` and ``recoveryd_client.v1`` are the plain generated
client and messages."""
from ._client import (
    DEFAULT_RPC_TIMEOUT_S,
    ESCALATE,
    FAIL_FAST,
    GIVE_UP,
    NO_ALTERNATIVE,
    PARTIAL,
    SUCCEEDED,
    Decision,
    FallbackPolicy,
    RecoveryClient,
    RunResult,
    ToolCallable,
    ToolFailure,
    ToolTimeout,
)
from .v1 import recovery_pb2, recovery_pb2_grpc

__all__ = [
    "DEFAULT_RPC_TIMEOUT_S", "ESCALATE", "FAIL_FAST", "GIVE_UP", "NO_ALTERNATIVE", "PARTIAL",
    "SUCCEEDED", "Decision", "FallbackPolicy", "RecoveryClient", "RunResult", "ToolCallable",
    "ToolFailure", "ToolTimeout", "recovery_pb2", "recovery_pb2_grpc",
]
__version__ = "0.1.0"
