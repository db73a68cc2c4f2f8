'use strict';
// What a tool's failure becomes on the wire (ToolError): every structured
// field a thrown error carries (name, code or errno, HTTP status, retry-after
// from the error or its response headers, the cause chain's codes), and the
// mapping of MCP failures (JSON-RPC errors, `isError` tool results).

const os = require('node:os');

/** Throw from a tool to hand the service structured signals beside the message. */
class ToolFailure extends Error {
  constructor(message, fields = {}) {
    super(message);
    this.name = 'ToolFailure';
    this.httpStatus = fields.httpStatus || 0;
    this.grpcCode = fields.grpcCode || 0;
    this.code = fields.code || '';
    this.exceptionType = fields.exceptionType || '';
    this.kind = fields.kind || 'ERROR_KIND_UNSPECIFIED';
    this.source = fields.source || 'ERROR_SOURCE_UNSPECIFIED';
    this.retryAfterMs = fields.retryAfterMs || 0;
  }
}

/** A tool call overran its hard timeout; runTool stopped waiting for it. */
class ToolTimeout extends Error {
  constructor(timeoutMs) {
    super(`tool call timed out after ${timeoutMs} ms`);
    this.name = 'TimeoutError';
    this.timeoutMs = timeoutMs;
  }
}

// JSON-RPC 2.0 codes whose meaning fixes the kind, and with it whether the
// tool ran: a request the server could not parse or route never executed.
const JSONRPC_KIND = {
  '-32700': 'ERROR_KIND_INVALID_PARAMETERS',
  '-32600': 'ERROR_KIND_INVALID_PARAMETERS',
  '-32601': 'ERROR_KIND_UNKNOWN_TOOL',
  '-32602': 'ERROR_KIND_INVALID_PARAMETERS',
  '-32001': 'ERROR_KIND_TIMEOUT', // MCP request timeout
  '-32000': 'ERROR_KIND_TRANSPORT_ERROR', // MCP connection closed
};
const isJsonRpcCode = (c) => Number.isInteger(c) && c >= -32768 && c <= -32000;

/**
 * A ToolFailure for an MCP failure: a JSON-RPC error (an McpError, or the
 * `error` member of a response: {code, message}) or a tool result with
 * `isError: true` (the tool ran and reported a failure).
 */
function mcpToolError(x) {
  if (x && typeof x === 'object' && x.isError === true) {
    const text = (Array.isArray(x.content) ? x.content : [])
      .filter((c) => c && c.type === 'text' && typeof c.text === 'string').map((c) => c.text).join('\n');
    return new ToolFailure(text || 'the MCP tool reported an error',
      { kind: 'ERROR_KIND_EXECUTION_ERROR', source: 'ERROR_SOURCE_MCP', exceptionType: 'McpToolResultError' });
  }
  const code = x && typeof x === 'object' ? Number(x.code) : NaN;
  if (!Number.isInteger(code)) {
    // Not a JSON-RPC error (a dropped connection, a timeout in the client):
    // keep what it carries and mark where it came from.
    const fields = toolError(x);
    return new ToolFailure(fields.message, {
      code: fields.code, httpStatus: fields.http_status, grpcCode: fields.grpc_code, kind: fields.kind,
      exceptionType: fields.exception_type, retryAfterMs: fields.retry_after_ms, source: 'ERROR_SOURCE_MCP',
    });
  }
  const f = new ToolFailure(x.message || `JSON-RPC error ${code}`, {
    code: String(code), kind: JSONRPC_KIND[String(code)], source: 'ERROR_SOURCE_MCP',
    exceptionType: x instanceof Error ? (x.name !== 'Error' ? x.name : x.constructor.name) : 'JSONRPCError',
    httpStatus: httpStatusOf(x),
  });
  return f;
}

/** Returns an MCP tool result, or throws its failure when it has `isError: true`. */
function checkMcpResult(result) {
  if (result && result.isError === true) throw mcpToolError(result);
  return result;
}

/**
 * The most of an error message sent: its head and tail (a traceback's cause
 * is its last line) with a marker for the middle. The service reads 8 KiB of
 * each end and accepts up to its receive limit.
 */
const MESSAGE_SEND_MAX = 32 * 1024;

function cutMessage(text) {
  const data = Buffer.from(String(text), 'utf8');
  if (data.length <= MESSAGE_SEND_MAX) return text;
  const room = MESSAGE_SEND_MAX - 48;
  const h0 = Math.floor(room / 2);
  let h = h0;
  let t = data.length - (room - h0);
  while (h > 0 && (data[h] & 0xc0) === 0x80) h -= 1;
  while (t < data.length && (data[t] & 0xc0) === 0x80) t += 1;
  return `${data.subarray(0, h).toString('utf8')}\n[... ${t - h} bytes cut ...]\n${data.subarray(t).toString('utf8')}`;
}

/** The wire form of a tool's error. */
function toProto(err) {
  const out = toolError(err);
  out.message = cutMessage(out.message);
  return out;
}

