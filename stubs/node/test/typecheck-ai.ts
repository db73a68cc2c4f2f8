// Compiled (not run) by `npm run typecheck`: the AI SDK integration typed
// against the real `ai` package's tool() objects.
import { generateText, tool, stepCountIs } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { z } from 'zod';
import { RecoveryClient, Status, checkMcpResult, mcpToolError } from 'recoveryd-client';
import { withRecovery } from 'recoveryd-client/ai';

async function agent(signal: AbortSignal): Promise<string> {
  const client = new RecoveryClient('127.0.0.1:50051');
  const rd = withRecovery(client, {
    weather: tool({
      inputSchema: z.object({ city: z.string() }),
      execute: async ({ city }, { abortSignal }) => {
        const r = checkMcpResult({ isError: false, content: [{ type: 'text', text: city }] });
        if (abortSignal?.aborted) throw mcpToolError({ code: -32001, message: 'timeout' });
        return r.content?.[0]?.text ?? '';
      },
    }),
  }, { plan: [{ tool_id: 'weather' }], onResult: (res) => void res.status });
  const active: Array<'weather'> = rd.activeTools();
  void active;
  const out = await generateText({ model: new MockLanguageModelV3(), tools: rd.tools, prompt: 'x',
    abortSignal: signal, stopWhen: stepCountIs(3) });
  const first = rd.results[0];
  client.close();
  return first && first.status === Status.CANCELED ? 'canceled' : out.text;
}
void agent;
