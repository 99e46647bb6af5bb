/**
 * The call pipeline, in one place and in this order:
 *
 *   find tool → parse JSON strictly → validate → canonical form → policy → concurrency slot →
 *   run under the timeout → normalise and cap the output → audit → result
 *
 * Every stage returns a value, never throws: a call yields exactly one `CallResult`, whatever the
 * plugin does. The timeout lives here for every runner: on expiry the call's signal aborts with a
 * `TimeoutError` and the result is `timeout` at once; an answer that arrives later is dropped.
 */
import { randomUUID } from 'node:crypto';
import { canonicalJson, normalizeValue } from './canonical-json.ts';
import { deadline, type Deadline } from './deadlines.ts';
import { messageOf, type ResultCode } from './errors.ts';
import { auditedInput, type AuditSink } from './audit.ts';
import type { Authorization } from './contract.ts';
import type { Logger } from './log.ts';
import { capOutput } from './output.ts';
import type { Policy, PolicyDecision } from './policy.ts';
import type { RegisteredTool, Registry } from './registry.ts';
import { copyJsonValue, emptyRecord, jsonLongerThan, parseStrictJson } from './safe-json.ts';
import { applyDefaults } from './schema-defaults.ts';
import { schemaProblems } from './schema-errors.ts';
import {
  AUTHORIZE_BUDGET_SPENT,
  CALL_ENDED,
  MAX_AUTHORIZE_PER_CALL,
  timeoutReason,
  type RunOutcome,
  type RunRequest,
} from './runners/runner.ts';
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
export async function dispatch(
  env: DispatchEnv,
  name: string,
  rawInput: unknown,
  given: CallOptions = {},
): Promise<CallResult> {
  const started = performance.now();
  const options = ownCallOptions(given);
  const callId = options.callId ?? randomUUID();
  const tool = env.registry.get(name);
  if (!tool) return finish(env, started, callId, options, name, undefined, undefined, unknownTool(env.registry, name));

  const prepared = prepareInput(tool, rawInput);
  if ('code' in prepared) return finish(env, started, callId, options, name, tool, undefined, prepared);
  const judging = judge(env, tool, prepared.input, callId, options);
  const { decision, verdict, inputSha256 } = judging instanceof Promise ? await judging : judging;
  if (verdict.failure) return finish(env, started, callId, options, name, tool, inputSha256, verdict.failure, decision);

  const outcome = await runGuarded(env, tool, prepared.input, callId, options);
  const result = 'code' in outcome ? outcome : normalise(tool, outcome.output);
  return finish(env, started, callId, options, name, tool, inputSha256, result, decision);
}

interface Judged {
  decision: PolicyDecision;
  verdict: Verdict;
  /** Set when the decision was audited. */
  inputSha256: string | undefined;
}

/**
 * The policy's decision on a prepared input, the approver's answer to an `ask`, and the audit line.
 * A promise only when someone is asked: an allowed call does not wait a turn here.
 */
function judge(
  env: DispatchEnv,
  tool: RegisteredTool,
  input: unknown,
  callId: string,
  options: CallOptions,
  source?: 'authorize',
): Judged | Promise<Judged> {
  let canonical: string | undefined;
  const canonicalText = () => (canonical ??= canonicalJson(input));
  const decision = env.policy.decide(tool.info, canonicalText, input, options.sessionId);
  const judged = (verdict: Verdict): Judged => ({
    decision,
    verdict,
    inputSha256: env.audit.enabled
      ? auditDecision(env, callId, options, tool, canonicalText(), decision, verdict, source)
      : undefined,
  });
  return decision.decision === 'allow'
    ? judged(ALLOWED)
    : approve(env, tool, decision, canonicalText, callId, options).then(judged);
}

/**
 * `ctx.authorize`: another input for the calling tool goes through the call's stages up to the
 * policy (validation, canonical form, rules, approval, audit), and nothing runs. The approver's
 * wait ends with the call (its timeout, its cancellation, the host's close).
 */
