/**
 * The call pipeline, in one place and in this order (DESIGN §2):
 *
 *   find tool → parse JSON strictly → validate → canonical form → policy → concurrency slot →
 *   run under the timeout → normalise and cap the output → audit → result
 *
 * Every stage returns a value, never throws: a call yields exactly one `CallResult`, whatever the
 * plugin does. The timeout lives here for every runner: on expiry the call's signal aborts with a
 * `TimeoutError` and the result is `timeout` at once; an answer that arrives later is dropped.
 */
import { createHash, randomUUID } from 'node:crypto';
import { canonicalJson, normalizeValue } from './canonical-json.ts';
import { messageOf, type ResultCode } from './errors.ts';
import type { AuditSink, Logger } from './log.ts';
import { capOutput } from './output.ts';
import type { Policy, PolicyDecision } from './policy.ts';
import type { RegisteredTool, Registry } from './registry.ts';
import { assertJsonValue, parseStrictJson } from './safe-json.ts';
import { applyDefaults } from './schema-defaults.ts';
import { timeoutReason, type RunOutcome, type RunRequest } from './sandbox/runner.ts';
import type { CallOptions, CallResult, ToolInfo } from './types.ts';

/** Asks a person whether a call may run. `always` approves this exact input for the session. */
export type ApproveFn = (request: ApprovalRequest) => Promise<boolean | 'always'> | boolean | 'always';

export interface ApprovalRequest {
  tool: ToolInfo;
  /** The canonical JSON of the validated input: what the tool will receive. */
  input: string;
  decision: PolicyDecision;
  callId: string;
  sessionId?: string;
}

export interface DispatchEnv {
  registry: Registry;
  policy: Policy;
  /** Absent: `ask` is a denial (no terminal, no `--yes`). */
  approve?: ApproveFn;
  audit: AuditSink;
  /** Cap on the input kept in an audit record; the hash always covers all of it. */
  auditInputCap: number;
  log: Logger;
  /** Host shutdown: aborts every call in flight. */
  closing: AbortSignal;
  /** Cancels each call in flight; the host runs them on close (cheaper than a listener per call). */
  inflight: Set<() => void>;
}

type Failure = { code: ResultCode; content: string };

/** Runs one call through the whole pipeline. Never throws. */
export async function dispatch(env: DispatchEnv, name: string, rawInput: unknown, options: CallOptions = {}): Promise<CallResult> {
  const started = performance.now();
  const callId = options.callId ?? randomUUID();
  const tool = env.registry.get(name);
  if (!tool) {
    const known = env.registry.names();
    return finish(env, started, callId, options, name, undefined, undefined, {
      code: 'unknown_tool',
      content: `Unknown tool "${name}". ${known.length ? `Available tools: ${known.join(', ')}.` : 'No tools are loaded.'}`,
    });
  }

  const prepared = prepareInput(tool, rawInput);
  if ('code' in prepared) return finish(env, started, callId, options, name, tool, undefined, prepared);
  let canonical: string | undefined;
  const canonicalText = () => (canonical ??= canonicalJson(prepared.input));

  const decision = env.policy.decide(tool.info, canonicalText, prepared.input);
  const approved = await approve(env, tool, decision, canonicalText, callId, options.sessionId);
  if (approved !== true) return finish(env, started, callId, options, name, tool, canonicalText, approved, decision);

  const outcome = await runGuarded(env, tool, prepared.input, callId, options);
  const result = 'code' in outcome ? outcome : normalise(tool, outcome.output);
  return finish(env, started, callId, options, name, tool, canonicalText, result, decision);
}

/** Parses (strings) or checks (values) the input, applies schema defaults, validates. */
function prepareInput(tool: RegisteredTool, raw: unknown): { input: unknown } | Failure {
  let input: unknown;
  try {
    if (typeof raw === 'string') {
      input = raw.trim() === '' ? {} : parseStrictJson(raw);
    } else {
      assertJsonValue(raw ?? {});
      input = structuredClone(raw ?? {});
    }
  } catch (error) {
    return {
      code: 'invalid_json',
      content: `Invalid JSON input for tool "${tool.info.name}": ${messageOf(error)}. Send one JSON object that matches the tool's input schema.`,
    };
  }
  const validator = tool.validator();
  if (tool.hasDefaults) input = applyDefaults(tool.info.inputSchema, input); // input is our own copy
  if (!validator.Check(input)) {
    const errors = [...new Set(validator.Errors(input).map((e) => `- ${e.instancePath || '/'}: ${e.message}`))];
    return {
      code: 'invalid_input',
      content: `Invalid input for tool "${tool.info.name}":\n${errors.join('\n')}\nFix these fields to match the tool's input schema and call again.`,
    };
  }
  return { input: normalizeValue(input) };
}

