'use strict';
// The Vercel AI SDK integration against a live recoveryd, with the real `ai`
// package and its deterministic mock model (ai/test): the model calls a
// tool, the wrapped execute runs it under the service's decisions, and the
// next model call must see what the service decided. Run for both majors
// the package supports: ai 6 (MockLanguageModelV3) and ai 5
// (MockLanguageModelV2, installed as the alias ai-v5), each against its own
// recoveryd.
const { describe, test, before, after } = require('node:test');
const assert = require('node:assert');
const { z } = require('zod');
const { RecoveryClient, Status, toProto, mcpToolError } = require('..');
const { withRecovery } = require('../src/ai');
const { startRecoveryd } = require('./live-server');

const FAST_RETRY = 'retry_policy: {initial_delay_ms: 20, max_delay_ms: 40, max_attempts: 5}';
const MANIFESTS = {
  'flaky_lookup.yaml': `tool:\n  id: flaky_lookup\n  ${FAST_RETRY}\n`,
  'book_room.yaml': 'tool:\n  id: book_room\n',
  'flight_search.yaml': `tool:
  id: flight_search
  alternatives: [flight_search_backup]
  ${FAST_RETRY}
  circuit_breaker: {failure_threshold: 2, timeout_ms: 60000}
`,
  'flight_search_backup.yaml': 'tool:\n  id: flight_search_backup\n',
  'fetch_prices.yaml': 'tool:\n  id: fetch_prices\n',
  'compare_prices.yaml': 'tool:\n  id: compare_prices\n',
  'slow_report.yaml': 'tool:\n  id: slow_report\n  timeout_ms: 20000\n',
};

// What differs between the mock models of the two majors: usage and finish
// reason shapes.
const SDKS = [
  {
    name: 'ai 6', pkg: 'ai', Mock: 'MockLanguageModelV3',
    usage: { inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 },
      outputTokens: { total: 5, text: 5, reasoning: 0 } },
    finish: (reason) => ({ unified: reason, raw: reason }),
  },
  {
    name: 'ai 5', pkg: 'ai-v5', Mock: 'MockLanguageModelV2',
    usage: { inputTokens: 10, outputTokens: 5, totalTokens: 15 },
    finish: (reason) => reason,
  },
];

for (const sdk of SDKS) {
  describe(`Vercel AI SDK (${sdk.name})`, () => suite(sdk));
}

