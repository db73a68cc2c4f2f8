"""tool_error_from_exception with the real exception types of httpx,
requests, openai, grpc and mcp, and the MCP mapping of JSON-RPC errors and
isError results."""
import errno

import grpc
import httpx
import openai
import pytest
import requests
from mcp.shared.exceptions import MCPError

from recoveryd_client import ToolFailure, parse_retry_after_ms, tool_error_from_exception
from recoveryd_client import recovery_pb2 as pb
from recoveryd_client.mcp import (from_call_tool_result, from_jsonrpc_error,
                                  tool_error_from_jsonrpc)


def httpx_response(status, headers=None):
    req = httpx.Request("GET", "https://api.example/x")
    return httpx.Response(status, request=req, headers=headers or {})


def test_httpx_status_error_gives_status_and_retry_after():
    resp = httpx_response(429, {"retry-after": "7"})
    e = httpx.HTTPStatusError("Too Many Requests", request=resp.request, response=resp)
    err = tool_error_from_exception(e)
    assert (err.http_status, err.retry_after_ms) == (429, 7000)
    assert err.exception_type == "httpx.HTTPStatusError"


def test_httpx_timeout_and_connect_error_kinds():
    assert tool_error_from_exception(httpx.ReadTimeout("read timed out")).kind == \
        pb.ERROR_KIND_TIMEOUT
    assert tool_error_from_exception(httpx.ConnectError("refused")).kind == \
        pb.ERROR_KIND_TRANSPORT_ERROR


def test_requests_http_error_gives_status():
    r = requests.models.Response()
    r.status_code = 502
    err = tool_error_from_exception(requests.HTTPError("502 Bad Gateway", response=r))
    assert err.http_status == 502 and err.exception_type == "requests.HTTPError"
    assert tool_error_from_exception(requests.ConnectTimeout("x")).kind == pb.ERROR_KIND_TIMEOUT


def test_openai_error_gives_status_code_and_retry_after_ms():
    resp = httpx_response(429, {"retry-after-ms": "1500"})
    e = openai.RateLimitError("quota", response=resp,
                              body={"error": {"code": "insufficient_quota"}})
    err = tool_error_from_exception(e)
    assert (err.http_status, err.code, err.retry_after_ms) == (429, "insufficient_quota", 1500)
    assert tool_error_from_exception(openai.APITimeoutError(request=resp.request)).kind == \
        pb.ERROR_KIND_TIMEOUT


def test_grpc_error_gives_the_status_code():
    e = grpc.aio.AioRpcError(grpc.StatusCode.UNAVAILABLE, grpc.aio.Metadata(),
                             grpc.aio.Metadata(), details="connection refused")
    assert tool_error_from_exception(e).grpc_code == grpc.StatusCode.UNAVAILABLE.value[0]


def test_errno_name_and_wrapped_cause():
    assert tool_error_from_exception(ConnectionResetError(errno.ECONNRESET, "reset")).code == \
        "ECONNRESET"
    try:
        try:
            raise httpx.HTTPStatusError("x", request=httpx_response(503).request,
                                        response=httpx_response(503))
        except httpx.HTTPStatusError as inner:
            raise RuntimeError("search failed") from inner
    except RuntimeError as outer:
        err = tool_error_from_exception(outer)
    assert err.http_status == 503 and err.exception_type == "RuntimeError"


def test_tool_failure_fields_are_sent_as_given():
    err = tool_error_from_exception(ToolFailure("x", http_status=418, code="teapot",
                                                retry_after_ms=5))
    assert (err.http_status, err.code, err.retry_after_ms) == (418, "teapot", 5)


def test_retry_after_as_http_date():
    assert parse_retry_after_ms({"retry-after": "Thu, 01 Jan 2099 00:00:10 GMT"},
                                now=4070908800.0) == 10_000
    assert parse_retry_after_ms({"retry-after": "soon"}) == 0


@pytest.mark.parametrize("code,kind,executed", [
    (-32601, pb.ERROR_KIND_UNKNOWN_TOOL, False),
    (-32602, pb.ERROR_KIND_INVALID_PARAMETERS, False),
    (-32001, pb.ERROR_KIND_TIMEOUT, True),
    (-32000, pb.ERROR_KIND_TRANSPORT_ERROR, True),
    (-32603, pb.ERROR_KIND_TRANSPORT_ERROR, True),
])
def test_jsonrpc_error_mapping(code, kind, executed):
    failure = from_jsonrpc_error({"code": code, "message": "m"})
    assert (failure.code, failure.kind, failure.executed) == (str(code), kind, executed)
    assert failure.source == pb.ERROR_SOURCE_MCP
    assert tool_error_from_jsonrpc(code, "m").kind == kind


def test_mcp_error_exception_maps_through_tool_error_from_exception():
    err = tool_error_from_exception(MCPError(-32602, "Invalid params: city is required"))
    assert (err.code, err.kind, err.source) == ("-32602", pb.ERROR_KIND_INVALID_PARAMETERS,
                                                pb.ERROR_SOURCE_MCP)
    assert err.message == "Invalid params: city is required"


def test_is_error_call_tool_result():
    from mcp_types import CallToolResult, TextContent
    result = CallToolResult(content=[TextContent(type="text", text="rate limited")],
                            is_error=True)
    failure = from_call_tool_result(result)
    assert (failure.message, failure.kind, failure.executed) == \
        ("rate limited", pb.ERROR_KIND_EXECUTION_ERROR, True)
    assert from_call_tool_result({"isError": True, "content": [{"type": "text", "text": "x"}]})
    assert from_call_tool_result({"isError": False, "content": []}) is None
    assert from_call_tool_result(CallToolResult(content=[], is_error=False)) is None
