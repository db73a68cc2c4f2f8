'use strict';
// runTool against a scripted in-process service, and against no service.
const test = require('node:test');
const assert = require('node:assert');
const net = require('node:net');
const { RecoveryClient, ToolFailure, Status, loadPackage, grpc } = require('..');

function fakeService(script, delayMs = 0) {
  const seen = { decides: [], outcomes: [] };
  const server = new grpc.Server();
  server.addService(loadPackage().RecoveryService.service, {
    Decide(call, cb) {
      seen.decides.push(call.request);
      setTimeout(() => cb(null, script.shift()), delayMs);
    },
    RecordOutcome(call, cb) {
      seen.outcomes.push(call.request);
      cb(null, {});
    },
  });
  return new Promise((resolve, reject) => {
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, port) => {
      if (err) reject(err);
      else resolve({ server, seen, addr: `127.0.0.1:${port}` });
    });
  });
}

const resp = (action, extra = {}) => ({ action, timeout_ms: 1000, ...extra });

test('retry then success reports the outcome with the permit', async () => {
  const f = await fakeService([resp('ACTION_PROCEED', { permit_id: '1:7' }),
    resp('ACTION_RETRY', { delay_ms: 10, permit_id: '1:8' })]);
  const client = new RecoveryClient(f.addr, { rpcTimeoutMs: 500 });
  let calls = 0;
  const res = await client.runTool('search', {
    search: async () => {
      calls += 1;
      if (calls === 1) throw new ToolFailure('503 Service Unavailable', { httpStatus: 503 });
      return 'ok';
    },
  }, { turnId: 't1' });
  client.close();
  f.server.forceShutdown();
  assert.equal(res.status, Status.SUCCEEDED);
  assert.equal(res.value, 'ok');
  assert.equal(res.outcomeRecorded, true);
  const failed = f.seen.decides[1];
  assert.equal(failed.error.http_status, 503);
  assert.equal(failed.attempt, 1);
  assert.equal(failed.permit_id, '1:7');
  assert.equal(failed.turn_id, 't1');
  const rec = f.seen.outcomes[0];
  assert.equal(rec.attempt, 2);
  assert.equal(rec.permit_id, '1:8');
  assert.notEqual(rec.outcome_id, failed.outcome_id);
});

test('alternative then escalate returns the cascade', async () => {
  const f = await fakeService([resp('ACTION_PROCEED'),
    resp('ACTION_USE_ALTERNATIVE', { alternative_tool_id: 'backup' }),
    resp('ACTION_ESCALATE', { cascade: [{ tool_id: 'book', action: 'CASCADE_ACTION_SKIP' }] })]);
  const client = new RecoveryClient(f.addr, { rpcTimeoutMs: 500 });
  const refused = async () => {
    const e = new Error('connect ECONNREFUSED 10.0.0.1:443');
    e.code = 'ECONNREFUSED';
    throw e;
  };
  const res = await client.runTool('search', { search: refused, backup: refused });
  client.close();
  f.server.forceShutdown();
  assert.equal(res.status, Status.ESCALATE);
  assert.equal(res.toolId, 'backup');
  assert.deepEqual(res.cascade.map((s) => s.tool_id), ['book']);
  assert.equal(f.seen.decides[1].error.code, 'ECONNREFUSED');
  assert.equal(f.seen.decides[2].tool_id, 'backup');
});

test('a tool that overruns its timeout is reported as a timeout', async () => {
  const f = await fakeService([resp('ACTION_PROCEED', { timeout_ms: 50 }), resp('ACTION_GIVE_UP')]);
  const client = new RecoveryClient(f.addr, { rpcTimeoutMs: 500 });
  const start = Date.now();
  const res = await client.runTool('slow', { slow: () => new Promise(() => {}) });
  client.close();
  f.server.forceShutdown();
  assert.equal(res.status, Status.GIVE_UP);
  assert.ok(Date.now() - start < 1000);
  assert.equal(f.seen.decides[1].error.kind, 'ERROR_KIND_TIMEOUT');
});

