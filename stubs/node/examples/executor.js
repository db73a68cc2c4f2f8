// A small tool executor that runs one tool call through recoveryd and prints
// the result as one JSON line. The cross-language conformance run drives it;
// it doubles as a complete usage example.
//
//   node executor.js --addr 127.0.0.1:50051 --turn t1 --tool search --mode fail
//
// Modes choose the tool's behaviour: fail (always a connection reset),
// succeed, flaky (fails twice, then succeeds), hold (prints HOLDING, then
// waits until the --release file exists and succeeds), timeout-once (the
// first call times out after sending, later calls succeed).
//
// A non-idempotent tool (docs/EFFECTS.md): --verify-tool find_sent_email
// registers a verifier for that verify tool, answering --happened (true: the
// timed-out call did send; false: it did not). With server.tenants, --token
// and --tenant send the admin token and the tenant it acts for.
'use strict';
const fs = require('node:fs');
const { parseArgs } = require('node:util');
const { RecoveryClient, ToolFailure } = require('recoveryd-client');

async function main() {
  const { values: args } = parseArgs({
    options: {
      addr: { type: 'string', default: '127.0.0.1:50051' },
      turn: { type: 'string', default: '' },
      tool: { type: 'string', default: 'search' },
      mode: { type: 'string', default: 'succeed' },
      release: { type: 'string', default: '' },
      'verify-tool': { type: 'string', default: '' },
      happened: { type: 'string', default: 'false' },
      token: { type: 'string', default: '' },
      tenant: { type: 'string', default: '' },
    },
  });
  let calls = 0;
  let verifyCalls = 0;
  const search = async ({ signal, timeoutMs }) => {
    calls += 1;
    if (args.mode === 'fail') {
      throw new ToolFailure('read tcp: connection reset by peer',
        { code: 'ECONNRESET', kind: 'ERROR_KIND_TRANSPORT_ERROR' });
    }
    if (args.mode === 'flaky' && calls <= 2) {
      throw new ToolFailure('503 Service Unavailable', { httpStatus: 503 });
    }
    if (args.mode === 'timeout-once' && calls === 1) {
      throw new ToolFailure('timeout after 10s waiting for the reply', { kind: 'ERROR_KIND_TIMEOUT' });
    }
    if (args.mode === 'hold') {
      console.log('HOLDING');
      const end = Date.now() + Math.min(timeoutMs, 20000);
      while (!fs.existsSync(args.release) && Date.now() < end && !signal.aborted) {
        await new Promise((r) => setTimeout(r, 20));
      }
    }
    return `results for ${args.tool}`;
  };

  const verifiers = {};
  if (args['verify-tool']) {
    verifiers[args['verify-tool']] = async () => {
      verifyCalls += 1;
      return args.happened === 'true';
    };
  }

  const client = new RecoveryClient(args.addr,
    { executorId: 'node-executor', token: args.token, tenant: args.tenant });
  const res = await client.runTool(args.tool, { [args.tool]: search },
    { turnId: args.turn, verifiers });
  client.close();
  console.log(JSON.stringify({
    lang: 'node', status: res.status, attempts: res.attempts, tool_calls: calls,
    fallback: res.fallback, permit: res.permitId !== '', recorded: res.outcomeRecorded,
    reason: res.reason, actions: res.decisions.map((d) => d.action), value: res.value ?? null,
    verified: res.verified, verify_tool: res.verifyToolId, verify_calls: verifyCalls,
  }));
}

main();
