/**
 * The call pipeline, in one place and in this order:
 *
 *   find tool → prepare the input (call-input.ts: parse strictly, defaults, NFC, canonical paths,
 *   validate) → policy, on its canonical JSON → approval of an `ask` (approval.ts) → audit the
 *   decision → concurrency slot and timeout (guarded-run.ts) → read and cap the output (output.ts)
 *   → audit the call → result
 *
 * Every stage returns a `Step` (`ok: true` and its values, or the failure that ends the call) and
 * never throws: a call yields exactly one `CallResult`, whatever the plugin does. `decide` is the
 * stages up to the policy, shared by every call and by `host.decide()`.
 */
// `performance` is the global, not node:perf_hooks' binding: importing that module costs every host start
// ~5 M instructions, the global's accessor ~5 ns a read (docs/plugins.md, "How a plugin is loaded").
import { approve, type Verdict } from './approval.ts';
import type { AuditSink } from './audit.ts';
import { AuditInput, callEntry, decisionEntry } from './audit-lines.ts';
import { nextCallId } from './call-id.ts';
import { prepareInput } from './call-input.ts';
import { OwnCallOptions } from './call-options.ts';
import { canonicalJson } from './canonical-json.ts';
import type { Authorization } from './contract.ts';
import { messageOf } from './errors.ts';
import { type GuardedCall, runGuarded, type Shutdown } from './guarded-run.ts';
import type { List } from './list.ts';
import type { Logger } from './log.ts';
import { capOutput, DEFAULT_MAX_OUTPUT_BYTES, normalise } from './output.ts';
import type { Failed, Step } from './step.ts';
import type { Policy, PolicyContext, PolicyDecision } from './policy.ts';
import type { RegisteredTool, Registry } from './registry.ts';
import { endToolSpan, type Span, startToolSpan, type Tracer, withSpan } from './tracing.ts';
import type { ApproveFn, CallEnd, CallOptions, CallResult, Caller } from './types.ts';
import { movedPath } from './workspace-paths.ts';

export type { ApprovalRequest, ApproveFn } from './types.ts';

export interface DispatchEnv {
  registry: Registry;
  policy: Policy;
  /** Absent: `ask` is a denial (no terminal, no `--yes`). */
  approve?: ApproveFn;
  audit: AuditSink;
  /** Cap on the input kept in an audit record; the hash always covers all of it. */
  auditInputCap: number;
  /** The most characters of JSON text an input given as text may have: refused before it is parsed. */
  maxInputChars: number;
  /** The workspace root, which `x-workspace-path` fields are made relative to (workspace-paths.ts). */
  workspace?: string;
  log: Logger;
  /** Host shutdown: aborts every call in flight. */
  closing: AbortSignal;
  /** Each run in flight; the host shuts them down on close (cheaper than a listener per call). */
  inflight: List<Shutdown>;
  /** Set when an OpenTelemetry SDK was registered as the host was created: each call is then a span. */
  tracer?: Tracer;
  /** Told of each call as it ends (`host.onCallEnd`); empty costs a length check per call. */
  callEnd: Array<(end: CallEnd) => void>;
}

/** Runs one call through the whole pipeline. Never throws. */
export async function dispatch(
  env: DispatchEnv,
  name: string,
  rawInput: unknown,
  given?: CallOptions,
): Promise<CallResult> {
  const call = new Call(env, name, new OwnCallOptions(given));
  try {
    if (env.tracer)
      call.span = startToolSpan(env.tracer, { tool: name, callId: call.id, caller: call.options.caller?.name });
    const decided = decide(env, name, rawInput, call.options);
    call.tool = decided.tool;
    if (!decided.ok) return call.finish(decided);
    call.decision = decided.decision;
    const judging = judge(call, decided, call.options.signal);
    const verdict = judging instanceof Promise ? await judging : judging;
    if (!verdict.ok) return call.finish(verdict);
    if (judging instanceof Promise) {
      const moved = movedSinceDecided(env, decided);
      if (moved) return call.finish(moved);
    }
    // The tool runs inside its call's span: spans it starts (an inline plugin's HTTP requests) are children.
    const ran = await (call.span
      ? withSpan(call.span, () => runGuarded(call, decided.tool, decided.input))
      : runGuarded(call, decided.tool, decided.input));
    return call.finish(ran.ok ? normalise(decided.tool, ran.output) : ran);
  } catch (error) {
    // Each stage answers with a Step and never throws: reaching here is the host's own bug. The
    // call still ends with one result and its audit line, and every front end keeps its promise.
    env.log.error(`call to "${name}" failed inside the host: ${messageOf(error)}`);
    return call.finish({
      ok: false,
      code: 'tool_error',
      content: `Call to "${name}" failed inside the host (${messageOf(error)}). Do not retry it.`,
    });
  }
}