function suite(sdk) {
  const { generateText, tool, stepCountIs } = require(sdk.pkg);
  const MockModel = require(`${sdk.pkg}/test`)[sdk.Mock];
  const { usage } = sdk;

  let server;
  let client;
  before(async () => {
    server = await startRecoveryd(MANIFESTS);
    client = new RecoveryClient(server.addr, { rpcTimeoutMs: 2000, executorId: 'node-ai-test' });
  });
  after(async () => {
    if (client) client.close();
    if (server) await server.stop();
  });

  /** A model that asks for the given tool calls, one step each, then answers text. */
  function scriptedModel(calls, finalText = 'done') {
    let step = 0;
    return new MockModel({
      doGenerate: async () => {
        const c = calls[step];
        step += 1;
        if (c) {
          return {
            content: [{ type: 'tool-call', toolCallId: `call-${step}`, toolName: c.tool, input: JSON.stringify(c.input) }],
            finishReason: sdk.finish('tool-calls'), usage, warnings: [],
          };
        }
        return { content: [{ type: 'text', text: finalText }], finishReason: sdk.finish('stop'), usage, warnings: [] };
      },
    });
  }

  /** The tool results the model was shown, from the prompt of its last call. */
  function toolResultsSeen(model) {
    const out = [];
    const last = model.doGenerateCalls[model.doGenerateCalls.length - 1];
    {
      for (const msg of last.prompt) {
        if (msg.role !== 'tool') continue;
        for (const part of msg.content) if (part.type === 'tool-result') out.push(part);
      }
    }
    return out;
  }
  const outputText = (part) => (part.output.type === 'text' || part.output.type === 'json'
    ? (typeof part.output.value === 'string' ? part.output.value : JSON.stringify(part.output.value)) : '');

  async function traceEvents(turnId) {
    const t = await client.getTurnTrace({ turn_id: turnId });
    return t.events.map((e) => `${e.tool_id}:${e.event_type}`);
  }

  test('a tool that fails twice is retried and its third result reaches the model', async () => {
    let calls = 0;
    const tools = {
      flaky_lookup: tool({
        description: 'look up a city',
        inputSchema: z.object({ city: z.string() }),
        execute: async ({ city }) => {
          calls += 1;
          if (calls <= 2) {
            throw Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET', errno: -104, syscall: 'read' });
          }
          return `weather in ${city}: sunny`;
        },
      }),
    };
    const rd = withRecovery(client, tools);
    const model = scriptedModel([{ tool: 'flaky_lookup', input: { city: 'Paris' } }]);
    const out = await generateText({ model, tools: rd.tools, prompt: 'weather?', stopWhen: stepCountIs(4) });
    assert.equal(calls, 3);
    assert.equal(out.text, 'done');
    const seen = toolResultsSeen(model);
    assert.equal(seen.length, 1);
    assert.equal(outputText(seen[0]), 'weather in Paris: sunny');
    const res = rd.results[0];
    assert.equal(res.status, Status.SUCCEEDED);
    assert.equal(res.attempts, 3);
    assert.equal(res.outcomeRecorded, true);
    assert.deepEqual(res.decisions.map((d) => d.action), ['ACTION_PROCEED', 'ACTION_RETRY', 'ACTION_RETRY']);
    assert.deepEqual(await traceEvents(rd.turnId), ['flaky_lookup:ToolError', 'flaky_lookup:Retry',
      'flaky_lookup:ToolError', 'flaky_lookup:Retry', 'flaky_lookup:RetrySucceeded']);
  });

  test('a permanent error is escalated and the model gets the service text', async () => {
    let calls = 0;
    const tools = {
      book_room: tool({
        description: 'book a room',
        inputSchema: z.object({ hotel: z.string() }),
        execute: async () => {
          calls += 1;
          // The shape of the SDK's own APICallError: name, statusCode, headers.
          throw Object.assign(new Error('Unauthorized: the API key is not valid'),
            { name: 'AI_APICallError', statusCode: 401, responseHeaders: { 'content-type': 'application/json' } });
        },
      }),
    };
    const rd = withRecovery(client, tools);
    const model = scriptedModel([{ tool: 'book_room', input: { hotel: 'Ritz' } }], 'I could not book it.');
    const out = await generateText({ model, tools: rd.tools, prompt: 'book', stopWhen: stepCountIs(4) });
    assert.equal(calls, 1, 'a permanent error is not retried');
    const res = rd.results[0];
    assert.equal(res.status, Status.ESCALATE);
    assert.match(res.classification.rule_id, /^http\./, 'the HTTP status reached the classifier');
    assert.equal(res.classification.retryability, 'RETRYABILITY_PERMANENT');
    assert.ok(res.classification.llm_message.includes('Tool Execution Failed'));
    assert.equal(outputText(toolResultsSeen(model)[0]), res.classification.llm_message);
    assert.equal(out.text, 'I could not book it.');
  });

  test('an open breaker routes the call to the alternative with the same input', async () => {
    let primary = 0;
    const backupInputs = [];
    const tools = {
      flight_search: tool({
        description: 'search flights',
        inputSchema: z.object({ from: z.string(), to: z.string() }),
        execute: async () => {
          primary += 1;
          throw Object.assign(new Error('connect ECONNREFUSED 10.0.0.7:443'), { code: 'ECONNREFUSED' });
        },
      }),
    };
    const alternatives = {
      flight_search_backup: async (input) => {
        backupInputs.push(input);
        return { flights: [`${input.from}-${input.to} 09:00`] };
      },
    };
    const input = { from: 'CDG', to: 'JFK' };

    // Turn 1: the failures open the breaker, and the decision names the backup.
    const first = withRecovery(client, tools, { alternatives });
    const m1 = scriptedModel([{ tool: 'flight_search', input }]);
    await generateText({ model: m1, tools: first.tools, prompt: 'fly', stopWhen: stepCountIs(4) });
    assert.equal(primary, 2);
    assert.equal(first.results[0].status, Status.SUCCEEDED);
    assert.equal(first.results[0].toolId, 'flight_search_backup');
    assert.ok((await traceEvents(first.turnId)).includes('flight_search:CircuitOpened'));

    // Turn 2: the breaker is open, so the primary is not called at all.
    const second = withRecovery(client, tools, { alternatives });
    const m2 = scriptedModel([{ tool: 'flight_search', input }]);
    await generateText({ model: m2, tools: second.tools, prompt: 'fly', stopWhen: stepCountIs(4) });
    assert.equal(primary, 2, 'the open breaker kept the primary from being called');
    assert.deepEqual(second.results[0].decisions.map((d) => d.action), ['ACTION_USE_ALTERNATIVE']);
    assert.deepEqual(backupInputs, [input, input]);
    assert.deepEqual(JSON.parse(outputText(toolResultsSeen(m2)[0])), { flights: ['CDG-JFK 09:00'] });
    const state = await client.getBreakerState({ tool_ids: ['flight_search'] });
    assert.equal(state.breakers[0].state, 'BREAKER_STATUS_OPEN');
  });

  test('a dependent of a tool that failed for good is skipped without running', async () => {
    let compared = 0;
    const tools = {
      fetch_prices: tool({
        description: 'fetch prices',
        inputSchema: z.object({ route: z.string() }),
        execute: async () => {
          throw Object.assign(new Error('404 Not Found: no such route'), { status: 404 });
        },
      }),
      compare_prices: tool({
        description: 'compare prices',
        inputSchema: z.object({ route: z.string() }),
        execute: async () => { compared += 1; return 'cheapest: 120 EUR'; },
      }),
    };
    const plan = [{ tool_id: 'fetch_prices', depends_on: [] },
      { tool_id: 'compare_prices', depends_on: ['fetch_prices'], optional: true }];
    const rd = withRecovery(client, tools, { plan });
    const model = scriptedModel([{ tool: 'fetch_prices', input: { route: 'CDG-JFK' } },
      { tool: 'compare_prices', input: { route: 'CDG-JFK' } }]);
    await generateText({ model, tools: rd.tools, prompt: 'prices', stopWhen: stepCountIs(5) });
    assert.equal(compared, 0, 'the skipped dependent did not run');
    assert.deepEqual(rd.results[0].cascade.map((s) => [s.tool_id, s.action]),
      [['compare_prices', 'CASCADE_ACTION_SKIP']]);
    assert.equal(rd.results[1].status, 'skipped');
    const seen = toolResultsSeen(model);
    assert.equal(seen.length, 2);
    assert.match(outputText(seen[1]), /^Tool skipped: /);
  });

  test("the SDK's abortSignal cancels the tool and the run", async () => {
    let sawAbort = false;
    const tools = {
      slow_report: tool({
        description: 'a slow report',
        inputSchema: z.object({}),
        execute: (input, { abortSignal }) => new Promise((resolve, reject) => {
          abortSignal.addEventListener('abort', () => {
            sawAbort = true;
            reject(abortSignal.reason);
          }, { once: true });
        }),
      }),
    };
    const rd = withRecovery(client, tools);
    const model = scriptedModel([{ tool: 'slow_report', input: {} }]);
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 150);
    const start = Date.now();
    await assert.rejects(generateText({ model, tools: rd.tools, prompt: 'report', abortSignal: controller.signal,
      stopWhen: stepCountIs(3) }));
    assert.ok(Date.now() - start < 3000, 'the run stopped at the abort, not at the 20 s tool timeout');
    assert.equal(sawAbort, true, 'the tool got the abort through its signal');
    assert.equal(rd.results[0].status, Status.CANCELED);
  });

  test('MCP failures are classified with what they say about execution', async () => {
    const cases = [
      [{ code: -32602, message: 'Invalid params: "city" is required' }, false],
      [{ code: -32601, message: 'Unknown tool: get_wether' }, false],
      [{ isError: true, content: [{ type: 'text', text: 'upstream API returned 500' }] }, true],
    ];
    for (const [failure, executed] of cases) {
      const r = await client.classify({ tool_id: 'mcp_tool', error: toProto(mcpToolError(failure)) });
      assert.equal(r.classification.executed, executed, JSON.stringify(failure));
    }
  });
}