test('an unreachable service falls back locally without hanging', async () => {
  const port = await new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const p = s.address().port;
      s.close(() => resolve(p));
    });
  });
  const client = new RecoveryClient(`127.0.0.1:${port}`);
  let calls = 0;
  const start = Date.now();
  const res = await client.runTool('search', { search: () => { calls += 1; throw new Error('boom'); } });
  client.close();
  const took = Date.now() - start;
  assert.equal(res.status, Status.GIVE_UP);
  assert.equal(res.fallback, true);
  assert.equal(calls, 3);
  assert.ok(took >= 300 && took < 3000, `took ${took} ms`);
});

test('a slow service falls back after the RPC timeout', async () => {
  const f = await fakeService([resp('ACTION_PROCEED')], 1000);
  const client = new RecoveryClient(f.addr, { rpcTimeoutMs: 100 });
  const start = Date.now();
  const res = await client.runTool('search', { search: () => 'ok' });
  client.close();
  f.server.forceShutdown();
  assert.equal(res.status, Status.SUCCEEDED);
  assert.equal(res.fallback, true);
  assert.ok(Date.now() - start < 700);
});

test('an abort ends the retry sleep at once and the tool sees no second call', async () => {
  const f = await fakeService([resp('ACTION_PROCEED'), resp('ACTION_RETRY', { delay_ms: 5000 })]);
  const client = new RecoveryClient(f.addr, { rpcTimeoutMs: 500 });
  const controller = new AbortController();
  let calls = 0;
  const start = Date.now();
  const running = client.runTool('search', {
    search: () => { calls += 1; setTimeout(() => controller.abort(), 50); throw new Error('boom'); },
  }, { signal: controller.signal });
  const res = await running;
  client.close();
  f.server.forceShutdown();
  assert.equal(res.status, Status.CANCELED);
  assert.equal(res.fallback, false);
  assert.equal(calls, 1);
  assert.ok(Date.now() - start < 1500, `took ${Date.now() - start} ms`);
});

test('an abort cancels the service call in flight instead of falling back', async () => {
  let cancelled = false;
  const server = new grpc.Server();
  server.addService(loadPackage().RecoveryService.service, {
    Decide(call, cb) {
      call.on('cancelled', () => { cancelled = true; });
      setTimeout(() => cb(null, resp('ACTION_PROCEED')), 3000);
    },
    RecordOutcome(call, cb) { cb(null, {}); },
  });
  const port = await new Promise((resolve, reject) => server.bindAsync('127.0.0.1:0',
    grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))));
  const client = new RecoveryClient(`127.0.0.1:${port}`, { rpcTimeoutMs: 5000 });
  let calls = 0;
  const start = Date.now();
  const res = await client.runTool('search', { search: () => { calls += 1; return 'ok'; } },
    { signal: AbortSignal.timeout(100) });
  await new Promise((r) => setTimeout(r, 100));
  client.close();
  server.forceShutdown();
  assert.equal(res.status, Status.CANCELED);
  assert.equal(calls, 0);
  assert.ok(Date.now() - start < 1500);
  assert.equal(cancelled, true, 'the server saw the RPC cancelled');
});

test('a tool gets the caller abort through its own signal', async () => {
  const f = await fakeService([resp('ACTION_PROCEED', { timeout_ms: 10000 })]);
  const client = new RecoveryClient(f.addr, { rpcTimeoutMs: 500 });
  const controller = new AbortController();
  let reason;
  const res = await client.runTool('search', {
    search: ({ signal }) => new Promise((resolve, reject) => {
      signal.addEventListener('abort', () => { reason = signal.reason; reject(signal.reason); });
      setTimeout(() => controller.abort(new Error('user left')), 30);
    }),
  }, { signal: controller.signal });
  client.close();
  f.server.forceShutdown();
  assert.equal(res.status, Status.CANCELED);
  assert.equal(reason.message, 'user left');
  assert.match(res.reason, /user left/);
});