async function authorize(
  env: DispatchEnv,
  tool: RegisteredTool,
  raw: unknown,
  callId: string,
  options: CallOptions,
): Promise<Authorization> {
  const prepared = prepareInput(tool, raw);
  if ('code' in prepared) return { allowed: false, message: prepared.content };
  const { decision, verdict } = await judge(env, tool, prepared.input, callId, options, 'authorize');
  if (!verdict.failure) return { allowed: true };
  return { allowed: false, message: verdict.failure.content, ...(decision.rule ? { rule: decision.rule.id } : {}) };
}

/**
 * The caller's options, own properties only: a `sessionId` or `signal` set on Object.prototype
 * would otherwise pick a session's "always" grants, or break the call.
 */
function ownCallOptions(given: CallOptions): CallOptions {
  const options = Object.create(null) as CallOptions;
  if (Object.hasOwn(given, 'signal')) options.signal = given.signal;
  if (Object.hasOwn(given, 'callId')) options.callId = given.callId;
  if (Object.hasOwn(given, 'sessionId')) options.sessionId = given.sessionId;
  if (Object.hasOwn(given, 'onProgress')) options.onProgress = given.onProgress;
  if (Object.hasOwn(given, 'onLog')) options.onLog = given.onLog;
  return options;
}

/** The message of an unknown tool, naming the ones that exist. */
export function unknownTool(registry: Registry, name: string): Failure {
  const known = registry.names();
  return {
    code: 'unknown_tool',
    content: `Unknown tool "${name}". ${known.length ? `Available tools: ${known.join(', ')}.` : 'No tools are loaded.'}`,
  };
}

/** Parses (strings) or checks (values) the input, applies schema defaults, normalises, validates. */
export function prepareInput(tool: RegisteredTool, raw: unknown): { input: unknown } | Failure {
  let input: unknown;
  try {
    if (typeof raw === 'string') {
      input = raw.trim() === '' ? emptyRecord() : parseStrictJson(raw);
    } else {
      input = copyJsonValue(raw ?? {});
    }
    if (tool.hasDefaults) input = applyDefaults(tool.info.inputSchema, input); // input is our own copy
    // From here on one value (strings and keys in NFC): what the validator checks is what the
    // policy, the audit and the tool see. Keys that collide once normalised are rejected.
    input = normalizeValue(input);
  } catch (error) {
    return {
      code: 'invalid_json',
      content: `Invalid JSON input for tool "${tool.info.name}": ${messageOf(error)}. Send one JSON object that matches the tool's input schema.`,
    };
  }
  const validator = tool.validator();
  if (!validator.Check(input)) {
    const errors = schemaProblems(validator.Errors(input), input).map((p) => `- ${p.pointer || '/'}: ${p.message}`);
    return {
      code: 'invalid_input',
      content: `Invalid input for tool "${tool.info.name}":\n${errors.join('\n')}\nFix these fields to match the tool's input schema and call again.`,
    };
  }
  return { input };
}

async function approve(
  env: DispatchEnv,
  tool: RegisteredTool,
  decision: PolicyDecision,
  canonical: () => string,
  callId: string,
  { sessionId, signal }: CallOptions,
): Promise<Verdict> {
  const rule = decision.rule ? ` (policy rule ${decision.rule.id})` : ' (the default policy)';
  const because = `${decision.reason ? `: ${decision.reason}` : ''}${rule}`;
  if (decision.decision === 'deny') {
    return {
      failure: {
        code: 'denied',
        content: `Call to "${tool.info.name}" denied${because}. Do not retry it; try another way or ask the user.`,
      },
    };
  }
  if (!env.approve) {
    return {
      answer: 'no_approver',
      failure: {
        code: 'denied',
        content: `Call to "${tool.info.name}" needs approval${because}, and no one can approve it here (no terminal; run with --yes to approve). Do not retry it.`,
      },
    };
  }
  let answer: Answer = 'refused';
  try {
    // A person may take their time: no timeout here, but the caller's cancel and the host's close end the wait.
    const given =
      signal?.aborted || env.closing.aborted
        ? ABORTED
        : await untilAborted(
            env.approve({ tool: tool.info, input: canonical(), decision, callId, ...(sessionId ? { sessionId } : {}) }),
            signal,
            env.closing,
          );
    if (given === ABORTED) {
      return {
        answer: 'cancelled',
        failure: {
          code: 'cancelled',
          content: `Call to "${tool.info.name}" was cancelled while waiting for approval.`,
        },
      };
    }
    if (given === 'always') env.policy.allowForSession(tool.info.name, canonical(), sessionId);
    if (given === true || given === 'always') return { answer: given === true ? 'approved' : 'approved_always' };
  } catch (error) {
    answer = 'prompt_failed';
    env.log.warn(`approval prompt failed: ${messageOf(error)}`);
  }
  return {
    answer,
    failure: {
      code: 'denied',
      content: `Call to "${tool.info.name}" was denied by the user. Do not retry it; ask the user what to do instead.`,
    },
  };
}

