'use strict';
// Client for the recoveryd recovery-decision service: the plain service
// calls (with a per-call deadline) and runTool, a retry loop that follows the
// service's decisions and falls back to a local policy when the service
// cannot be reached.

const path = require('node:path');
const crypto = require('node:crypto');
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');
const { ToolFailure, ToolTimeout, toProto, mcpToolError, checkMcpResult } = require('./errors');

// Must match the options scripts/gen-stubs.sh gives proto-loader-gen-types,
// or the shipped types would describe other objects.
const LOADER_OPTIONS = {
  keepCase: true,
  longs: Number,
  enums: String,
  defaults: true,
  oneofs: true,
  includeDirs: [path.join(__dirname, '..', 'proto')],
};

let cachedPackage = null;
/** The loaded recovery.v1 package (service constructor and message types). */
function loadPackage() {
  if (!cachedPackage) {
    const def = protoLoader.loadSync('recovery/v1/recovery.proto', LOADER_OPTIONS);
    cachedPackage = grpc.loadPackageDefinition(def).recovery.v1;
  }
  return cachedPackage;
}

const Status = Object.freeze({
  SUCCEEDED: 'succeeded',
  FAIL_FAST: 'fail_fast', // circuit open: the tool was not called (again)
  ESCALATE: 'escalate', // permanent error: a person or the model must act
  GIVE_UP: 'give_up', // attempts or time used up (also: local fallback exhausted)
  PARTIAL: 'partial', // turn deadline reached
  NO_ALTERNATIVE: 'no_alternative', // the service named a tool the caller gave no function for
  CANCELED: 'canceled', // the caller's AbortSignal fired
  // VERIFY: the effect of a non-idempotent call is unknown and no verifier
  // could tell whether it happened; the tool was not called again.
  VERIFICATION_REQUIRED: 'verification_required',
});

const TENANT_ID_MAX = 64;

/**
 * The tenant as the server accepts it in x-recoveryd-tenant (letters,
 * digits, '_', '.', '-', at most 64 bytes); '' or undefined: none.
 * Throws a TypeError naming what is wrong.
 */
function checkTenant(tenant) {
  if (tenant === undefined || tenant === null || tenant === '') return '';
  if (typeof tenant !== 'string') throw new TypeError(`tenant: must be a string, not ${typeof tenant}`);
  if (Buffer.byteLength(tenant) > TENANT_ID_MAX) throw new TypeError(`tenant: longer than ${TENANT_ID_MAX} bytes`);
  if (!/^[A-Za-z0-9_.-]+$/.test(tenant)) {
    throw new TypeError(`tenant: ${JSON.stringify(tenant)}: only letters, digits, '_', '.' and '-'`);
  }
  return tenant;
}

const STOP_STATUS = {
  ACTION_FAIL_FAST: Status.FAIL_FAST,
  ACTION_ESCALATE: Status.ESCALATE,
  ACTION_GIVE_UP: Status.GIVE_UP,
  ACTION_PARTIAL: Status.PARTIAL,
};

const DEFAULT_RPC_TIMEOUT_MS = 200;
const DEFAULT_FALLBACK = Object.freeze({ maxAttempts: 3, delaysMs: [100, 200], timeoutMs: 30000 });

class ServiceUnusable extends Error {}

/** The caller's signal fired; the run stops where it is. */
class RunAborted extends Error {}

function abortError(signal) {
  const reason = signal && signal.reason;
  if (reason instanceof Error) return reason;
  const e = new Error(reason === undefined ? 'The operation was aborted' : String(reason));
  e.name = 'AbortError';
  return e;
}

/**
 * Resolves when `promise` settles or rejects with the signal's reason when
 * it fires first; onAbort runs then (to cancel what the promise waits for).
 */
function abortable(promise, signal, onAbort) {
  if (!signal) return promise;
  if (signal.aborted) {
    if (onAbort) onAbort();
    return Promise.reject(abortError(signal));
  }
  return new Promise((resolve, reject) => {
    const stop = () => {
      if (onAbort) onAbort();
      reject(abortError(signal));
    };
    signal.addEventListener('abort', stop, { once: true });
    promise.then(
      (v) => { signal.removeEventListener('abort', stop); resolve(v); },
      (e) => { signal.removeEventListener('abort', stop); reject(e); },
    );
  });
}