async function approve(
  env: DispatchEnv,
  tool: RegisteredTool,
  decision: PolicyDecision,
  canonical: () => string,
  callId: string,
  sessionId: string | undefined,
): Promise<true | Failure> {
  if (decision.decision === 'allow') return true;
  const because = decision.reason ? `: ${decision.reason}` : decision.rule ? ` by policy rule ${decision.rule.list}[${decision.rule.index}]` : ' by the default policy';
  if (decision.decision === 'deny') {
    return { code: 'denied', content: `Call to "${tool.info.name}" denied${because}. Do not retry it; try another way or ask the user.` };
  }
  if (!env.approve) {
    return {
      code: 'denied',
      content: `Call to "${tool.info.name}" needs approval${because}, and no one can approve it here (no terminal; run with --yes to approve). Do not retry it.`,
    };
  }
  try {
    const answer = await env.approve({ tool: tool.info, input: canonical(), decision, callId, ...(sessionId ? { sessionId } : {}) });
    if (answer === true || answer === 'always') return true;
  } catch (error) {
    env.log.warn(`approval prompt failed: ${messageOf(error)}`);
  }
  return { code: 'denied', content: `Call to "${tool.info.name}" was denied by the user. Do not retry it; ask the user what to do instead.` };
}

/**
 * Takes a concurrency slot and runs the tool, all under one timeout. The AbortController is made
 * only when someone reads the signal (it costs ~2 µs on Node 20, most of a call's overhead).
 */
function runGuarded(
  env: DispatchEnv,
  tool: RegisteredTool,
  input: unknown,
  callId: string,
  options: CallOptions,
): Promise<Extract<RunOutcome, { ok: true }> | Failure> {
  const { plugin } = tool;
  const runner = plugin.runner!;
  const limit = tool.timeoutMs;
  let controller: AbortController | undefined;
  let abortedWith: unknown;
  const abort = (reason: unknown) => {
    abortedWith ??= reason;
    controller?.abort(reason);
  };
  const request: RunRequest = {
    tool: tool.info.name,
    input,
    callId,
    ...(options.sessionId ? { sessionId: options.sessionId } : {}),
    ...(options.onProgress ? { onProgress: options.onProgress } : {}),
    get signal() {
      if (!controller) {
        controller = new AbortController();
        if (abortedWith !== undefined) controller.abort(abortedWith);
      }
      return controller.signal;
    },
  };

  return new Promise<RunOutcome | Failure>((resolve) => {
    let settled = false;
    let holdsSlot = false;
    const settle = (outcome: RunOutcome | Failure) => {
      if (settled) return; // a late answer after a timeout or a cancellation is dropped here
      settled = true;
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onCancel);
      env.inflight.delete(onClose);
      if (holdsSlot) plugin.limiter.release();
      resolve(outcome);
    };
    const timer = setTimeout(() => {
      abort(timeoutReason(limit));
      settle({ code: 'timeout', content: `Tool "${tool.info.name}" timed out after ${limit} ms. Try a smaller request, or another approach.` });
    }, limit);
    const onCancel = () => {
      abort(options.signal?.reason ?? new DOMException('cancelled', 'AbortError'));
      settle({ code: 'cancelled', content: `Call to "${tool.info.name}" was cancelled.` });
    };
    const onClose = () => {
      abort(new DOMException('host closed', 'AbortError'));
      settle({ code: 'cancelled', content: `Call to "${tool.info.name}" was cancelled: the host is closing.` });
    };
    if (options.signal?.aborted) return onCancel();
    if (env.closing.aborted) return onClose();
    options.signal?.addEventListener('abort', onCancel, { once: true });
    env.inflight.add(onClose);

    const start = () => {
      holdsSlot = true;
      runner.run(request).then(settle, (error: unknown) => settle({ ok: false, code: 'crashed', message: messageOf(error) }));
    };
    if (plugin.limiter.tryAcquire()) return start();
    void plugin.limiter.wait(request.signal).then((got) => {
      if (got === 'acquired') {
        if (settled) plugin.limiter.release();
        else start();
      } else if (got === 'queue_full') {
        settle({
          code: 'tool_error',
          content: `Plugin "${plugin.name}" is busy (${plugin.limiter.max} calls running, ${plugin.limiter.maxQueue} waiting). Try again later.`,
        });
      }
    });
  }).then((outcome) => ('ok' in outcome ? (outcome.ok ? outcome : outcomeFailure(tool, outcome)) : outcome));
}

