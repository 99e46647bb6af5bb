/**
 * The agent's provider-neutral vocabulary: the conversation, one model request and its answer, and
 * what every provider implements. Providers translate these to and from their wire formats; the
 * loop (agent.ts) never sees a wire format. A leaf: no run-time imports.
 */
import type { ContentBlock } from '../contract.ts';
import type { ResultCode } from '../errors.ts';

/** What the user said. */
export interface UserMessage {
  role: 'user';
  content: string;
}

/** One tool call as the model made it. */
export interface ToolCall {
  /** The provider's id (`toolu_…`, `call_…`): results are matched to calls by it. */
  id: string;
  /** The tool's name as the model knows it (its wire name: see tool-specs.ts). */
  name: string;
  /**
   * The input as JSON text, exactly as the model wrote it. OpenAI-compatible servers send a string
   * that may be malformed; Anthropic sends an object, kept here serialised. The host parses it
   * strictly, so a malformed input becomes an `invalid_json` result the model can correct.
   */
  arguments: string;
}

/** What the model said in one turn: text, then the calls it wants run. */
export interface AssistantMessage {
  role: 'assistant';
  text: string;
  toolCalls: ToolCall[];
}

/** The outcome of one call, as the model will see it. */
export interface ToolResult {
  callId: string;
  name: string;
  /** The result's text, every non-text block named in it: what a provider sends when it can send nothing else. */
  content: string;
  isError: boolean;
  code?: ResultCode;
  /**
   * The result as content blocks, when the tool returned blocks: each provider sends what its API
   * takes of them (docs/agent.md, "Rich results"). Absent from sessions saved before they existed.
   */
  blocks?: ContentBlock[];
}

/** The results of every call of one assistant turn, in call order, in one message. */
export interface ToolResultsMessage {
  role: 'tool';
  results: ToolResult[];
}

export type Message = UserMessage | AssistantMessage | ToolResultsMessage;

/** A tool as the model is told about it. */
export interface ToolSpec {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
}

/**
 * Token counts of one model response, or summed over several. The prompt the model read is
 * `inputTokens + cacheReadTokens + cacheWriteTokens`: each provider reports its input that way
 * (OpenAI counts cached tokens inside its prompt count; they are taken out), so each count has one
 * price. Cache counts only where the provider reports them.
 */
export interface Usage {
  /** Input tokens neither read from nor written to the prompt cache. */
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens?: number;
  /** Input tokens written to the prompt cache (Anthropic bills them above plain input). */
  cacheWriteTokens?: number;
}

/** What a model costs, in US dollars per million tokens. A missing cache price is the input price. */
export interface ModelPricing {
  input: number;
  output: number;
  cacheRead?: number;
  cacheWrite?: number;
}

/**
 * Why the model stopped: `end_turn` (it answered), `tool_use` (it wants calls run), `max_tokens`
 * (cut off by the output limit: any tool call in it may be partial), `refusal`, or `other`.
 */
export type StopReason = 'end_turn' | 'tool_use' | 'max_tokens' | 'refusal' | 'other';

export interface ModelRequest {
  system?: string;
  messages: readonly Message[];
  tools: readonly ToolSpec[];
  /** The most output tokens for this request (a tool's `ctx.sample`); the provider's own limit still applies. */
  maxTokens?: number;
}

export interface ModelResponse {
  message: AssistantMessage;
  stopReason: StopReason;
  usage: Usage;
}

export interface CompleteOptions {
  /** Cancels the request (and the stream being read). */
  signal?: AbortSignal;
  /** Text as it streams in. Contract: must not throw. */
  onText?: (delta: string) => void;
}

/**
 * A model API. Contract: `complete` either resolves with the whole turn or rejects with a
 * `ProviderError`; it never resolves with a turn whose stream was cut off.
 */
export interface Provider {
  /** `anthropic`, `openai`, `openai-responses`, `replay`: for messages and `--json`. */
  readonly name: string;
  readonly model: string;
  /** The model's price when known (config, or the built-in table): the agent reports costs with it. */
  readonly pricing?: ModelPricing;
  complete(request: ModelRequest, options?: CompleteOptions): Promise<ModelResponse>;
}

/** Why a model request failed; each is documented in docs/errors.md (a test keeps the two in step). */
export const PROVIDER_ERROR_CODES = [
  'no_api_key',
  'http_error',
  'rate_limited',
  'connection',
  'timeout',
  'stream_incomplete',
  'bad_response',
  'replay_exhausted',
  'aborted',
] as const;
export type ProviderErrorCode = (typeof PROVIDER_ERROR_CODES)[number];

/** A model request that failed after its retries. The message never holds an API key. */
export class ProviderError extends Error {
  override readonly name = 'ProviderError';
  readonly code: ProviderErrorCode;
  readonly status?: number;
  constructor(code: ProviderErrorCode, message: string, options: { status?: number; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    if (options.status !== undefined) this.status = options.status;
  }
}

/** The output limit of one request: the lower of the request's and the provider's, when either is set. */
export function outputLimit(request: ModelRequest, configured: number | undefined): number | undefined {
  if (request.maxTokens === undefined) return configured;
  return configured === undefined ? request.maxTokens : Math.min(request.maxTokens, configured);
}

/**
 * A token count as a server reported it: a safe non-negative integer, else 0. The counts are added
 * up over a session, priced, kept with it and shown: a string was joined to the totals as text
 * ("0" + "12"), and a saved session was read back only up to the run that held one.
 */
export function tokenCount(value: unknown): number {
  return Number.isSafeInteger(value) && (value as number) >= 0 ? (value as number) : 0;
}

export function addUsage(total: Usage, more: Usage): void {
  total.inputTokens += more.inputTokens;
  total.outputTokens += more.outputTokens;
  if (more.cacheReadTokens !== undefined) total.cacheReadTokens = (total.cacheReadTokens ?? 0) + more.cacheReadTokens;
  if (more.cacheWriteTokens !== undefined)
    total.cacheWriteTokens = (total.cacheWriteTokens ?? 0) + more.cacheWriteTokens;
}
