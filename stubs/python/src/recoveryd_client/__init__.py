"""Client for the recoveryd recovery-decision service.

``RecoveryClient.run_tool`` runs a tool call under the service's decisions;
``AsyncRecoveryClient`` (also in ``recoveryd_client.aio``) does the same on
asyncio.
``RecoveryClient.stub`` and ``recoveryd_client.v1`` are the plain generated
client and messages. Framework integrations: ``recoveryd_client.langgraph``
(extra ``[langgraph]``) and ``recoveryd_client.openai_agents`` (extra
``[openai-agents]``); MCP error mapping: ``recoveryd_client.mcp``."""
from ._client import DEFAULT_RPC_TIMEOUT_S, RecoveryClient, ToolCallable
from ._errors import ToolFailure, ToolTimeout, parse_retry_after_ms, tool_error_from_exception
from ._run import (ESCALATE, FAIL_FAST, GIVE_UP, NO_ALTERNATIVE, PARTIAL, SUCCEEDED,
                   VERIFICATION_REQUIRED, Attempt, Decision, FallbackPolicy, RunResult,
                   VerifyRequest, check_tenant, current_attempt)
from .aio import AsyncRecoveryClient, AsyncToolCallable
from .v1 import recovery_pb2, recovery_pb2_grpc


def _version() -> str:
    from importlib import metadata
    try:
        return metadata.version("recoveryd-client")
    except metadata.PackageNotFoundError:  # imported from a source tree
        return "0+unknown"


__version__ = _version()

__all__ = [
    "Attempt", "VERIFICATION_REQUIRED", "VerifyRequest", "check_tenant", "current_attempt",
    "AsyncRecoveryClient", "AsyncToolCallable", "DEFAULT_RPC_TIMEOUT_S", "ESCALATE", "FAIL_FAST", "GIVE_UP", "NO_ALTERNATIVE", "PARTIAL",
    "SUCCEEDED", "Decision", "FallbackPolicy", "RecoveryClient", "RunResult", "ToolCallable",
    "ToolFailure", "ToolTimeout", "parse_retry_after_ms", "recovery_pb2", "recovery_pb2_grpc",
    "tool_error_from_exception",
]