/**
 * A call the host ends before its stages, made at `started` (one cancelled while its tool was still
 * loading): it ends as every call does, with its `call` line (no decision: it never reached the
 * policy) and the call-end listeners told.
 */
export function endBeforeStages(
  env: DispatchEnv,
  name: string,
  given: CallOptions | undefined,
  failure: Failed,
  started: number,
): CallResult {
  return new Call(env, name, new OwnCallOptions(given), started).finish(failure);
}

/**
 * One call on its way through the stages: its identity, and what its `call` audit line and its
 * `durationMs` are made of. It is also what the guarded run asks `ctx.authorize` questions through.
 */
class Call implements GuardedCall {
  readonly env: DispatchEnv;
  readonly name: string;
  readonly options: CallOptions;
  readonly id: string;
  readonly started: number;
  /** Set once the tool is found. */
  tool?: RegisteredTool;
  /** Set once the policy has decided. */
  decision?: PolicyDecision;
  /** Set once the decision is audited: the `call` line ties to the `decision` line by its hash. */
  auditInput?: AuditInput;
  /** Time spent waiting for a person to approve (the call's own `ask`, and any `ctx.authorize`). */
  approvalMs?: number;
  /** The call's span, when tracing is on. */
  span?: Span;

  constructor(env: DispatchEnv, name: string, options: CallOptions, started = performance.now()) {
    this.env = env;
    this.name = name;
    this.options = options;
    this.id = options.callId ?? nextCallId();
    this.started = started;
  }

  authorize(input: unknown, signal: AbortSignal): Promise<Authorization> {
    return authorize(this, this.tool!, input, signal);
  }

  /** The call's result, and its audit line. `durationMs` leaves out the time a person took to approve. */
  finish(outcome: Step<{ result: CallResult }>): CallResult {
    const durationMs = round(performance.now() - this.started - (this.approvalMs ?? 0));
    let result: CallResult;
    if (outcome.ok) {
      result = outcome.result;
      result.durationMs = durationMs;
    } else {
      // A failure's text holds the tool's own (a thrown message, a block it got wrong) or the
      // caller's (an unknown name): it goes to the model under the same cap as output, well-formed as
      // output is (output.ts, readBlock).
      const capped = capOutput(
        outcome.content.toWellFormed(),
        this.tool?.plugin.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES,
      );
      result = { isError: true, content: capped.text, code: outcome.code, durationMs };
      if (capped.truncated) result.truncated = true;
    }
    if (this.env.audit.enabled) {
      // The input itself is on the decision's line; this line ties to it by call id and hash.
      this.env.audit.write(
        callEntry({
          callId: this.id,
          sessionId: this.options.sessionId,
          caller: this.options.caller?.name,
          plugin: this.tool?.plugin.name,
          tool: this.name,
          input: this.auditInput,
          decision: this.decision?.decision,
          rule: this.decision?.rule?.id,
          outcome: result.isError ? 'error' : 'ok',
          code: result.code,
          durationMs,
          approvalMs: this.approvalMs === undefined ? undefined : round(this.approvalMs),
          content: result.content,
          truncated: result.truncated,
        }),
      );
    }
    if (this.span) endToolSpan(this.span, result, this.tool?.plugin.name);
    if (this.env.callEnd.length) this.tell(result);
    return result;
  }

  /** Tells the `onCallEnd` listeners; one that throws is logged, and the call's result stands. */
  private tell(result: CallResult): void {
    const end: CallEnd = {
      callId: this.id,
      tool: this.name,
      ...(this.tool ? { plugin: this.tool.plugin.name } : {}),
      ...(this.options.caller ? { caller: this.options.caller } : {}),
      result,
    };
    for (const listener of this.env.callEnd) {
      try {
        listener(end);
      } catch (error) {
        this.env.log.warn(`a call-end listener failed: ${messageOf(error)}`);
      }
    }
  }
}

/** Milliseconds to the microsecond, as results and audit lines give them. */
function round(ms: number): number {
  return Math.round(ms * 1000) / 1000;
}

/** A validated input and the policy's decision on it. */
export type Decided = Step<{
  tool: RegisteredTool;
  input: unknown;
  decision: PolicyDecision;
  /** The canonical JSON of `input`, made on first use: an allowed call with the audit off never needs it. */
  canonical: () => string;
}> & { tool?: RegisteredTool };

/** A call that got as far as the policy's decision. */
type Ready = Extract<Decided, { ok: true }>;

/**
 * The stages up to the policy's decision: find the tool, prepare its input, decide. Asks no one and
 * writes nothing: `host.decide()` is this, and every call starts with it. A tool the caller can
 * never call is unknown to them: its name, its schema and the policy's reasons stay unseen.
 */
