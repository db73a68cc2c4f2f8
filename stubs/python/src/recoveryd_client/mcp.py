"""MCP results and errors as recoveryd ToolErrors.

An executor that calls an MCP server sees two kinds of failure:

* a JSON-RPC error response (``{"code": -32602, "message": ...}``; the
  ``mcp`` SDK raises it as ``MCPError``/``McpError``): the request failed at
  the protocol level; whether the tool ran follows from the code;
* a ``CallToolResult`` with ``isError: true``: the tool ran and reported an
  error in its content.

Both map to a :class:`McpToolFailure` (a ToolFailure with ``source`` MCP, the
JSON-RPC code as ``code``, an ErrorKind and ``executed``). The LangGraph and
OpenAI Agents integrations raise these for MCP-shaped results, and every
exception mapping (``tool_error_from_exception``) reads MCP errors through
:func:`tool_error_from_jsonrpc`. Needs no MCP package."""
from __future__ import annotations

from typing import Any, Optional

from ._errors import ToolFailure
from .v1 import recovery_pb2 as pb

# JSON-RPC codes whose request never reached the tool.
_NOT_EXECUTED = {
    -32601: pb.ERROR_KIND_UNKNOWN_TOOL,        # method (tool) not found
    -32602: pb.ERROR_KIND_INVALID_PARAMETERS,  # arguments refused before the call
}
_TIMEOUT_CODES = {-32001}                      # MCP request timeout

#: Kinds for which the tool did not run (ErrorKind's documented meaning).
NOT_EXECUTED_KINDS = frozenset({
    pb.ERROR_KIND_UNKNOWN_TOOL, pb.ERROR_KIND_NOT_PERMITTED, pb.ERROR_KIND_INVALID_PARAMETERS,
    pb.ERROR_KIND_LIMIT_EXCEEDED, pb.ERROR_KIND_CANCELED,
})


class McpToolFailure(ToolFailure):
    """A failed MCP tool call, with what the classifier needs."""

    @property
    def executed(self) -> bool:
        """Whether the tool ran, as the ErrorKind says."""
        return self.kind not in NOT_EXECUTED_KINDS


def _jsonrpc_kind(code: int) -> int:
    if code in _NOT_EXECUTED:
        return _NOT_EXECUTED[code]
    if code in _TIMEOUT_CODES:
        return pb.ERROR_KIND_TIMEOUT
    return pb.ERROR_KIND_TRANSPORT_ERROR


def tool_error_from_jsonrpc(code: int, message: str, *, http_status: int = 0) -> pb.ToolError:
    """The ToolError for a JSON-RPC error response (``code``, ``message``;
    ``http_status`` when it came over streamable HTTP)."""
    return pb.ToolError(message=message or f"JSON-RPC error {code}", code=str(int(code)),
                        kind=_jsonrpc_kind(int(code)), source=pb.ERROR_SOURCE_MCP,
                        http_status=http_status)


def from_jsonrpc_error(error: Any, *, http_status: int = 0) -> McpToolFailure:
    """A JSON-RPC error object (a dict ``{"code", "message"}``, mcp's
    ``ErrorData``, or an ``MCPError`` exception) as a raisable failure."""
    inner = getattr(error, "error", error)
    if isinstance(inner, dict):
        code, message = inner.get("code"), inner.get("message", "")
    else:
        code, message = getattr(inner, "code", None), getattr(inner, "message", "")
    if not isinstance(code, int) or isinstance(code, bool):
        raise ValueError(f"not a JSON-RPC error (code {code!r})")
    err = tool_error_from_jsonrpc(code, str(message or ""), http_status=http_status)
    return McpToolFailure(err.message, code=err.code, kind=err.kind, source=err.source,
                          http_status=err.http_status)


def _field(result: Any, *names: str) -> Any:
    for name in names:
        if isinstance(result, dict):
            if name in result:
                return result[name]
        elif hasattr(result, name):
            return getattr(result, name)
    return None


def is_error_result(result: Any) -> bool:
    """True for a CallToolResult (object or wire dict) with isError set."""
    return _field(result, "isError", "is_error") is True and \
        _field(result, "content") is not None


def _text_of(result: Any) -> str:
    parts = []
    for block in _field(result, "content") or []:
        text = _field(block, "text")
        if isinstance(text, str) and text:
            parts.append(text)
    return "\n".join(parts)


def from_call_tool_result(result: Any) -> Optional[McpToolFailure]:
    """The failure a ``CallToolResult`` with ``isError: true`` reports (the
    tool ran; its text content is the message), or None for a result that
    is not an error."""
    if not is_error_result(result):
        return None
    message = _text_of(result) or "MCP tool returned isError without text"
    return McpToolFailure(message, kind=pb.ERROR_KIND_EXECUTION_ERROR,
                          source=pb.ERROR_SOURCE_MCP)
