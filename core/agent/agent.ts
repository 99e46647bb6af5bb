/**
 * The agent loop: prompt → model → the turn's tool calls, run concurrently through the host's
 * pipeline → their results, in call order, in one message → model → … until the model answers
 * without calls, or a bound (maxTurns, repeated failures, the output limit, abort) ends the run.
 *
 * Everything that goes wrong with a call (unknown tool, bad JSON, invalid input, denial, timeout,
 * crash) is already an error result from `host.call`, which never throws; the model reads it and
 * may correct itself. Model failures end the run as a value (`stopReason: 'error'`), never a throw.
 * The conversation stays valid for the next `run()` whatever happens: every call recorded in it has
 * its result, and a turn cut off by the output limit keeps its text but not its (partial) calls.
 *
 * Events, in order, per turn: `turn_start`, `text_delta`…, `text`?, `tool_call` (each call, in
 * call order), `tool_progress`…, `tool_result` (as each call finishes), `turn_end` (the turn's
 * tokens, and the agent's running total); `error` when the run stops on a failure.
 */
import { messageOf } from '../errors.ts';
import type { Host } from '../host.ts';
import { activeTracer, type Span, SpanKind, SpanStatusCode, type Tracer, withSpan } from '../tracing.ts';
import type { CallResult, ElicitHandler, Progress, SampleHandler, ToolInfo } from '../types.ts';
import {
  addUsage,
  ProviderError,
  type AssistantMessage,
  type Message,
  type ModelResponse,
  type Provider,
  type StopReason,
  type ToolCall,
  type ToolResult,
  type Usage,
} from './messages.ts';
import { costOf } from './pricing.ts';
import { projectTools, type ToolSet } from './tool-specs.ts';

/**
 * What the loop needs of a host: its tools and its call pipeline, and when it has one, a way to
 * wait for the audit lines of the calls made (a `Host` has it; a stand-in of an embedder's may not).
 */
export type AgentHost = Pick<Host, 'tools' | 'call'> & Partial<Pick<Host, 'auditWritten'>>;

export interface AgentOptions {
  host: AgentHost;
  provider: Provider;
  system?: string;
  /** Model requests per run. Default 32. */
  maxTurns?: number;
  /** The same call (tool and input) failing this many times in a run ends the run. Default 3. */
  maxRepeatedFailures?: number;
  /** Tags every call (audit log, `ctx.sessionId`). Default: a random UUID per agent. */
  sessionId?: string;
  /** The conversation to carry on (a saved session): it must be valid, every call with its results. */
  messages?: readonly Message[];
  /** Puts the tools' `ctx.elicit` questions to the user (the REPL's terminal form). Without it they throw. */
  elicit?: ElicitHandler;
}

export interface RunOptions {
  /** Cancels the model request and every call in flight; the run then ends `aborted`. */
  signal?: AbortSignal;
  /** Contract: must not throw (a throw is logged by nobody and ignored). */
  onEvent?: (event: AgentEvent) => void;
}

/** Why a run ended. */
export const RUN_STOP_REASONS = [
  'end_turn',
  'refusal',
  'max_turns',
  'max_tokens',
  'repeated_failure',
  'aborted',
  'error',
] as const;
export type RunStopReason = (typeof RUN_STOP_REASONS)[number];

/** Why a run ended with an error, beside the provider's codes; documented in docs/errors.md. */
export const AGENT_ERROR_CODES = ['max_turns', 'max_tokens', 'repeated_failure', 'provider'] as const;

export interface AgentError {
  code: (typeof AGENT_ERROR_CODES)[number] | ProviderError['code'];
  message: string;
}

export interface RunResult {
  /** The model's last text: its answer when `stopReason` is `end_turn`. */
  text: string;
  stopReason: RunStopReason;
  /** Model requests made. */
  turns: number;
  toolCalls: number;
  /** Summed over the run's model requests. */
  usage: Usage;
  /** What `usage` cost, in US dollars, when the model's price is known (`provider.pricing`). */
  costUsd?: number;
  error?: AgentError;
}

/** Tokens, and what they cost in US dollars when the model's price is known. */
export interface UsageReport {
  usage: Usage;
  costUsd?: number;
}

