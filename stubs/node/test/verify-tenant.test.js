'use strict';
// VERIFY, idempotency keys and tenants against a live recoveryd: send_email
// is non-idempotent with the verify tool find_sent_email; charge_card honours
// an idempotency key.
const { describe, test, before, after } = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { RecoveryClient, ToolFailure, Status, checkTenant, grpc } = require('..');
const { withRecovery } = require('../src/ai');
const { startRecoveryd } = require('./live-server');

const MANIFESTS = {
  // a high breaker threshold: several tests end on an unverified failure
  'send_email.yaml': 'tool:\n  id: send_email\n  effects: non_idempotent\n  verify_tool: find_sent_email\n'
    + '  circuit_breaker: {failure_threshold: 100}\n',
  'find_sent_email.yaml': 'tool:\n  id: find_sent_email\n  effects: none\n  timeout_ms: 700\n',
  'charge_card.yaml': 'tool:\n  id: charge_card\n  effects: non_idempotent\n  idempotency: key\n',
};

let turns = 0;
const turn = () => `verify-${(turns += 1)}`;

/** A tool reset after sending on its first call (effect unknown), then value. */
function resetThen(value) {
  const calls = [];
  const fn = async (ctx) => {
    calls.push(ctx);
    if (calls.length === 1) throw new ToolFailure('read ECONNRESET', { code: 'ECONNRESET' });
    return value;
  };
  return { fn, calls };
}

