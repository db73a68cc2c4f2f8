'use strict';
// Vercel AI SDK (`ai` on npm) integration: wraps the `execute` of the tools
// given to generateText / streamText / an Agent so every tool failure goes
// through recoveryd. The tool's thrown error is classified with every
// structured field it carries; the decision is obeyed (retry after the
// delay, the alternative called with the same input, dependents skipped or
// defaulted), the model gets the service's llm_message instead of a stack
// trace, and outcomes are reported. The SDK's abortSignal cancels the run.
//
// Tool names are recoveryd tool ids (the ids of tools.d manifests), so an
// alternative the service names is found among the wrapped tools or in
// options.alternatives. The module does not load `ai`: it works on the
// tool objects the SDK's tool() returns (v5 and v6).

const crypto = require('node:crypto');
const { Status } = require('./index');

/** The text the model gets for a run that did not succeed. */
function failureText(res) {
  const c = res.classification;
  if (c && c.llm_message) return c.llm_message;
  const last = res.error instanceof Error ? res.error.message : (res.error === undefined ? '' : String(res.error));
  const why = res.fallback ? `${res.reason} (recovery service unreachable: ${res.fallbackReason})` : res.reason;
  return `Tool Execution Failed: ${res.toolId}: ${why}${last ? `. Last error: ${last}` : ''}`;
}

function cascadeOutput(step) {
  if (step.action === 'CASCADE_ACTION_USE_DEFAULT') {
    try {
      return JSON.parse(step.default_value);
    } catch (e) {
      return step.default_value;
    }
  }
  if (step.action === 'CASCADE_ACTION_ESCALATE') {
    return `Tool not run, the turn needs a person: ${step.reason || 'a tool it depends on failed'}`;
  }
  return `Tool skipped: ${step.reason || 'a tool it depends on failed'}`;
}

function abortErrorOf(signal) {
  if (signal && signal.reason instanceof Error) return signal.reason;
  const e = new Error('The operation was aborted');
  e.name = 'AbortError';
  return e;
}

/**
 * Wraps tools for one turn (one generateText / streamText call or agent run).
 *
 * @param {import('./index').RecoveryClient} client
 * @param {Record<string, {execute?: Function}>} tools the SDK's tools, keyed by recoveryd tool id
 * @param {object} [options]
 *   turnId: string (default: a new UUID; one per wrapped set)
 *   plan: PlanStep[] for cascade decisions (default: the manifests' graph)
 *   turnDeadline: epoch ms
 *   alternatives: {toolId: (input, execOptions) => value}: alternatives the
 *     model does not see, called with the same input
 *   failureOutput: (result) => what the model gets when a run fails
 *     (default: the classification's llm_message)
 *   onResult: (result, {toolName, input, toolCallId}) => void, after each run
 *   verifiers: {verifyToolId: (input, request) => boolean}, or one such
 *     function: answers VERIFY (did the failed call with this input have its
 *     effect?); without one the model gets the service's text, which names
 *     the verify tool to call
 * @returns {{tools: object, turnId: string, results: object[], cascade: Map<string, object>,
 *   activeTools: () => string[]}}
 */
function withRecovery(client, tools, options = {}) {
  const turnId = options.turnId || crypto.randomUUID();
  const results = [];
  // Decisions for dependents, from runs that failed for good: tool id -> step.
  const cascade = new Map();
  const failureOutput = options.failureOutput || failureText;
  const originals = {};
  for (const [name, t] of Object.entries(tools)) {
    if (t && typeof t.execute === 'function') originals[name] = t.execute.bind(t);
  }
  const alternatives = options.alternatives || {};

  function verifiersFor(input) {
    const v = options.verifiers;
    if (typeof v === 'function') return (req) => v(input, req);
    if (!v) return undefined;
    const out = {};
    for (const [id, fn] of Object.entries(v)) out[id] = (req) => fn(input, req);
    return out;
  }

  function functionsFor(input, execOptions) {
    const fns = {};
    const bind = (exec) => async ({ signal }) => exec(input, { ...execOptions, abortSignal: signal });
    for (const [id, exec] of Object.entries(alternatives)) fns[id] = bind(exec);
    for (const [id, exec] of Object.entries(originals)) fns[id] = bind(exec);
    return fns;
  }

  function wrap(name) {
    return async function execute(input, execOptions = {}) {
      const info = { toolName: name, input, toolCallId: execOptions.toolCallId };
      const step = cascade.get(name);
      if (step) {
        results.push({ status: 'skipped', toolId: name, cascadeStep: step });
        return cascadeOutput(step);
      }
      const res = await client.runTool(name, functionsFor(input, execOptions), {
        turnId, plan: options.plan, turnDeadline: options.turnDeadline, signal: execOptions.abortSignal,
        verifiers: verifiersFor(input),
      });
      results.push(res);
      for (const s of res.cascade) cascade.set(s.tool_id, s);
      if (options.onResult) options.onResult(res, info);
      if (res.status === Status.CANCELED) throw abortErrorOf(execOptions.abortSignal);
      if (res.status === Status.SUCCEEDED && res.verified) return `${res.toolId}: done (${res.reason})`;
      if (res.status === Status.SUCCEEDED) return res.value;
      return failureOutput(res);
    };
  }

  const wrapped = {};
  for (const [name, t] of Object.entries(tools)) {
    wrapped[name] = originals[name] ? { ...t, execute: wrap(name) } : t;
  }
  // For prepareStep: the model is not offered tools the cascade has ruled out.
  const activeTools = () => Object.keys(wrapped).filter((name) => !cascade.has(name));
  return { tools: wrapped, turnId, results, cascade, activeTools };
}

module.exports = { withRecovery, failureText };