export type AgentEvent =
  | { type: 'turn_start'; turn: number }
  | { type: 'text_delta'; text: string }
  | { type: 'text'; text: string }
  | { type: 'tool_call'; call: ToolCall; tool: string }
  | { type: 'tool_progress'; call: ToolCall; progress: Progress }
  | { type: 'tool_result'; call: ToolCall; result: CallResult }
  /** `usage`/`costUsd`: this turn's model request; `session`: every request of this agent so far, across runs. */
  | { type: 'turn_end'; turn: number; stopReason: StopReason; usage: Usage; costUsd?: number; session: UsageReport }
  | { type: 'error'; error: AgentError };

/** The longest model call id the audit keeps as a call's id. */
const MAX_AUDITED_CALL_ID = 256;

/** The model's stop reasons in MCP's words, for `ctx.sample`'s answer. */
const SAMPLE_STOP_REASON: Partial<Record<StopReason, string>> = { end_turn: 'endTurn', max_tokens: 'maxTokens' };

export class Agent {
  readonly provider: Provider;
  readonly sessionId: string;
  private readonly host: AgentHost;
  private readonly system: string | undefined;
  private readonly maxTurns: number;
  private readonly maxRepeatedFailures: number;
  private readonly history: Message[] = [];
  private readonly spent: Usage = { inputTokens: 0, outputTokens: 0 };
  private tools: { from: readonly ToolInfo[]; set: ToolSet } | undefined;
  private running = false;
  /** Set when an OpenTelemetry SDK was registered as the agent was made: each model request is then a span. */
  private readonly tracer: Tracer | undefined = activeTracer();
  private readonly elicit: ElicitHandler | undefined;
  /** The usage of the run in progress: a tool's `ctx.sample` adds its model request to it. */
  private runUsage: Usage | undefined;
  /** The model's call ids of this conversation, each audited once (`auditedId`). */
  private readonly callIds = new Set<string>();

  constructor(options: AgentOptions) {
    this.host = options.host;
    this.provider = options.provider;
    this.system = options.system;
    this.maxTurns = options.maxTurns ?? 32;
    this.maxRepeatedFailures = options.maxRepeatedFailures ?? 3;
    this.sessionId = options.sessionId ?? crypto.randomUUID();
    if (options.messages) this.history.push(...options.messages);
    for (const message of this.history) if (message.role === 'assistant') this.auditedIds(message);
    this.elicit = options.elicit;
    this.toolSet();
  }

  /** The conversation so far, across runs. */
  get messages(): readonly Message[] {
    return this.history;
  }

  /** Tokens (and their cost, when the model's price is known) of every model request so far, across runs. */
  get usage(): UsageReport {
    return this.report(this.spent);
  }