const ERRNO_NAMES = Object.fromEntries(Object.entries(os.constants.errno).map(([k, v]) => [v, k]));

const intIn = (v, lo, hi) => {
  const n = typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : v;
  return Number.isInteger(n) && n >= lo && n <= hi ? n : 0;
};

function httpStatusOf(e) {
  return intIn(e.status, 100, 599) || intIn(e.statusCode, 100, 599) ||
    (e.response && typeof e.response === 'object'
      ? intIn(e.response.status, 100, 599) || intIn(e.response.statusCode, 100, 599) : 0);
}

function header(headers, name) {
  if (!headers || typeof headers !== 'object') return undefined;
  if (typeof headers.get === 'function') return headers.get(name) ?? undefined; // fetch Headers
  const key = Object.keys(headers).find((k) => k.toLowerCase() === name);
  return key === undefined ? undefined : headers[key];
}

// Retry-After is seconds or an HTTP date; retry-after-ms (OpenAI, Azure) is
// milliseconds. An error's own retryAfterMs / retryAfter (seconds) wins.
function retryAfterMsOf(e) {
  if (Number.isFinite(e.retryAfterMs) && e.retryAfterMs > 0) return Math.round(e.retryAfterMs);
  if (Number.isFinite(e.retryAfter) && e.retryAfter > 0) return Math.round(e.retryAfter * 1000);
  for (const headers of [e.responseHeaders, e.headers, e.response && e.response.headers]) {
    const ms = Number(header(headers, 'retry-after-ms'));
    if (Number.isFinite(ms) && ms > 0) return Math.round(ms);
    const ra = header(headers, 'retry-after');
    if (ra === undefined || ra === null || ra === '') continue;
    const s = Number(ra);
    if (Number.isFinite(s) && s >= 0) return Math.round(s * 1000);
    const at = Date.parse(String(ra));
    if (Number.isFinite(at)) return Math.max(0, at - Date.now());
  }
  return 0;
}

const isGrpcError = (e) => Number.isInteger(e.code) && e.code > 0 && e.code <= 16 &&
  typeof e.details === 'string' && e.metadata !== undefined;

function typeName(e) {
  if (e.name && e.name !== 'Error') return e.name;
  return e.constructor && e.constructor.name ? e.constructor.name : 'Error';
}

// Fields read from one error object; the first error in the cause chain that
// has a field gives it.
function fieldsOf(e, out) {
  if (!out.code) {
    if (typeof e.code === 'string' && e.code) out.code = e.code; // ECONNRESET, insufficient_quota
    else if (isJsonRpcCode(e.code)) {
      out.code = String(e.code);
      if (!out.source) out.source = 'ERROR_SOURCE_MCP';
      if (!out.kind && JSONRPC_KIND[out.code]) out.kind = JSONRPC_KIND[out.code];
    } else if (Number.isInteger(e.errno) && ERRNO_NAMES[Math.abs(e.errno)]) {
      out.code = ERRNO_NAMES[Math.abs(e.errno)];
    }
  }
  if (!out.grpc_code && isGrpcError(e)) out.grpc_code = e.code;
  if (!out.http_status) out.http_status = httpStatusOf(e);
  if (!out.retry_after_ms) out.retry_after_ms = retryAfterMsOf(e);
  if (!out.kind && (e.name === 'TimeoutError' || out.code === 'ETIMEDOUT')) out.kind = 'ERROR_KIND_TIMEOUT';
}

function toolError(err) {
  if (err instanceof ToolFailure) {
    return {
      message: err.message, http_status: err.httpStatus, grpc_code: err.grpcCode, code: err.code,
      exception_type: err.exceptionType, kind: err.kind, source: err.source, retry_after_ms: err.retryAfterMs,
    };
  }
  if (!(err instanceof Error)) {
    if (err && typeof err === 'object' && (err.isError === true || Number.isInteger(err.code))) {
      return toolError(mcpToolError(err)); // a thrown JSON-RPC error object or MCP result
    }
    if (err && typeof err === 'object' && typeof err.message === 'string' && err.message) return { message: err.message };
    return { message: String(err === undefined ? 'tool failed' : err) };
  }
  const out = { message: err.message || err.name, exception_type: typeName(err) };
  // fetch and other wrappers say "fetch failed" and keep the reason in cause.
  const causes = [];
  for (let e = err; e && typeof e === 'object' && causes.length < 4; e = e.cause) causes.push(e);
  for (const e of causes) fieldsOf(e, out);
  const cause = causes[1];
  if (cause && cause.message && !String(out.message).includes(cause.message)) {
    out.message = `${out.message}: ${cause.message}`;
  }
  for (const k of Object.keys(out)) if (!out[k]) delete out[k];
  if (!out.message) out.message = 'tool failed';
  return out;
}

module.exports = { ToolFailure, ToolTimeout, mcpToolError, checkMcpResult, toolError, toProto, cutMessage };