function outcomeFailure(tool: RegisteredTool, outcome: Extract<RunOutcome, { ok: false }>): Failure {
  const name = tool.info.name;
  switch (outcome.code) {
    case 'tool_error':
      return { code: 'tool_error', content: `Tool "${name}" failed: ${outcome.message}` };
    case 'timeout':
      return { code: 'timeout', content: `Tool "${name}" timed out: ${outcome.message}` };
    case 'quarantined':
      return { code: 'quarantined', content: `Tool "${name}" is unavailable: ${outcome.message}` };
    case 'crashed':
      return { code: 'crashed', content: `Tool "${name}" crashed: ${outcome.message}. The plugin was restarted; you may retry once.` };
  }
}

/** Accepts `string` or `{ content, isError?, data? }`; anything else is the tool's error. */
function normalise(tool: RegisteredTool, output: unknown): CallResult | Failure {
  let content: unknown = output;
  let isError = false;
  let data: unknown;
  if (output !== null && typeof output === 'object' && !Array.isArray(output)) {
    const o = output as { content?: unknown; isError?: unknown; data?: unknown };
    content = o.content;
    isError = o.isError === true;
    data = o.data;
  }
  if (typeof content !== 'string') {
    const got = output === null ? 'null' : Array.isArray(output) ? 'an array' : typeof output;
    return {
      code: 'tool_error',
      content: `Tool "${tool.info.name}" returned ${typeof output === 'object' && output !== null && !Array.isArray(output) ? 'an object without a string `content`' : got}; a tool must return a string or { content: string }.`,
    };
  }
  const cap = tool.plugin.maxOutputBytes;
  const capped = capOutput(content.toWellFormed(), cap);
  const result: CallResult = { isError, content: capped.text, durationMs: 0 };
  if (isError) result.code = 'tool_error';
  if (capped.truncated) result.truncated = true;
  if (data !== undefined) {
    let size: number;
    try {
      size = Buffer.byteLength(JSON.stringify(data) ?? '');
    } catch (error) {
      return { code: 'tool_error', content: `Tool "${tool.info.name}" returned data that is not JSON: ${messageOf(error)}` };
    }
    if (size > cap) {
      return { code: 'output_too_large', content: `Tool "${tool.info.name}" returned ${size} bytes of data, over the plugin's cap of ${cap} bytes.` };
    }
    result.data = data;
  }
  return result;
}

function finish(
  env: DispatchEnv,
  started: number,
  callId: string,
  options: CallOptions,
  name: string,
  tool: RegisteredTool | undefined,
  canonical: (() => string) | undefined,
  outcome: CallResult | Failure,
  decision?: PolicyDecision,
): CallResult {
  const durationMs = Math.round((performance.now() - started) * 1000) / 1000;
  const result: CallResult =
    'isError' in outcome ? { ...outcome, durationMs } : { isError: true, content: outcome.content, code: outcome.code, durationMs };
  if (env.audit.enabled) {
    const input = canonical?.();
    env.audit.write({
      event: 'call',
      callId,
      ...(options.sessionId ? { sessionId: options.sessionId } : {}),
      plugin: tool?.plugin.name,
      tool: name,
      ...(input === undefined
        ? {}
        : {
            inputSha256: createHash('sha256').update(input).digest('hex'),
            input: input.length > env.auditInputCap ? input.slice(0, env.auditInputCap) : input,
            ...(input.length > env.auditInputCap ? { inputTruncated: true, inputBytes: Buffer.byteLength(input) } : {}),
          }),
      decision: decision?.decision,
      ...(decision?.rule ? { rule: `${decision.rule.list}[${decision.rule.index}]` } : {}),
      outcome: result.isError ? 'error' : 'ok',
      ...(result.code ? { code: result.code } : {}),
      durationMs,
      bytes: Buffer.byteLength(result.content),
      ...(result.truncated ? { truncated: true } : {}),
    });
  }
  return result;
}
