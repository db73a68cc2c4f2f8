'use strict';
// What a thrown error becomes on the wire: every structured field it carries.
const test = require('node:test');
const assert = require('node:assert');
const { toProto, mcpToolError, checkMcpResult, ToolFailure } = require('..');

test('a Node system error sends its errno name and type', () => {
  const e = Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET', errno: -104 });
  assert.deepEqual(toProto(e), { message: 'read ECONNRESET', exception_type: 'Error', code: 'ECONNRESET' });
  const bare = Object.assign(new Error('socket hang up'), { errno: -110 });
  assert.equal(toProto(bare).code, 'ETIMEDOUT');
  assert.equal(toProto(bare).kind, 'ERROR_KIND_TIMEOUT');
});

test('fetch failures send the cause chain: its code and message', () => {
  const cause = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:9'), { code: 'ECONNREFUSED' });
  const e = new TypeError('fetch failed', { cause });
  const p = toProto(e);
  assert.equal(p.exception_type, 'TypeError');
  assert.equal(p.code, 'ECONNREFUSED');
  assert.equal(p.message, 'fetch failed: connect ECONNREFUSED 127.0.0.1:9');
});

test('HTTP status and retry-after come from the error or its response headers', () => {
  const api = Object.assign(new Error('Too Many Requests'), {
    name: 'AI_APICallError', statusCode: 429, responseHeaders: { 'Retry-After': '3' },
  });
  assert.deepEqual(toProto(api), { message: 'Too Many Requests', exception_type: 'AI_APICallError',
    http_status: 429, retry_after_ms: 3000 });
  const axiosLike = Object.assign(new Error('Request failed with status code 503'), {
    response: { status: 503, headers: new Headers({ 'retry-after-ms': '250' }) },
  });
  const p = toProto(axiosLike);
  assert.equal(p.http_status, 503);
  assert.equal(p.retry_after_ms, 250);
  assert.equal(toProto(Object.assign(new Error('x'), { retryAfterMs: 40 })).retry_after_ms, 40);
});

test('a gRPC error sends its status code', () => {
  const e = Object.assign(new Error('14 UNAVAILABLE: no healthy upstream'),
    { code: 14, details: 'no healthy upstream', metadata: {} });
  assert.equal(toProto(e).grpc_code, 14);
  assert.equal(toProto(e).code, undefined);
});

test('MCP: JSON-RPC errors and isError results map to code, kind and source', () => {
  const bad = toProto(mcpToolError({ code: -32602, message: 'Invalid params' }));
  assert.equal(bad.code, '-32602');
  assert.equal(bad.kind, 'ERROR_KIND_INVALID_PARAMETERS');
  assert.equal(bad.source, 'ERROR_SOURCE_MCP');
  assert.equal(toProto(mcpToolError({ code: -32601, message: 'no tool' })).kind, 'ERROR_KIND_UNKNOWN_TOOL');
  assert.equal(toProto(mcpToolError({ code: -32001, message: 'Request timed out' })).kind, 'ERROR_KIND_TIMEOUT');
  const result = { isError: true, content: [{ type: 'text', text: 'quota exceeded' }, { type: 'image' }] };
  const r = toProto(mcpToolError(result));
  assert.equal(r.kind, 'ERROR_KIND_EXECUTION_ERROR');
  assert.equal(r.message, 'quota exceeded');
  assert.throws(() => checkMcpResult(result), ToolFailure);
  assert.deepEqual(checkMcpResult({ content: [] }), { content: [] });
  // An McpError thrown by the MCP SDK carries a numeric JSON-RPC code.
  class McpError extends Error {}
  const thrown = Object.assign(new McpError('MCP error -32000: Connection closed'), { code: -32000 });
  const t = toProto(thrown);
  assert.equal(t.code, '-32000');
  assert.equal(t.kind, 'ERROR_KIND_TRANSPORT_ERROR');
  assert.equal(t.source, 'ERROR_SOURCE_MCP');
  assert.equal(t.exception_type, 'McpError');
  // A transport failure under the MCP client keeps its own fields.
  const reset = toProto(mcpToolError(Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' })));
  assert.equal(reset.code, 'ECONNRESET');
  assert.equal(reset.source, 'ERROR_SOURCE_MCP');
});