/** How an `ask` was answered, for the audit trail. */
type Answer = 'approved' | 'approved_always' | 'refused' | 'no_approver' | 'prompt_failed' | 'cancelled';

const ABORTED = Symbol('aborted');

/** The value of `pending`, or ABORTED as soon as one of the signals aborts. */
function untilAborted<T>(
  pending: T | Promise<T>,
  ...signals: (AbortSignal | undefined)[]
): Promise<T | typeof ABORTED> {
  const live = signals.filter((s): s is AbortSignal => s !== undefined);
  if (live.some((s) => s.aborted)) return Promise.resolve(ABORTED);
  return new Promise((resolve, reject) => {
    const onAbort = () => done(ABORTED);
    const done = (value: T | typeof ABORTED) => {
      for (const s of live) s.removeEventListener('abort', onAbort);
      resolve(value);
    };
    for (const s of live) s.addEventListener('abort', onAbort, { once: true });
    Promise.resolve(pending).then(done, (error: unknown) => {
      for (const s of live) s.removeEventListener('abort', onAbort);
      reject(error);
    });
  });
}
/** The policy's decision after approval: a failure means the call does not run. */
type Verdict = { answer?: Answer; failure?: Failure };
const ALLOWED: Verdict = Object.freeze({});

/** Writes the decision's audit line (with the input, capped) and returns the input's hash for the call's line. */
function auditDecision(
  env: DispatchEnv,
  callId: string,
  options: CallOptions,
  tool: RegisteredTool,
  canonical: string,
  decision: PolicyDecision,
  verdict: Verdict,
  source?: 'authorize',
): string {
  const input = auditedInput(canonical, env.auditInputCap);
  env.audit.write({
    event: 'decision',
    callId,
    ...(options.sessionId ? { sessionId: options.sessionId } : {}),
    plugin: tool.plugin.name,
    tool: tool.info.name,
    ...input,
    decision: decision.decision,
    ...(decision.rule ? { rule: decision.rule.id } : {}),
    ...(decision.reason ? { reason: decision.reason } : {}),
    ...(verdict.answer ? { answer: verdict.answer } : {}),
    ...(source ? { source } : {}),
  });
  return input.inputSha256;
}

/**
 * Takes a concurrency slot and runs the tool, all under one timeout. One object per call carries
 * the state (and is the runner's request), so the hot path allocates little: the AbortController
 * is made only when someone reads `signal` (it costs ~2 µs on Node 20, most of a call's overhead).
 */
function runGuarded(
  env: DispatchEnv,
  tool: RegisteredTool,
  input: unknown,
  callId: string,
  options: CallOptions,
): Promise<Extract<RunOutcome, { ok: true }> | Failure> {
  return new Promise<RunOutcome | Failure>((resolve) =>
    new GuardedRun(env, tool, input, callId, options, resolve).start(),
  ).then((outcome) => ('ok' in outcome ? (outcome.ok ? outcome : outcomeFailure(tool, outcome)) : outcome));
}