/** Sleeps ms; an abort ends the sleep (and clears its timer) at once. */
function sleep(ms, signal) {
  let timer;
  const slept = new Promise((resolve) => { timer = setTimeout(resolve, Math.max(0, ms)); });
  return abortable(slept, signal, () => clearTimeout(timer));
}

class RecoveryClient {
  /**
   * @param {string} target host:port of recoveryd
   * @param {object} [options] rpcTimeoutMs (200), executorId, fallback
   *   {maxAttempts, delaysMs, timeoutMs}, credentials (grpc.credentials.createSsl
   *   for server.tls), token (server.auth, or a tenant's or the admin token
   *   of server.tenants: sent as "authorization: Bearer <token>" on every
   *   call, over plaintext too), tenant (sent as x-recoveryd-tenant: the
   *   tenant the admin token acts for), channelOptions
   */
  constructor(target = '127.0.0.1:50051', options = {}) {
    this.tenant = checkTenant(options.tenant);
    const Service = loadPackage().RecoveryService;
    this.rpc = new Service(target, options.credentials || grpc.credentials.createInsecure(),
      options.channelOptions || {});
    this.rpcTimeoutMs = options.rpcTimeoutMs || DEFAULT_RPC_TIMEOUT_MS;
    this.executorId = options.executorId || '';
    this.fallback = { ...DEFAULT_FALLBACK, ...(options.fallback || {}) };
    this.metadata = new grpc.Metadata();
    if (options.token) this.metadata.set('authorization', `Bearer ${options.token}`);
    if (this.tenant) this.metadata.set('x-recoveryd-tenant', this.tenant);
  }

  close() {
    this.rpc.close();
  }

