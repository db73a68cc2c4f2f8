// Types of recoveryd-client/ai, the Vercel AI SDK integration. Tools are
// typed structurally (an object with an optional execute), so the module
// works with the `tool()` objects of ai v5 and v6 without importing them.
import type { RecoveryClient, RunResult, PlanStep, CascadeStep__Output, VerifyRequest } from './index';

/** What the SDK passes to execute (ToolExecutionOptions), as far as it is read here. */
export interface ExecuteOptions {
  toolCallId?: string;
  abortSignal?: AbortSignal;
  [key: string]: unknown;
}

export interface ExecutableTool {
  execute?: (input: any, options: any) => unknown;
  [key: string]: unknown;
}

export interface SkippedRun {
  status: 'skipped';
  toolId: string;
  cascadeStep: CascadeStep__Output;
}

export interface WithRecoveryOptions {
  /** default: a new UUID per withRecovery call */
  turnId?: string;
  /** the turn's tools for cascade decisions; default: the manifests' graph */
  plan?: PlanStep[];
  /** epoch ms */
  turnDeadline?: number;
  /** alternatives the model does not see, called with the same input */
  alternatives?: Record<string, (input: any, options: ExecuteOptions) => unknown>;
  /** what the model gets when a run fails; default: failureText */
  failureOutput?: (result: RunResult) => unknown;
  onResult?: (result: RunResult, info: { toolName: string; input: unknown; toolCallId?: string }) => void;
  /**
   * answers VERIFY for the call with this input: did its effect happen? One
   * function per verify tool id, or one for all. Without one the model gets
   * the service's text, which names the verify tool to call.
   */
  verifiers?: Record<string, AiVerifier> | AiVerifier;
}

export type AiVerifier = (input: any, request: VerifyRequest) => boolean | Promise<boolean>;

export interface RecoveryTools<T extends Record<string, ExecutableTool>> {
  /** the same tools, each execute running under recoveryd's decisions */
  tools: T;
  turnId: string;
  /** one entry per execute call, in order */
  results: Array<RunResult | SkippedRun>;
  /** decisions for dependents of tools that failed for good, by tool id */
  cascade: Map<string, CascadeStep__Output>;
  /**
   * the wrapped tools the cascade has not ruled out, for prepareStep:
   * `prepareStep: () => ({ activeTools: rd.activeTools() })`
   */
  activeTools(): Array<keyof T & string>;
}

export declare function withRecovery<T extends Record<string, ExecutableTool>>(
  client: RecoveryClient, tools: T, options?: WithRecoveryOptions): RecoveryTools<T>;

/** The classification's llm_message, or a text made from the reason when the service gave none. */
export declare function failureText(result: RunResult): string;
