// Types of recoveryd-client. The message types come from the generated
// declarations in ./generated (scripts/gen-stubs.sh); the helper is typed here.
import type * as grpc from '@grpc/grpc-js';
import type { RecoveryServiceClient } from './generated/recovery/v1/RecoveryService';
import type { ClassifyRequest } from './generated/recovery/v1/ClassifyRequest';
import type { ClassifyResponse__Output } from './generated/recovery/v1/ClassifyResponse';
import type { DecideRequest } from './generated/recovery/v1/DecideRequest';
import type { DecideResponse__Output } from './generated/recovery/v1/DecideResponse';
import type { RecordOutcomeRequest } from './generated/recovery/v1/RecordOutcomeRequest';
import type { RecordOutcomeResponse__Output } from './generated/recovery/v1/RecordOutcomeResponse';
import type { GetBreakerStateRequest } from './generated/recovery/v1/GetBreakerStateRequest';
import type { GetBreakerStateResponse__Output } from './generated/recovery/v1/GetBreakerStateResponse';
import type { GetTurnTraceRequest } from './generated/recovery/v1/GetTurnTraceRequest';
import type { GetTurnTraceResponse__Output } from './generated/recovery/v1/GetTurnTraceResponse';
import type { Action__Output } from './generated/recovery/v1/Action';
import type { ErrorKind } from './generated/recovery/v1/ErrorKind';
import type { ErrorSource } from './generated/recovery/v1/ErrorSource';
import type { PlanStep } from './generated/recovery/v1/PlanStep';
import type { Classification__Output } from './generated/recovery/v1/Classification';
import type { CascadeStep__Output } from './generated/recovery/v1/CascadeStep';
import type { TraceEvent__Output } from './generated/recovery/v1/TraceEvent';

export type * from './generated/recovery/v1/ToolError';
export type * from './generated/recovery/v1/Classification';
export type * from './generated/recovery/v1/ClassifyRequest';
export type * from './generated/recovery/v1/ClassifyResponse';
export type * from './generated/recovery/v1/PlanStep';
export type * from './generated/recovery/v1/DecideRequest';
export type * from './generated/recovery/v1/DecideResponse';
export type * from './generated/recovery/v1/BreakerState';
export type * from './generated/recovery/v1/CascadeStep';
export type * from './generated/recovery/v1/TraceEvent';
export type * from './generated/recovery/v1/RecordOutcomeRequest';
export type * from './generated/recovery/v1/RecordOutcomeResponse';
export type * from './generated/recovery/v1/GetBreakerStateRequest';
export type * from './generated/recovery/v1/GetBreakerStateResponse';
export type * from './generated/recovery/v1/GetTurnTraceRequest';
export type * from './generated/recovery/v1/GetTurnTraceResponse';
export type * from './generated/recovery/v1/TurnSummary';
export type { RecoveryServiceClient } from './generated/recovery/v1/RecoveryService';
export type { ProtoGrpcType } from './generated/recovery';

export declare const Status: {
  readonly SUCCEEDED: 'succeeded';
  readonly FAIL_FAST: 'fail_fast';
  readonly ESCALATE: 'escalate';
  readonly GIVE_UP: 'give_up';
  readonly PARTIAL: 'partial';
  readonly NO_ALTERNATIVE: 'no_alternative';
  readonly CANCELED: 'canceled';
  readonly VERIFICATION_REQUIRED: 'verification_required';
};
export type RunStatus = typeof Status[keyof typeof Status];

export declare const DEFAULT_RPC_TIMEOUT_MS: number;
export { grpc };

export interface FallbackPolicy {
  /** attempts in total, the first included (3) */
  maxAttempts: number;
  /** delay before attempt 2, 3, ...; the last repeats ([100, 200]) */
  delaysMs: number[];
  /** per-call timeout when the service gave none (30000) */
  timeoutMs: number;
}

export interface ClientOptions {
  /** deadline of every service call (200 ms) */
  rpcTimeoutMs?: number;
  executorId?: string;
  fallback?: Partial<FallbackPolicy>;
  /** grpc.credentials.createSsl(ca, key, cert) for server.tls; default plaintext */
  credentials?: grpc.ChannelCredentials;
  /** server.auth: sent as "authorization: Bearer <token>" on every call (over plaintext too) */
  token?: string;
  /**
   * sent as x-recoveryd-tenant on every call: the tenant the admin token acts
   * for (server.tenants). Letters, digits, '_', '.', '-', at most 64 bytes;
   * anything else throws a TypeError.
   */
  tenant?: string;
  /** e.g. {'grpc.service_config': '{"loadBalancingConfig":[{"round_robin":{}}]}'} */
  channelOptions?: grpc.ChannelOptions;
}

export interface CallOptions {
  /** cancels the call in flight; the promise rejects with the signal's reason */
  signal?: AbortSignal;
}

export interface ToolContext {
  /** aborted when the hard timeout passes or the run's signal fires */
  signal: AbortSignal;
  timeoutMs: number;
  /** the tool this call runs (the run's tool or an alternative) */
  toolId: string;
  /** 1 for the first call of this tool in the run */
  attempt: number;
  /**
   * the key to send with the call (an Idempotency-Key header, a client
   * reference): the run's idempotencyKey, or on a retry the key the service
   * repeated; '' without one
   */
  idempotencyKey: string;
}

