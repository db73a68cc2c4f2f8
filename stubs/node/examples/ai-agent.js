// A Vercel AI SDK agent whose tools run under recoveryd's decisions.
//
//   node examples/ai-agent.js --addr 127.0.0.1:50051
//
// The model is the SDK's own deterministic mock (ai/test), so the example
// runs without an API key; swap in a real model (e.g. openai('gpt-4o') from
// @ai-sdk/openai) and nothing else changes. The flight search fails twice
// with a connection reset and then answers: recoveryd classifies each
// failure and says when to retry, the model sees only the final result.
// Ctrl-C aborts the turn: the SDK's abortSignal cancels the service call,
// the retry sleep and the tool.
'use strict';
const { parseArgs } = require('node:util');
const { generateText, tool, stepCountIs } = require('ai');
const { MockLanguageModelV3 } = require('ai/test');
const { z } = require('zod');
const { RecoveryClient } = require('recoveryd-client');
const { withRecovery } = require('recoveryd-client/ai');

const usage = {
  inputTokens: { total: 0, noCache: 0, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 0, text: 0, reasoning: 0 },
};

// Asks for one flight search, then answers with what the tool returned.
function mockModel() {
  return new MockLanguageModelV3({
    doGenerate: async ({ prompt }) => {
      const results = prompt.filter((m) => m.role === 'tool').flatMap((m) => m.content);
      if (results.length === 0) {
        return {
          content: [{ type: 'tool-call', toolCallId: 'c1', toolName: 'flight_search',
            input: JSON.stringify({ from: 'CDG', to: 'JFK' }) }],
          finishReason: { unified: 'tool-calls', raw: undefined }, usage, warnings: [],
        };
      }
      const out = results[results.length - 1].output;
      return {
        content: [{ type: 'text', text: `Found: ${JSON.stringify(out.value)}` }],
        finishReason: { unified: 'stop', raw: undefined }, usage, warnings: [],
      };
    },
  });
}

async function main() {
  const { values: args } = parseArgs({ options: { addr: { type: 'string', default: '127.0.0.1:50051' } } });
  const client = new RecoveryClient(args.addr, { executorId: 'ai-agent-example' });
  let calls = 0;
  const tools = {
    flight_search: tool({
      description: 'Search flights between two airports',
      inputSchema: z.object({ from: z.string(), to: z.string() }),
      execute: async ({ from, to }, { abortSignal }) => {
        calls += 1;
        if (abortSignal && abortSignal.aborted) throw abortSignal.reason;
        if (calls <= 2) throw Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' });
        return { flights: [`${from}->${to} 09:05`, `${from}->${to} 13:40`] };
      },
    }),
  };
  // Alternatives the service may name are called with the model's input.
  const rd = withRecovery(client, tools, {
    alternatives: { flight_search_backup: async ({ from, to }) => ({ flights: [`${from}->${to} 18:00`] }) },
    onResult: (res, { toolName }) => console.error(`${toolName}: ${res.status} after ${res.attempts} call(s)` +
      (res.fallback ? ` (local fallback: ${res.fallbackReason})` : '')),
  });
  const controller = new AbortController();
  process.once('SIGINT', () => controller.abort());
  const out = await generateText({
    model: mockModel(), tools: rd.tools, prompt: 'Find me a flight from Paris to New York',
    stopWhen: stepCountIs(4), abortSignal: controller.signal,
  });
  console.log(out.text);
  client.close();
}

main().catch((e) => {
  console.error(e);
  process.exitCode = 1;
});