  /** Sends `prompt` and runs turns until the model answers or a bound ends the run. Throws only when a run is already going. */
  async run(prompt: string, { signal, onEvent }: RunOptions = {}): Promise<RunResult> {
    if (this.running)
      throw new Error('Agent.run() is already running: wait for it to finish (one conversation, one run at a time).');
    this.running = true;
    const emit = (event: AgentEvent) => {
      try {
        onEvent?.(event);
      } catch {
        // an observer's bug must not break the conversation's invariants
      }
    };
    const usage: Usage = { inputTokens: 0, outputTokens: 0 };
    this.runUsage = usage;
    const failures = new Map<string, number>();
    let text = '';
    let turns = 0;
    let toolCalls = 0;
    const end = (stopReason: RunStopReason, error?: AgentError): RunResult => {
      if (error) emit({ type: 'error', error });
      return { text, stopReason, turns, toolCalls, ...this.report(usage), ...(error ? { error } : {}) };
    };

    try {
      this.history.push({ role: 'user', content: prompt });
      for (;;) {
        if (signal?.aborted) return end('aborted');
        if (turns >= this.maxTurns) {
          return end('max_turns', {
            code: 'max_turns',
            message: `Stopped after ${turns} model turns (agent.maxTurns); the task is unfinished.`,
          });
        }
        const turn = ++turns;
        emit({ type: 'turn_start', turn });

        const tools = this.toolSet();
        const span = this.tracer && this.chatSpan(this.tracer);
        let response: ModelResponse;
        try {
          response = await this.provider.complete(
            { ...(this.system ? { system: this.system } : {}), messages: this.history, tools: tools.specs },
            { ...(signal ? { signal } : {}), onText: (delta) => emit({ type: 'text_delta', text: delta }) },
          );
        } catch (error) {
          const code = signal?.aborted ? 'aborted' : error instanceof ProviderError ? error.code : 'provider';
          if (span) endChatSpan(span, code);
          if (signal?.aborted) return end('aborted');
          return end('error', { code, message: messageOf(error) });
        }
        if (span) endChatSpan(span, response);
        addUsage(usage, response.usage);
        addUsage(this.spent, response.usage);
        const turnEnd: AgentEvent = {
          type: 'turn_end',
          turn,
          stopReason: response.stopReason,
          ...this.report(response.usage),
          session: this.usage,
        };
        const { message, stopReason } = response;
        text = message.text;
        if (text) emit({ type: 'text', text });

        if (stopReason === 'max_tokens') {
          // The last call of a cut-off turn may be partial: none of them runs, none is recorded.
          if (text) this.history.push({ role: 'assistant', text, toolCalls: [] });
          emit(turnEnd);
          const dropped = message.toolCalls.length
            ? ` ${message.toolCalls.length} tool call(s) in it were not run.`
            : '';
          return end('max_tokens', {
            code: 'max_tokens',
            message: `The model's turn was cut off by its output token limit (provider.maxTokens).${dropped}`,
          });
        }
        if (!message.toolCalls.length) {
          if (text) this.history.push(message);
          emit(turnEnd);
          return end(stopReason === 'refusal' ? 'refusal' : 'end_turn');
        }

        this.history.push(message);
        toolCalls += message.toolCalls.length;
        // The turn's calls are children of the model request that asked for them.
        const running = () => this.runCalls(message, tools, failures, signal, emit);
        const { results, repeated } = await (span ? withSpan(span, running) : running());
        this.history.push({ role: 'tool', results });
        emit(turnEnd);
        if (signal?.aborted) return end('aborted');
        if (repeated) {
          return end('repeated_failure', {
            code: 'repeated_failure',
            message: `The model made the same failing call to "${repeated.name}" ${this.maxRepeatedFailures} times (agent.maxRepeatedFailures); stopped. Last error: ${repeated.content}`,
          });
        }
      }
    } finally {
      this.running = false;
      this.runUsage = undefined;
    }
  }

  /**
   * A tool's `ctx.sample`, answered by this agent's own model: one request, no tools, the tool's
   * system prompt (not the agent's), its tokens counted in the run's usage. The providers take text;
   * an image in the request is refused with a clear error.
   */
  private readonly sample: SampleHandler = async (request, { signal }) => {
    const messages: Message[] = request.messages.map(({ role, content }, i) => {
      if (content.type !== 'text')
        throw new Error(`ctx.sample: messages[${i}] is ${content.type} content; the agent's model is sent text only`);
      return role === 'user' ? { role, content: content.text } : { role, text: content.text, toolCalls: [] };
    });
    const response = await this.provider.complete(
      {
        ...(request.systemPrompt ? { system: request.systemPrompt } : {}),
        messages,
        tools: [],
        maxTokens: request.maxTokens,
      },
      { signal },
    );
    addUsage(this.spent, response.usage);
    if (this.runUsage) addUsage(this.runUsage, response.usage);
    return {
      role: 'assistant',
      content: { type: 'text', text: response.message.text },
      model: this.provider.model,
      stopReason: SAMPLE_STOP_REASON[response.stopReason] ?? response.stopReason,
    };
  };