/** What a verifier is asked: did the failed call of toolId have its effect? */
export interface VerifyRequest {
  /** the tool whose effect is unknown */
  toolId: string;
  /** the read-only tool the manifest names */
  verifyToolId: string;
  /** the failed attempt of the tool */
  attempt: number;
  /** what the failed attempt threw */
  error: unknown;
  /** the service's reason */
  reason: string;
  classification: Classification__Output | null;
  /** the key the failed call was sent with */
  idempotencyKey: string;
  turnId: string;
  /** aborted when the verify tool's timeout passes or the run's signal fires */
  signal: AbortSignal;
  /** the verify tool's timeout */
  timeoutMs: number;
}

/**
 * Answers VERIFY: true (the effect happened: the run succeeds without calling
 * the tool again), false (it did not: the tool may be called again); throw
 * when it cannot tell (the run ends 'verification_required').
 */
export type Verifier = (request: VerifyRequest) => boolean | Promise<boolean>;

export type ToolFunction<T = unknown> = (ctx: ToolContext) => T | Promise<T>;

export interface RunOptions {
  turnId?: string;
  /** epoch ms; sent as the turn's remaining budget. Absent: the service's turn clock */
  turnDeadline?: number;
  /** the turn's tools for cascade decisions. Absent: the manifests' graph */
  plan?: PlanStep[];
  /**
   * cancels the service call in flight, the retry sleep and the tool (through
   * its signal); the run ends with status 'canceled'
   */
  signal?: AbortSignal;
  /** VERIFY: one verifier per verify tool id, or one for all */
  verifiers?: Record<string, Verifier> | Verifier;
  /** sent with Decide, and to the tool as ctx.idempotencyKey */
  idempotencyKey?: string;
}

export interface Decision {
  toolId: string;
  action: Action__Output;
  delayMs: number;
  reason: string;
}

export interface RunResult<T = unknown> {
  status: RunStatus;
  /** the tool that succeeded, or the one the run stopped on */
  toolId: string;
  value: T | undefined;
  /** tool invocations over the whole run */
  attempts: number;
  reason: string;
  /** the last tool error */
  error: unknown;
  classification: Classification__Output | null;
  cascade: CascadeStep__Output[];
  trace: TraceEvent__Output[];
  decisions: Decision[];
  /** probe permit the successful call held */
  permitId: string;
  /** false when a success could not be reported */
  outcomeRecorded: boolean;
  /** the local policy decided because the service was unreachable */
  fallback: boolean;
  fallbackReason: string;
  /** succeeded because a verifier said the failed call's effect happened (value is undefined) */
  verified: boolean;
  /** the verify tool the service named (VERIFY) */
  verifyToolId: string;
  /** the key the last call was sent with */
  idempotencyKey: string;
}

export declare class ToolFailure extends Error {
  constructor(message: string, fields?: {
    httpStatus?: number; grpcCode?: number; code?: string; exceptionType?: string;
    kind?: ErrorKind; source?: ErrorSource; retryAfterMs?: number;
  });
  httpStatus: number;
  grpcCode: number;
  code: string;
  exceptionType: string;
  kind: ErrorKind;
  source: ErrorSource;
  retryAfterMs: number;
}

export declare class ToolTimeout extends Error {
  constructor(timeoutMs: number);
  timeoutMs: number;
}

export declare class RecoveryClient {
  constructor(target?: string, options?: ClientOptions);
  /** the generated client, for callers who run their own loop */
  readonly rpc: RecoveryServiceClient;
  readonly rpcTimeoutMs: number;
  readonly executorId: string;
  readonly fallback: FallbackPolicy;
  /** the tenant sent as x-recoveryd-tenant ('' for none) */
  readonly tenant: string;
  close(): void;
  classify(request: ClassifyRequest, options?: CallOptions): Promise<ClassifyResponse__Output>;
  decide(request: DecideRequest, options?: CallOptions): Promise<DecideResponse__Output>;
  recordOutcome(request: RecordOutcomeRequest, options?: CallOptions): Promise<RecordOutcomeResponse__Output>;
  getBreakerState(request?: GetBreakerStateRequest, options?: CallOptions): Promise<GetBreakerStateResponse__Output>;
  getTurnTrace(request: GetTurnTraceRequest, options?: CallOptions): Promise<GetTurnTraceResponse__Output>;
  runTool<T = unknown>(toolId: string, tools: Record<string, ToolFunction<T>>,
    options?: RunOptions): Promise<RunResult<T>>;
}

/**
 * The wire form of a thrown error: message, name, code (or the errno name),
 * HTTP status and retry-after (from the error or its response headers), gRPC
 * status, with the cause chain read for what the error itself lacks.
 */
export declare function toProto(err: unknown): ToolErrorMessage;
type ToolErrorMessage = import('./generated/recovery/v1/ToolError').ToolError;

/** An MCP tool result (CallToolResult) as far as failure mapping reads it. */
export interface McpToolResult {
  isError?: boolean;
  content?: Array<{ type: string; text?: string }>;
}

/**
 * A ToolFailure for an MCP failure: a JSON-RPC error ({code, message}, or the
 * MCP SDK's McpError) with its code and the kind it implies (-32601 unknown
 * tool, -32602 invalid parameters: not executed), or an `isError: true` tool
 * result (execution error: executed).
 */
export declare function mcpToolError(failure: { code: number; message?: string } | McpToolResult | Error): ToolFailure;
/** Returns the result, or throws mcpToolError(result) when it has isError: true. */
export declare function checkMcpResult<R extends McpToolResult>(result: R): R;

/** The tenant as the server accepts it ('' for none), or a TypeError naming what is wrong. */
export declare function checkTenant(tenant: string | undefined): string;

/** The loaded recovery.v1 package of @grpc/proto-loader. */
export declare function loadPackage(): ProtoGrpcTypeV1;
type ProtoGrpcTypeV1 = import('./generated/recovery').ProtoGrpcType['recovery']['v1'];