class GuardedRun implements RunRequest {
  readonly tool: string;
  readonly input: unknown;
  readonly callId: string;
  readonly sessionId?: string;
  readonly onProgress?: CallOptions['onProgress'];
  readonly onLog?: CallOptions['onLog'];
  private readonly env: DispatchEnv;
  private readonly registered: RegisteredTool;
  private readonly external?: AbortSignal;
  private readonly resolve: (outcome: RunOutcome | Failure) => void;
  private controller?: AbortController;
  private abortedWith?: unknown;
  private settled = false;
  /** `ctx.authorize` questions asked so far: capped, as each may prompt the user and writes an audit line. */
  private questions = 0;
  /** The runner has the call and has not answered yet: the slot is ours. */
  private running = false;
  private deadline?: Deadline;
  private abandon?: NodeJS.Timeout;
  private onStopped?: () => void;
  private readonly cancel = () =>
    this.stop(
      this.external?.reason ?? new DOMException('cancelled', 'AbortError'),
      'cancelled',
      `Call to "${this.tool}" was cancelled.`,
    );
  private readonly shutdown = () =>
    this.stop(
      new DOMException('host closed', 'AbortError'),
      'cancelled',
      `Call to "${this.tool}" was cancelled: the host is closing.`,
    );

  constructor(
    env: DispatchEnv,
    tool: RegisteredTool,
    input: unknown,
    callId: string,
    options: CallOptions,
    resolve: (outcome: RunOutcome | Failure) => void,
  ) {
    this.env = env;
    this.registered = tool;
    this.tool = tool.info.name;
    this.input = input;
    this.callId = callId;
    if (options.sessionId) this.sessionId = options.sessionId;
    if (options.onProgress) this.onProgress = options.onProgress;
    if (options.onLog) this.onLog = options.onLog;
    if (options.signal) this.external = options.signal;
    this.resolve = resolve;
  }

  get stopped(): boolean {
    return this.abortedWith !== undefined;
  }

  authorize(input: unknown): Promise<Authorization> {
    // A tool still running after its answer (an inline one that ignores its signal) gets nothing more.
    if (this.settled) return Promise.resolve(CALL_ENDED);
    if (++this.questions > MAX_AUTHORIZE_PER_CALL) return Promise.resolve(AUTHORIZE_BUDGET_SPENT);
    return authorize(this.env, this.registered, input, this.callId, {
      signal: this.signal,
      ...(this.sessionId ? { sessionId: this.sessionId } : {}),
    });
  }

  whenStopped(listener: () => void): void {
    if (this.stopped) queueMicrotask(listener);
    else this.onStopped = listener;
  }

  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.abortedWith !== undefined) this.controller.abort(this.abortedWith);
    }
    return this.controller.signal;
  }

  start(): void {
    if (this.external?.aborted) return this.cancel();
    if (this.env.closing.aborted) return this.shutdown();
    const limit = this.registered.timeoutMs;
    this.deadline = deadline(limit, () =>
      this.stop(
        timeoutReason(limit),
        'timeout',
        `Tool "${this.tool}" timed out after ${limit} ms. Try a smaller request, or another approach.`,
      ),
    );
    this.external?.addEventListener('abort', this.cancel, { once: true });
    this.env.inflight.add(this.shutdown);
    const { limiter } = this.registered.plugin;
    if (limiter.tryAcquire()) return this.run();
    void limiter.wait(this.signal).then((got) => {
      if (got === 'acquired') {
        if (this.settled) limiter.release();
        else this.run();
      } else if (got === 'queue_full') {
        this.settle({
          code: 'tool_error',
          content: `Plugin "${this.registered.plugin.name}" is busy (${limiter.max} calls running, ${limiter.maxQueue} waiting). Try again later.`,
        });
      }
    });
  }

  /**
   * The slot is held until the runner itself is done, not merely until the call was answered: an
   * inline tool that ignores its signal is still running after its timeout, and counts.
   */
  private run(): void {
    const { runner } = this.registered.plugin;
    this.running = true;
    let running: Promise<RunOutcome>;
    try {
      running = runner!.run(this);
    } catch (error) {
      running = Promise.reject(error);
    }
    running.then(
      (outcome) => {
        this.releaseSlot();
        this.settle(outcome);
      },
      (error: unknown) => {
        this.releaseSlot();
        this.settle({ ok: false, code: 'crashed', message: messageOf(error) });
      },
    );
  }

  /**
   * Gives the slot back once. A run that outlives its stop by another full timeout (an inline tool
   * that never settles) gives it back anyway, with a warning: else it would block its plugin forever.
   */
  private releaseSlot(): void {
    if (!this.running) return;
    this.running = false;
    clearTimeout(this.abandon);
    this.registered.plugin.limiter.release();
  }

  /** Ends the call early: aborts the signal the tool sees, and answers at once. */
  private stop(reason: unknown, code: ResultCode, content: string): void {
    this.abortedWith ??= reason;
    this.controller?.abort(reason);
    const listener = this.onStopped;
    this.onStopped = undefined;
    listener?.();
    if (this.running && !this.settled) {
      this.abandon = setTimeout(() => {
        this.env.log.warn(
          `tool "${this.tool}" still running ${this.registered.timeoutMs} ms after it was stopped; its concurrency slot is released`,
        );
        this.releaseSlot();
      }, this.registered.timeoutMs).unref();
    }
    this.settle({ code, content });
  }

  private settle(outcome: RunOutcome | Failure): void {
    if (this.settled) return; // a late answer after a timeout or a cancellation is dropped here
    this.settled = true;
    this.deadline?.cancel();
    this.external?.removeEventListener('abort', this.cancel);
    this.env.inflight.delete(this.shutdown);
    this.resolve(outcome);
  }
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
      return {
        code: 'crashed',
        content: `Tool "${name}" crashed: ${outcome.message}. The plugin was restarted; you may retry once.`,
      };
  }
}

