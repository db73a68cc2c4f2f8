"""The wire form (ToolError) of whatever a tool raised: every structured
field the exception carries, found by duck typing so that no HTTP, gRPC or
MCP library has to be installed for the others to work.

Recognised: ToolFailure (fields as given); HTTP status and Retry-After from
httpx, requests, aiohttp and openai exceptions (``response.status_code`` /
``status`` / ``status_code``, ``response.headers``); the API error code of
openai and similar SDKs (``code``); gRPC status codes (``grpc.RpcError``);
MCP / JSON-RPC errors (``McpError.error.code``); errno names (OSError);
timeouts and transport errors by type."""
from __future__ import annotations

import asyncio
import email.utils
import errno as _errno
import time
from typing import Any, Optional

from .v1 import recovery_pb2 as pb


class ToolFailure(Exception):
    """Raise from a tool to hand the service structured signals beside the
    message. Any other exception is sent as its text, type name and whatever
    structured fields it carries."""

    def __init__(self, message: str, *, http_status: int = 0, grpc_code: int = 0,
                 code: str = "", exception_type: str = "", kind: int = 0,
                 source: int = 0, retry_after_ms: int = 0):
        super().__init__(message)
        self.message = message
        self.http_status = http_status
        self.grpc_code = grpc_code
        self.code = code
        self.exception_type = exception_type
        self.kind = kind
        self.source = source
        self.retry_after_ms = retry_after_ms


class ToolTimeout(TimeoutError):
    """A tool call overran the hard timeout; the run stopped waiting for it."""


# The most of an error message sent: its head and tail (a traceback's cause
# is its last line), the middle replaced by a marker. The service reads 8 KiB
# of each end and accepts up to its receive limit; cutting here keeps a huge
# message from costing the request, or being refused by a smaller limit.
MESSAGE_SEND_MAX = 32 * 1024