describe('VERIFY and idempotency keys', () => {
  let server;
  let client;
  before(async () => {
    server = await startRecoveryd(MANIFESTS);
    client = new RecoveryClient(server.addr, { rpcTimeoutMs: 2000 });
  });
  after(async () => {
    client.close();
    await server.stop();
  });

  const failures = async (tool) =>
    (await client.getBreakerState({ tool_ids: [tool] })).breakers[0].consecutive_failures;

  test('a verifier saying it happened ends in a recorded success', async () => {
    const t = resetThen('sent');
    const asked = [];
    const turnId = turn();
    const res = await client.runTool('send_email', { send_email: t.fn }, {
      turnId, verifiers: { find_sent_email: (req) => { asked.push(req); return true; } },
    });
    assert.deepStrictEqual([res.status, res.verified, res.value, res.attempts],
      [Status.SUCCEEDED, true, undefined, 1]);
    assert.ok(res.outcomeRecorded);
    assert.strictEqual(res.verifyToolId, 'find_sent_email');
    assert.strictEqual(t.calls.length, 1);
    assert.strictEqual(asked.length, 1);
    const [req] = asked;
    assert.deepStrictEqual([req.toolId, req.verifyToolId, req.attempt, req.timeoutMs, req.turnId],
      ['send_email', 'find_sent_email', 1, 700, turnId]);
    assert.ok(req.error instanceof ToolFailure);
    assert.match(req.reason, /effect unknown/);
    assert.deepStrictEqual(res.decisions.map((d) => d.action), ['ACTION_PROCEED', 'ACTION_VERIFY']);
    assert.strictEqual(await failures('send_email'), 0); // the success reached the breaker
  });

  test('a verifier saying it did not happen lets the tool run again', async () => {
    const t = resetThen('sent');
    const res = await client.runTool('send_email', { send_email: t.fn }, {
      turnId: turn(), verifiers: async () => false,
    });
    assert.deepStrictEqual([res.status, res.verified, res.value, res.attempts],
      [Status.SUCCEEDED, false, 'sent', 2]);
    assert.deepStrictEqual(t.calls.map((c) => [c.toolId, c.attempt]), [['send_email', 1], ['send_email', 2]]);
    assert.deepStrictEqual(res.decisions.map((d) => d.action),
      ['ACTION_PROCEED', 'ACTION_VERIFY', 'ACTION_PROCEED']);
    assert.strictEqual(await failures('send_email'), 0);
  });

  for (const [name, verifiers] of [['no verifier', undefined], ['none for this tool', { other: () => true }],
    ['a verifier that throws', () => { throw new Error('mail API down'); }],
    ['a verifier that returns no boolean', () => undefined]]) {
    test(`${name}: the run stops with verification_required`, async () => {
      const t = resetThen('sent');
      const res = await client.runTool('send_email', { send_email: t.fn }, { turnId: turn(), verifiers });
      assert.strictEqual(res.status, Status.VERIFICATION_REQUIRED);
      assert.strictEqual(t.calls.length, 1);
      assert.strictEqual(res.verifyToolId, 'find_sent_email');
      assert.match(res.reason, /effect unknown/);
      assert.match(res.classification.llm_message, /find_sent_email/);
      assert.strictEqual(res.classification.effect_safety, 'EFFECT_SAFETY_UNKNOWN');
    });
  }

  test('the idempotency key reaches the tool on the retry', async () => {
    let t = resetThen('charged');
    let res = await client.runTool('charge_card', { charge_card: t.fn },
      { turnId: turn(), idempotencyKey: 'order-7731' });
    assert.deepStrictEqual([res.status, res.value, res.idempotencyKey], [Status.SUCCEEDED, 'charged', 'order-7731']);
    assert.deepStrictEqual(t.calls.map((c) => [c.attempt, c.idempotencyKey]), [[1, 'order-7731'], [2, 'order-7731']]);
    assert.strictEqual(res.decisions[1].action, 'ACTION_RETRY');
    // Without a key the same failure is never retried blind.
    t = resetThen('charged');
    res = await client.runTool('charge_card', { charge_card: t.fn }, { turnId: turn() });
    assert.strictEqual(res.status, Status.ESCALATE);
    assert.strictEqual(t.calls.length, 1);
    assert.strictEqual(t.calls[0].idempotencyKey, '');
  });

  test('the AI SDK wrapper hands the verifier the tool input', async () => {
    const t = resetThen('sent');
    const seen = [];
    const rd = withRecovery(client, { send_email: { execute: (input) => t.fn(input) } }, {
      verifiers: { find_sent_email: (input, req) => { seen.push([input, req.toolId]); return true; } },
    });
    const out = await rd.tools.send_email.execute({ to: 'a@example.com' }, { toolCallId: 'c1' });
    assert.deepStrictEqual(seen, [[{ to: 'a@example.com' }, 'send_email']]);
    assert.match(out, /^send_email: done \(verified by find_sent_email/);
    assert.ok(rd.results[0].verified);
  });
});

describe('tenant option', () => {
  test('a bad tenant is refused locally', () => {
    for (const [bad, why] of [['a b', /only letters/], ['x'.repeat(65), /longer than 64/], ['é', /only letters/]]) {
      assert.throws(() => new RecoveryClient('127.0.0.1:1', { tenant: bad }), (e) => e instanceof TypeError && why.test(e.message));
    }
    assert.strictEqual(checkTenant('team-a.b_c'), 'team-a.b_c');
    assert.strictEqual(checkTenant(undefined), '');
  });

  test('the admin token acts for the tenant it names', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rd-node-tenants-'));
    const tokens = { 'team-a': 'token-a-0123456789', 'team-b': 'token-b-0123456789', admin: 'token-admin-0123456789' };
    for (const [name, tok] of Object.entries(tokens)) fs.writeFileSync(path.join(dir, `${name}.token`), tok);
    const admin = new RecoveryClient('127.0.0.1:1', { token: tokens.admin, tenant: 'team-b' });
    admin.close();
    const server = await startRecoveryd({ 'search.yaml': 'tool:\n  id: search\n' }, '', {
      server: `  tenants:
    - id: team-a
      token_file: ${dir}/team-a.token
    - id: team-b
      token_file: ${dir}/team-b.token
  admin:
    token_file: ${dir}/admin.token`,
      ready: (addr) => {
        const probe = new RecoveryClient(addr, { rpcTimeoutMs: 500, token: tokens['team-a'] });
        return probe.getBreakerState({}).finally(() => probe.close());
      },
    });
    const adminB = new RecoveryClient(server.addr, { rpcTimeoutMs: 2000, token: tokens.admin, tenant: 'team-b' });
    const adminNone = new RecoveryClient(server.addr, { rpcTimeoutMs: 2000, token: tokens.admin });
    const teamA = new RecoveryClient(server.addr, { rpcTimeoutMs: 2000, token: tokens['team-a'] });
    const teamB = new RecoveryClient(server.addr, { rpcTimeoutMs: 2000, token: tokens['team-b'] });
    try {
      let n = 0;
      const res = await adminB.runTool('search', {
        search: async () => {
          n += 1;
          if (n === 1) throw new ToolFailure('503 Service Unavailable', { httpStatus: 503 });
          return 'ok';
        },
      }, { turnId: 'tenant-turn' });
      assert.deepStrictEqual([res.status, res.fallback, res.attempts], [Status.SUCCEEDED, false, 2]);
      // The run's state is team-b's: its token reads the trace, team-a's cannot.
      assert.ok((await teamB.getTurnTrace({ turn_id: 'tenant-turn' })).events.length > 0);
      await assert.rejects(teamA.getTurnTrace({ turn_id: 'tenant-turn' }), (e) => e.code === grpc.status.NOT_FOUND);
      await assert.rejects(adminNone.getTurnTrace({ turn_id: 'tenant-turn' }),
        (e) => e.code === grpc.status.INVALID_ARGUMENT && /x-recoveryd-tenant/.test(e.details));
    } finally {
      for (const c of [adminB, adminNone, teamA, teamB]) c.close();
      await server.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
