// A fresh project's agent: the packed recoveryd-client with the Vercel AI SDK
// (ESM imports, as an application writes them). The tool fails once, then
// answers; prints "<status> attempts=<n> fallback=<bool>".
import { generateText, tool, stepCountIs } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { z } from 'zod';
import { RecoveryClient } from 'recoveryd-client';
import { withRecovery } from 'recoveryd-client/ai';

const usage = { inputTokens: { total: 0, noCache: 0, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 0, text: 0, reasoning: 0 } };
let step = 0;
const model = new MockLanguageModelV3({
  doGenerate: async () => (step++ === 0
    ? { content: [{ type: 'tool-call', toolCallId: 'a', toolName: 'weather', input: '{"city":"Oslo"}' }],
      finishReason: { unified: 'tool-calls', raw: undefined }, usage, warnings: [] }
    : { content: [{ type: 'text', text: 'ok' }], finishReason: { unified: 'stop', raw: undefined }, usage, warnings: [] }),
});
const client = new RecoveryClient(process.argv[2], { rpcTimeoutMs: 2000, executorId: 'node-user' });
let n = 0;
const rd = withRecovery(client, {
  weather: tool({
    inputSchema: z.object({ city: z.string() }),
    execute: async ({ city }) => {
      n += 1;
      if (n < 2) throw Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });
      return `${city}: 3C`;
    },
  }),
});
await generateText({ model, tools: rd.tools, prompt: 'weather in Oslo?', stopWhen: stepCountIs(3) });
const res = rd.results[0];
console.log(`${res.status} attempts=${res.attempts} fallback=${res.fallback}`);
client.close();