def _cut_message(text: str) -> str:
    data = text.encode("utf-8", "surrogatepass")
    if len(data) <= MESSAGE_SEND_MAX:
        return text
    room = MESSAGE_SEND_MAX - 48
    head = data[:room // 2].decode("utf-8", "ignore")
    tail = data[-(room - room // 2):].decode("utf-8", "ignore")
    cut = len(data) - len(head.encode()) - len(tail.encode())
    return f"{head}\n[... {cut} bytes cut ...]\n{tail}"


def _exception_type(e: BaseException) -> str:
    cls = type(e)
    module = cls.__module__
    if module == "builtins":
        return cls.__qualname__
    return f"{module.split('.')[0]}.{cls.__qualname__}"


def _int(value: Any) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return 0


def _http_status(e: BaseException) -> int:
    for name in ("status_code", "status", "http_status"):
        status = _int(getattr(e, name, None))
        if 100 <= status <= 599:
            return status
    response = getattr(e, "response", None)
    if response is not None:
        for name in ("status_code", "status"):
            status = _int(getattr(response, name, None))
            if 100 <= status <= 599:
                return status
    return 0


def _headers(e: BaseException) -> Any:
    headers = getattr(e, "headers", None)
    if headers is None and getattr(e, "response", None) is not None:
        headers = getattr(e.response, "headers", None)
    return headers


def parse_retry_after_ms(headers: Any, now: Optional[float] = None) -> int:
    """Retry-After (seconds or an HTTP date) or retry-after-ms from a header
    mapping, in milliseconds; 0 when absent or unreadable."""
    if headers is None:
        return 0
    try:
        ms = headers.get("retry-after-ms")
        if ms is not None:
            return max(0, int(float(ms)))
        value = headers.get("retry-after")
    except Exception:
        return 0
    if value is None:
        return 0
    value = str(value).strip()
    try:
        return max(0, int(float(value) * 1000))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value).timestamp()
    except (TypeError, ValueError, IndexError):
        return 0
    return max(0, int((when - (time.time() if now is None else now)) * 1000))


def _grpc_code(e: BaseException) -> int:
    code = getattr(e, "code", None)
    if not callable(code):
        return 0
    try:
        value = code()
    except Exception:
        return 0
    # grpc.StatusCode members carry (number, name) as their value.
    number = getattr(value, "value", None)
    if isinstance(number, tuple) and number and isinstance(number[0], int):
        return number[0]
    return 0


def _mcp_error(e: BaseException) -> Optional[pb.ToolError]:
    """mcp's McpError (and any exception with an ErrorData-like ``error``)."""
    data = getattr(e, "error", None)
    code = getattr(data, "code", None)
    if isinstance(code, int) and not isinstance(code, bool) and hasattr(data, "message"):
        from .mcp import tool_error_from_jsonrpc  # a module of plain functions, no cycle at import
        return tool_error_from_jsonrpc(code, str(data.message or e))
    return None


def _kind_by_type(e: BaseException) -> int:
    if isinstance(e, (TimeoutError, asyncio.TimeoutError)):
        return pb.ERROR_KIND_TIMEOUT
    names = {c.__name__ for c in type(e).__mro__}
    if names & {"TimeoutException", "Timeout", "APITimeoutError", "ReadTimeout",
                "ConnectTimeout", "ServerTimeoutError", "ToolTimeoutError"}:
        return pb.ERROR_KIND_TIMEOUT
    if names & {"ConnectError", "ConnectionError", "TransportError", "APIConnectionError",
                "ClientConnectionError", "RemoteProtocolError"}:
        return pb.ERROR_KIND_TRANSPORT_ERROR
    # Arguments the framework refused before calling the tool (LangGraph's
    # ToolNode, the Agents SDK's JSON parsing); a ValidationError raised
    # inside a tool is not among them.
    if names & {"ToolInvocationError", "ModelBehaviorError"}:
        return pb.ERROR_KIND_INVALID_PARAMETERS
    return 0


def _api_code(e: BaseException) -> str:
    code = getattr(e, "code", None)
    if isinstance(code, str) and code:
        return code
    body = getattr(e, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and isinstance(inner.get("code"), str):
            return inner["code"]
    return ""


def tool_error_from_exception(e: Optional[BaseException], _depth: int = 0) -> pb.ToolError:
    """The ToolError for an exception a tool raised: the fields a ToolFailure
    gives, or every structured field the exception carries (HTTP status,
    Retry-After, API code, gRPC code, JSON-RPC code, errno name, timeout or
    transport kind) beside its text and type name."""
    if isinstance(e, ToolFailure):
        return pb.ToolError(message=_cut_message(e.message), http_status=e.http_status,
                            grpc_code=e.grpc_code, code=e.code,
                            exception_type=e.exception_type, kind=e.kind, source=e.source,
                            retry_after_ms=e.retry_after_ms)
    if e is None:
        return pb.ToolError(message="tool failed")
    err = _mcp_error(e) or pb.ToolError()
    err.message = _cut_message(err.message or str(e) or type(e).__name__)
    err.exception_type = _exception_type(e)
    if not err.http_status:
        err.http_status = _http_status(e)
    err.grpc_code = _grpc_code(e)
    err.retry_after_ms = parse_retry_after_ms(_headers(e))
    if not err.code:
        if isinstance(e, OSError) and e.errno in _errno.errorcode:
            err.code = _errno.errorcode[e.errno]
        else:
            err.code = _api_code(e)
    if not err.kind:
        err.kind = _kind_by_type(e)
    if not err.code and not err.http_status and not err.grpc_code:
        # Wrapped errors (raise ... from e): the cause's structured fields.
        cause = e.__cause__ or e.__context__
        if cause is not None and _depth < 8 and not isinstance(cause, ToolTimeout):
            inner = tool_error_from_exception(cause, _depth + 1)
            for name in ("http_status", "grpc_code", "code", "retry_after_ms", "source"):
                if getattr(inner, name):
                    setattr(err, name, getattr(inner, name))
            if not err.kind:
                err.kind = inner.kind
    return err