/**
 * Accepts `string` or `{ content, isError?, data? }`; anything else is the tool's error. An inline
 * tool hands over a live object: a getter that throws, or a Proxy, is the tool's error too, and
 * `data` is kept as a JSON copy, since a getter read again later (by `--json`, by MCP) could throw
 * or answer differently.
 */
function normalise(tool: RegisteredTool, output: unknown): CallResult | Failure {
  try {
    return readOutput(tool, output);
  } catch (error) {
    return {
      code: 'tool_error',
      content: `Tool "${tool.info.name}" returned a value the host cannot read: ${messageOf(error)}`,
    };
  }
}

function readOutput(tool: RegisteredTool, output: unknown): CallResult | Failure {
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
    // Not for inline data: it is read once (a getter read twice may answer differently), and an
    // inline plugin shares the host's thread anyway; isolated data is plain, cloned values.
    if (tool.plugin.isolation !== 'inline' && jsonLongerThan(data, cap)) {
      return {
        code: 'output_too_large',
        content: `Tool "${tool.info.name}" returned data whose JSON is over the plugin's cap of ${cap} bytes.`,
      };
    }
    let json: string | undefined;
    try {
      json = JSON.stringify(data);
    } catch (error) {
      return {
        code: 'tool_error',
        content: `Tool "${tool.info.name}" returned data that is not JSON: ${messageOf(error)}`,
      };
    }
    const size = Buffer.byteLength(json ?? '');
    if (size > cap) {
      return {
        code: 'output_too_large',
        content: `Tool "${tool.info.name}" returned ${size} bytes of data, over the plugin's cap of ${cap} bytes.`,
      };
    }
    if (json !== undefined) result.data = JSON.parse(json);
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
  inputSha256: string | undefined,
  outcome: CallResult | Failure,
  decision?: PolicyDecision,
): CallResult {
  const durationMs = Math.round((performance.now() - started) * 1000) / 1000;
  const result: CallResult =
    'isError' in outcome
      ? Object.assign(outcome, { durationMs })
      : { isError: true, content: outcome.content, code: outcome.code, durationMs };
  if (env.audit.enabled) {
    // The input itself is on the decision's line; this line ties to it by call id and hash.
    env.audit.write({
      event: 'call',
      callId,
      ...(options.sessionId ? { sessionId: options.sessionId } : {}),
      ...(tool ? { plugin: tool.plugin.name } : {}),
      tool: name,
      ...(inputSha256 ? { inputSha256 } : {}),
      ...(decision ? { decision: decision.decision } : {}),
      ...(decision?.rule ? { rule: decision.rule.id } : {}),
      outcome: result.isError ? 'error' : 'ok',
      ...(result.code ? { code: result.code } : {}),
      durationMs,
      bytes: Buffer.byteLength(result.content),
      ...(result.truncated ? { truncated: true } : {}),
    });
  }
  return result;
}