  // options.signal cancels the call in flight (the promise rejects with the
  // signal's reason at once, and the RPC is cancelled on the wire).
  #unary(method, request, options = {}) {
    let call;
    const done = new Promise((resolve, reject) => {
      const deadline = new Date(Date.now() + this.rpcTimeoutMs);
      call = this.rpc[method](request, this.metadata.clone(), { deadline },
        (err, resp) => (err ? reject(err) : resolve(resp)));
    });
    if (!options.signal) return done;
    done.catch(() => {}); // after an abort the CANCELLED status is expected
    return abortable(done, options.signal, () => call.cancel());
  }

  classify(request, options) { return this.#unary('Classify', request, options); }
  decide(request, options) { return this.#unary('Decide', request, options); }
  recordOutcome(request, options) { return this.#unary('RecordOutcome', request, options); }
  getBreakerState(request = {}, options) { return this.#unary('GetBreakerState', request, options); }
  getTurnTrace(request, options) { return this.#unary('GetTurnTrace', request, options); }

  /**
   * Runs one logical tool call under the service's decisions. Never rejects:
   * tool and service trouble end up in the result.
   * @param {string} toolId
   * @param {Record<string, (ctx: {signal: AbortSignal, timeoutMs: number, toolId: string,
   *   attempt: number, idempotencyKey: string}) => any>} tools
   *   the tool and every alternative the service may name
   * @param {object} [options] turnId, turnDeadline (epoch ms), plan, signal
   *   (an AbortSignal: cancels the service call in flight, the retry sleep
   *   and the tool's own signal; the run ends with status canceled),
   *   verifiers (VERIFY: a function per verify tool id, or one function,
   *   given the failed call and answering whether its effect happened;
   *   without one the run ends verification_required), idempotencyKey
   *   (sent with Decide, and to the tool as ctx.idempotencyKey)
   */
  async runTool(toolId, tools, options = {}) {
    const run = new Run(this, toolId, tools, options);
    try {
      return await run.run();
    } catch (err) {
      if (err instanceof RunAborted) {
        return run.end(Status.CANCELED, run.res.toolId, `canceled: ${abortError(run.signal).message}`);
      }
      // Only a bug in this loop gets here; the executor still gets a result.
      return run.end(Status.GIVE_UP, run.res.toolId, `internal error: ${err && err.message}`);
    }
  }
}

class Run {
  constructor(client, toolId, tools, options) {
    this.c = client;
    this.tools = tools || {};
    this.turnId = options.turnId || '';
    this.turnDeadline = options.turnDeadline;
    this.plan = options.plan || [];
    this.signal = options.signal;
    this.verifiers = options.verifiers;
    this.key = options.idempotencyKey || '';
    this.res = {
      status: Status.GIVE_UP, toolId, value: undefined, attempts: 0, reason: '', error: undefined,
      classification: null, cascade: [], trace: [], decisions: [], permitId: '',
      outcomeRecorded: false, fallback: false, fallbackReason: '',
      verified: false, verifyToolId: '', idempotencyKey: '',
    };
  }

  async run() {
    let tool = this.res.toolId;
    const visited = new Set([tool]);
    let key = this.key;
    let resp;
    try {
      resp = await this.decide(tool, null, 0, 0, '', '', key);
    } catch (e) {
      if (!(e instanceof ServiceUnusable)) throw e;
      return this.fallback(tool, 0, 0, e.message);
    }
    let permit = resp.permit_id;
    let timeoutMs = resp.timeout_ms;
    if (resp.action === 'ACTION_USE_ALTERNATIVE') {
      tool = resp.alternative_tool_id;
      if (!this.switchTo(tool, visited)) return this.res;
    } else if (resp.action !== 'ACTION_PROCEED') {
      return this.stop(tool, resp);
    }

    let attempt = 0;
    let toolStart = Date.now();
    let clock = new RetryClock();
    for (;;) {
      const fn = this.tools[tool];
      if (typeof fn !== 'function') return this.end(Status.NO_ALTERNATIVE, tool, `no function for tool ${tool}`);
      attempt += 1;
      const outcomeId = crypto.randomUUID();
      const attemptStart = Date.now();
      this.res.idempotencyKey = key;
      const r = await this.invoke(fn, timeoutMs, { toolId: tool, attempt, idempotencyKey: key });
      if (r.ok) return this.succeed(tool, r.value, attempt, toolStart, outcomeId, permit);
      const elapsedMs = clock.failed(attemptStart, r.error instanceof ToolTimeout);
      try {
        resp = await this.decide(tool, toProto(r.error), attempt, elapsedMs, outcomeId, permit, key);
      } catch (e) {
        if (!(e instanceof ServiceUnusable)) throw e;
        return this.fallback(tool, attempt, timeoutMs, e.message);
      }
      this.res.classification = resp.classification;
      permit = resp.permit_id;
      timeoutMs = resp.timeout_ms;
      if (resp.action === 'ACTION_RETRY') {
        key = resp.idempotency_key || key;
        // setTimeout counts whole milliseconds, so delay_us would add nothing.
        await this.sleep(resp.delay_ms);
      } else if (resp.action === 'ACTION_VERIFY') {
        const happened = await this.verify(tool, resp, attempt, key);
        if (happened === null) return this.verificationRequired(tool, resp);
        if (happened) return this.succeedVerified(tool, attempt, permit);
        // It did not happen: calling the tool again is safe, once admission
        // allows it (the breaker may have opened meanwhile).
        try {
          resp = await this.decide(tool, null, attempt, 0, '', '', key);
        } catch (e) {
          if (!(e instanceof ServiceUnusable)) throw e;
          return this.fallback(tool, attempt, timeoutMs, e.message);
        }
        permit = resp.permit_id;
        timeoutMs = resp.timeout_ms;
        if (resp.action === 'ACTION_USE_ALTERNATIVE') {
          tool = resp.alternative_tool_id;
          if (!this.switchTo(tool, visited)) return this.res;
          attempt = 0;
          toolStart = Date.now();
          clock = new RetryClock();
        } else if (resp.action !== 'ACTION_PROCEED') {
          return this.stop(tool, resp);
        }
      } else if (resp.action === 'ACTION_USE_ALTERNATIVE') {
        tool = resp.alternative_tool_id;
        if (!this.switchTo(tool, visited)) return this.res;
        attempt = 0;
        toolStart = Date.now();
        clock = new RetryClock();
      } else {
        return this.stop(tool, resp);
      }
    }
  }

  async sleep(ms) {
    try {
      await sleep(ms, this.signal);
    } catch (e) {
      throw new RunAborted();
    }
  }

  // Two tools failing over to each other would otherwise loop.
  switchTo(tool, visited) {
    if (visited.has(tool)) {
      this.end(Status.GIVE_UP, tool, `alternative ${tool} was already tried in this run`);
      return false;
    }
    visited.add(tool);
    return true;
  }

  end(status, tool, reason) {
    Object.assign(this.res, { status, toolId: tool, reason });
    return this.res;
  }

  stop(tool, resp) {
    this.res.cascade = resp.cascade || [];
    if (resp.classification) this.res.classification = resp.classification;
    const status = STOP_STATUS[resp.action];
    if (!status) return this.end(Status.GIVE_UP, tool, `unexpected action ${resp.action}`);
    return this.end(status, tool, resp.reason);
  }

  verifierFor(verifyTool) {
    const v = this.verifiers;
    if (typeof v === 'function') return v;
    if (v && typeof v === 'object' && typeof v[verifyTool] === 'function') return v[verifyTool];
    return null;
  }

  // Asks the caller's verifier whether the failed call had its effect:
  // true, false, or null when there is no verifier or it could not tell
  // (the run then stops: never a blind retry).
  async verify(tool, resp, attempt, key) {
    this.res.verifyToolId = resp.verify_tool_id;
    const verifier = this.verifierFor(resp.verify_tool_id);
    if (!verifier) return null;
    const request = {
      toolId: tool, verifyToolId: resp.verify_tool_id, attempt, error: this.res.error,
      reason: resp.reason, classification: resp.classification, idempotencyKey: key,
      turnId: this.turnId,
    };
    const r = await this.invoke((ctx) => verifier({ ...ctx, ...request }), resp.timeout_ms,
      { toolId: resp.verify_tool_id, attempt: 1, idempotencyKey: '' }, false);
    // Anything but a boolean (a verifier that forgot to return) says nothing:
    // repeating the effect on it would be a blind retry.
    return r.ok && typeof r.value === 'boolean' ? r.value : null;
  }

  verificationRequired(tool, resp) {
    this.res.cascade = resp.cascade || [];
    if (resp.classification) this.res.classification = resp.classification;
    return this.end(Status.VERIFICATION_REQUIRED, tool, resp.reason);
  }

  // The failed call did have its effect: a success of the tool, so the
  // breaker and the trace count it as one.
  async succeedVerified(tool, attempt, permit) {
    Object.assign(this.res, { value: undefined, permitId: permit, verified: true });
    this.end(Status.SUCCEEDED, tool, `verified by ${this.res.verifyToolId}: the effect happened`);
    try {
      await this.c.recordOutcome({
        tool_id: tool, success: true, latency_ms: 0, attempt, turn_id: this.turnId,
        outcome_id: crypto.randomUUID(), permit_id: permit, executor_id: this.c.executorId,
      }, { signal: this.signal });
      this.res.outcomeRecorded = true;
    } catch (e) {
      this.res.outcomeRecorded = false;
    }
    return this.res;
  }

  async decide(tool, error, attempt, elapsedMs, outcomeId, permit, key = '') {
    const req = {
      tool_id: tool, attempt, elapsed_ms: elapsedMs, turn_id: this.turnId, plan: this.plan,
      executor_id: this.c.executorId, outcome_id: outcomeId, permit_id: permit,
      idempotency_key: key,
    };
    if (error) req.error = error;
    if (this.turnDeadline !== undefined && this.turnDeadline !== null) {
      req.turn_remaining_ms = Number(this.turnDeadline) - Date.now();
    }
    let resp;
    try {
      resp = await this.c.decide(req, { signal: this.signal });
    } catch (e) {
      if (this.signal && this.signal.aborted) throw new RunAborted();
      throw new ServiceUnusable(`Decide: ${describeRpcError(e)}`);
    }
    this.res.trace.push(...(resp.trace || []));
    this.res.decisions.push({ toolId: tool, action: resp.action, delayMs: resp.delay_ms, reason: resp.reason });
    return resp;
  }

  async succeed(tool, value, attempt, toolStart, outcomeId, permit) {
    Object.assign(this.res, { value, permitId: permit, error: undefined });
    this.end(Status.SUCCEEDED, tool, '');
    try {
      await this.c.recordOutcome({
        tool_id: tool, success: true, latency_ms: Date.now() - toolStart, attempt,
        turn_id: this.turnId, outcome_id: outcomeId, permit_id: permit, executor_id: this.c.executorId,
      }, { signal: this.signal });
      this.res.outcomeRecorded = true;
    } catch (e) {
      // The tool succeeded; a lost report must not undo that.
      this.res.outcomeRecorded = false;
    }
    return this.res;
  }

  async fallback(tool, attemptsMade, timeoutMs, cause) {
    const p = this.c.fallback;
    Object.assign(this.res, { fallback: true, fallbackReason: cause });
    const fn = this.tools[tool];
    if (typeof fn !== 'function') return this.end(Status.NO_ALTERNATIVE, tool, `no function for tool ${tool}`);
    const timeout = timeoutMs > 0 ? timeoutMs : p.timeoutMs;
    const delays = p.delaysMs.length ? p.delaysMs : [0];
    for (let attempt = attemptsMade; attempt < p.maxAttempts; attempt += 1) {
      if (attempt > 0) {
        const delay = delays[Math.min(attempt - 1, delays.length - 1)];
        this.res.decisions.push({ toolId: tool, action: 'ACTION_RETRY', delayMs: delay, reason: 'local fallback' });
        await this.sleep(delay);
      }
      this.res.idempotencyKey = this.key;
      const r = await this.invoke(fn, timeout, { toolId: tool, attempt: attempt + 1, idempotencyKey: this.key });
      if (r.ok) {
        Object.assign(this.res, { value: r.value, error: undefined });
        return this.end(Status.SUCCEEDED, tool, 'local fallback');
      }
    }
    return this.end(Status.GIVE_UP, tool, `local fallback: ${p.maxAttempts} attempts failed`);
  }

  // Calls fn under a hard timeout: the signal aborts, and a tool that ignores
  // it is no longer waited for, so the run never hangs. The caller's signal
  // reaches the tool through the same signal and ends the wait as well.
  // `attempt` joins the tool's context; a verifier (isTool false) is no
  // attempt of the tool and leaves its error alone.
  async invoke(fn, timeoutMs, attempt = {}, isTool = true) {
    if (this.signal && this.signal.aborted) throw new RunAborted();
    const timeout = timeoutMs > 0 ? timeoutMs : this.c.fallback.timeoutMs;
    if (isTool) this.res.attempts += 1;
    const controller = new AbortController();
    let timer;
    const timedOut = new Promise((resolve) => {
      timer = setTimeout(() => {
        controller.abort(new ToolTimeout(timeout));
        resolve({ ok: false, error: new ToolTimeout(timeout) });
      }, timeout);
    });
    const onAbort = () => controller.abort(abortError(this.signal));
    if (this.signal) this.signal.addEventListener('abort', onAbort, { once: true });
    const called = (async () => fn({ ...attempt, signal: controller.signal, timeoutMs: timeout }))().then(
      (value) => ({ ok: true, value }),
      (error) => ({ ok: false, error }),
    );
    let r;
    try {
      r = await abortable(Promise.race([called, timedOut]), this.signal);
    } catch (e) {
      throw new RunAborted();
    } finally {
      clearTimeout(timer);
      if (this.signal) this.signal.removeEventListener('abort', onAbort);
    }
    if (!r.ok && isTool) this.res.error = r.error;
    return r;
  }
}

/**
 * The retry time DecideRequest.elapsed_ms carries: wall time since the first
 * attempt failed, without the attempts that ran into their timeout (the
 * service bounds those by the tool timeout and the turn deadline, so counting
 * them would spend the retry budget on one timeout).
 */
class RetryClock {
  constructor() {
    this.firstFailed = null;
    this.timedOutMs = 0;
  }

  failed(attemptStart, timedOut) {
    const now = Date.now();
    if (this.firstFailed === null) {
      this.firstFailed = now;
      return 0;
    }
    if (timedOut) this.timedOutMs += now - attemptStart;
    return Math.max(0, now - this.firstFailed - this.timedOutMs);
  }
}

function describeRpcError(e) {
  if (e && typeof e.code === 'number') {
    const name = Object.keys(grpc.status).find((k) => grpc.status[k] === e.code) || e.code;
    return `${name}: ${e.details || e.message}`;
  }
  return String(e && e.message ? e.message : e);
}

module.exports = {
  RecoveryClient, ToolFailure, ToolTimeout, Status, loadPackage, grpc, DEFAULT_RPC_TIMEOUT_MS,
  toProto, mcpToolError, checkMcpResult, checkTenant,
};