export function decide(
  env: Pick<DispatchEnv, 'registry' | 'policy' | 'maxInputChars' | 'workspace'>,
  name: string,
  raw: unknown,
  context: PolicyContext,
): Decided {
  const tool = env.registry.get(name);
  return tool && env.policy.canEverCall(tool.info, context.caller)
    ? decideOn(env, tool, raw, context)
    : unknownTool(env, name, context.caller);
}

function decideOn(
  { policy, maxInputChars, workspace }: Pick<DispatchEnv, 'policy' | 'maxInputChars' | 'workspace'>,
  tool: RegisteredTool,
  raw: unknown,
  context: PolicyContext,
): Decided {
  const prepared = prepareInput(tool, raw, maxInputChars, workspace);
  if (!prepared.ok) return { ...prepared, tool };
  const { input } = prepared;
  let canonical: string | undefined;
  const canonicalText = () => (canonical ??= canonicalJson(input));
  const decision = policy.decide(tool.info, canonicalText, input, context);
  return { ok: true, tool, input, decision, canonical: canonicalText };
}

// One frozen verdict for every allowed call: the call path allocates none.
const ALLOWED: Verdict = Object.freeze({ ok: true });

/**
 * The approver's answer to an `ask`, and the decision's audit line. A promise only when someone
 * is asked: an allowed call does not wait a turn here.
 */
function judge(call: Call, decided: Ready, signal?: AbortSignal, source?: 'authorize'): Verdict | Promise<Verdict> {
  if (decided.decision.decision === 'allow') return audited(call, decided, ALLOWED, source);
  return approve(call, decided, signal).then((verdict) => audited(call, decided, verdict, source));
}

/**
 * `ctx.authorize`: another input for the calling tool goes through the call's stages up to the
 * policy (validation, canonical form, rules, approval, audit), and nothing runs. The approver's
 * wait ends with the call (its timeout, its cancellation, the host's close).
 */
async function authorize(call: Call, tool: RegisteredTool, raw: unknown, signal: AbortSignal): Promise<Authorization> {
  const decided = decideOn(call.env, tool, raw, call.options);
  if (!decided.ok) return { allowed: false, message: decided.content };
  const verdict = await judge(call, decided, signal, 'authorize');
  if (verdict.ok) return { allowed: true };
  const { rule } = decided.decision;
  return { allowed: false, message: verdict.content, ...(rule ? { rule: rule.id } : {}) };
}

/** The message of an unknown tool, naming the ones that exist for this caller. */
function unknownTool(
  { registry, policy }: Pick<DispatchEnv, 'registry' | 'policy'>,
  name: string,
  caller?: Caller,
): Failed {
  const known = caller
    ? registry
        .tools()
        .filter((t) => policy.canEverCall(t, caller))
        .map((t) => t.name)
    : registry.names();
  return {
    ok: false,
    code: 'unknown_tool',
    // A caller the policy hides every tool from is told so, not that nothing loaded: an operator
    // reading it would go looking for a plugin failure that is not there.
    content: `Unknown tool "${name}". ${known.length ? `Available tools: ${known.join(', ')}.` : caller ? 'No tool is open to this caller.' : 'No tools are loaded.'}`,
  };
}

/** A refusal when a path the policy read names another file after someone was asked (workspace-paths.ts). */
function movedSinceDecided({ workspace }: Pick<DispatchEnv, 'workspace'>, { tool, input }: Ready): Failed | undefined {
  if (workspace === undefined || tool.pathFields.length === 0) return undefined;
  const moved = movedPath(input, tool.pathFields, workspace);
  if (!moved) return undefined;
  return {
    ok: false,
    code: 'denied',
    content: `Call to "${tool.info.name}" not run: "${moved.was}" now names "${moved.now}" (a symlink on its way changed while the call waited for approval). Call again for the policy to decide on the path as it is now.`,
  };
}

/**
 * Writes the decision's audit line (with the input, capped) and passes the verdict on. The call's
 * own decision (not an authorize question) gives the call its input, whose hash its `call` line
 * carries.
 */
function audited(call: Call, { tool, decision, canonical }: Ready, verdict: Verdict, source?: 'authorize'): Verdict {
  if (!call.env.audit.enabled) return verdict;
  const input = new AuditInput(canonical(), call.env.auditInputCap);
  if (!source) call.auditInput = input;
  call.env.audit.write(
    decisionEntry({
      callId: call.id,
      sessionId: call.options.sessionId,
      caller: call.options.caller?.name,
      plugin: tool.plugin.name,
      tool: tool.info.name,
      input,
      decision: decision.decision,
      rule: decision.rule?.id,
      reason: decision.reason,
      answer: verdict.answer,
      answeredBy: verdict.answeredBy,
      approvalMs: verdict.approvalMs === undefined ? undefined : round(verdict.approvalMs),
      source,
    }),
  );
  return verdict;
}