  /**
   * Runs every call of one turn at once; the results come back in call order, one per call, with
   * the first result whose exact call has now failed `maxRepeatedFailures` times.
   */
  private async runCalls(
    message: AssistantMessage,
    tools: ToolSet,
    failures: Map<string, number>,
    signal: AbortSignal | undefined,
    emit: (event: AgentEvent) => void,
  ): Promise<{ results: ToolResult[]; repeated?: ToolResult }> {
    for (const call of message.toolCalls) emit({ type: 'tool_call', call, tool: tools.hostName(call.name) });
    const repeatedIds = new Set<string>();
    const callIds = this.auditedIds(message);
    const results = await Promise.all(
      message.toolCalls.map(async (call, index): Promise<ToolResult> => {
        const callId = callIds[index];
        const result = await this.host.call(tools.hostName(call.name), call.arguments, {
          ...(callId === undefined ? {} : { callId }),
          sessionId: this.sessionId,
          onProgress: (progress) => emit({ type: 'tool_progress', call, progress }),
          sample: this.sample,
          ...(this.elicit ? { elicit: this.elicit } : {}),
          ...(signal ? { signal } : {}),
        });
        if (result.isError) {
          const key = `${call.name}\u0000${call.arguments}`;
          const count = (failures.get(key) ?? 0) + 1;
          failures.set(key, count);
          if (count >= this.maxRepeatedFailures) repeatedIds.add(call.id);
        }
        emit({ type: 'tool_result', call, result });
        return {
          callId: call.id,
          name: call.name,
          content: result.content,
          isError: result.isError,
          ...(result.code ? { code: result.code } : {}),
          ...(result.blocks?.length ? { blocks: result.blocks } : {}),
        };
      }),
    );
    // The results go to the model in the next request: like an MCP server's answers, none leaves
    // the host before its audit lines are in the file (docs/policy.md, "The audit trail").
    await this.host.auditWritten?.();
    const repeated = results.find((r) => repeatedIds.has(r.callId));
    return { results, ...(repeated ? { repeated } : {}) };
  }

  /** Starts `chat {model}`, a model request's span, with what the GenAI conventions want known at its start. */
  private chatSpan(tracer: Tracer): Span {
    const { name, model } = this.provider;
    return tracer.startSpan(`chat ${model}`, {
      kind: SpanKind.CLIENT,
      attributes: {
        'gen_ai.operation.name': 'chat',
        // The conventions name the API's flavour: both OpenAI APIs are `openai`.
        'gen_ai.provider.name': name.startsWith('openai') ? 'openai' : name,
        'gen_ai.request.model': model,
        'gen_ai.conversation.id': this.sessionId,
      },
    });
  }

  /** A copy of `usage`, priced when the model's price is known. */
  private report(usage: Usage): UsageReport {
    const { pricing } = this.provider;
    return { usage: { ...usage }, ...(pricing ? { costUsd: costOf(usage, pricing) } : {}) };
  }

  /**
   * The call id each of the message's tool calls is audited under: the model's own, the first time
   * this conversation sees it, or none (the host makes one) for an id it sent before, an empty one or
   * one over 256 characters. The audit ties a call's lines together by their id, and the model
   * chooses its ids: one on two calls would make either call's lines read as the other's.
   */
  private auditedIds(message: AssistantMessage): (string | undefined)[] {
    return message.toolCalls.map(({ id }) => {
      if (id === '' || id.length > MAX_AUDITED_CALL_ID || this.callIds.has(id)) return undefined;
      this.callIds.add(id);
      return id;
    });
  }

  /** The model's view of the host's tools, projected again only when the host's list changes. */
  private toolSet(): ToolSet {
    const from = this.host.tools();
    if (this.tools?.from !== from) this.tools = { from, set: projectTools(from) };
    return this.tools.set;
  }
}

/**
 * Ends a model request's span: its tokens and why the model stopped, or the provider's error code
 * (docs/errors.md) as `error.type`. The conventions count cached input tokens within the input tokens.
 */
function endChatSpan(span: Span, outcome: ModelResponse | string): void {
  if (typeof outcome === 'string') {
    span.setAttribute('error.type', outcome);
    span.setStatus({ code: SpanStatusCode.ERROR, message: outcome });
  } else {
    const { usage } = outcome;
    const cacheRead = usage.cacheReadTokens ?? 0;
    const cacheWrite = usage.cacheWriteTokens ?? 0;
    span.setAttributes({
      'gen_ai.usage.input_tokens': usage.inputTokens + cacheRead + cacheWrite,
      'gen_ai.usage.output_tokens': usage.outputTokens,
      'gen_ai.response.finish_reasons': [outcome.stopReason],
      ...(usage.cacheReadTokens === undefined ? {} : { 'gen_ai.usage.cache_read.input_tokens': cacheRead }),
      ...(usage.cacheWriteTokens === undefined ? {} : { 'gen_ai.usage.cache_creation.input_tokens': cacheWrite }),
    });
  }
  span.end();
}
