// Compiled (not run) by `npm run typecheck`: the shipped declarations must
// type a complete use of the package.
import { RecoveryClient, ToolFailure, Status } from 'recoveryd-client';
import type { RunResult, DecideResponse__Output, ToolError } from 'recoveryd-client';

async function example(): Promise<string> {
  const client = new RecoveryClient('127.0.0.1:50051', { executorId: 'ts', rpcTimeoutMs: 300 });
  const res: RunResult<string> = await client.runTool('search', {
    search: async ({ signal, timeoutMs }) => {
      if (signal.aborted) throw new ToolFailure('gave up', { kind: 'ERROR_KIND_TIMEOUT' });
      return `ok within ${timeoutMs}`;
    },
  }, { turnId: 't1', plan: [{ tool_id: 'search', depends_on: [] }] });
  const err: ToolError = { message: 'x', http_status: 503 };
  const d: DecideResponse__Output = await client.decide({ tool_id: 'search', error: err, attempt: 1 });
  const delay: number = d.delay_ms;
  client.close();
  return res.status === Status.SUCCEEDED ? `${res.value} ${delay} ${res.cascade.length}` : res.reason;
}
void example;

async function verifyAndTenant(): Promise<string> {
  const client = new RecoveryClient('127.0.0.1:50051', { token: 'admin-token', tenant: 'team-b' });
  const res = await client.runTool('send_email', {
    send_email: async ({ idempotencyKey, attempt }) => `sent ${idempotencyKey} ${attempt}`,
  }, {
    idempotencyKey: 'order-7731',
    verifiers: { find_sent_email: async (req) => req.toolId === 'send_email' && req.timeoutMs > 0 },
  });
  client.close();
  if (res.status === Status.VERIFICATION_REQUIRED) return `${res.verifyToolId}: ${res.reason}`;
  return res.verified ? `done ${client.tenant}` : `${res.value} ${res.idempotencyKey}`;
}
void verifyAndTenant;
