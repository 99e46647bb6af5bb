/**
 * Anthropic's Messages API (`POST /v1/messages`, streamed). Wire rules kept here (docs/agent.md
 * lists the providers): tool results go back as `tool_result` blocks in the user
 * message right after the `tool_use` turn, all of them, first, a result's images and PDFs inside
 * its block (`image` / `document` blocks, base64); roles alternate, so a prompt typed
 * after a turn's results joins that same user message; a `tool_use` whose input the model garbled
 * is replayed with `{}` rather than the garbled text.
 *
 * Prompt caching: every request marks three cache breakpoints (the API allows four): the last tool
 * (so all tool definitions), the system prompt, and the last block of the conversation. A loop
 * sends the whole conversation each turn, so the next turn reads all of it but its newest messages
 * from the cache, at a tenth of the input price. Prefixes shorter than the model's minimum (1,024
 * tokens for most) are simply not cached; nothing is billed for trying.
 */
import {
  outputLimit,
  ProviderError,
  type AssistantMessage,
  type CompleteOptions,
  type Message,
  type ModelRequest,
  type ModelResponse,
  type Provider,
  type StopReason,
  type ToolCall,
  type ToolResult,
  tokenCount,
  type Usage,
} from '../messages.ts';
import { modelParts } from '../blocks.ts';
import { httpSettingsOf, postForEvents, pricingFor, type ProviderOptions } from './http.ts';
import { streamIndex, turnSize } from './stream-limits.ts';

export interface AnthropicOptions extends ProviderOptions {
  /** Default: `ANTHROPIC_API_KEY`. */
  apiKey?: string;
  /** Default: `ANTHROPIC_BASE_URL`, else `https://api.anthropic.com`. */
  baseUrl?: string;
}

const ANTHROPIC_DEFAULT_MODEL = 'claude-sonnet-4-5';
const API_VERSION = '2023-06-01';

const EPHEMERAL = { type: 'ephemeral' } as const;
type CacheControl = { cache_control?: typeof EPHEMERAL };
type ResultBlock =
  | { type: 'text'; text: string }
  | { type: 'image'; source: { type: 'base64'; media_type: string; data: string } }
  | { type: 'document'; source: { type: 'base64'; media_type: 'application/pdf'; data: string } };
type Block = CacheControl &
  (
    | { type: 'text'; text: string }
    | { type: 'tool_use'; id: string; name: string; input: unknown }
    | { type: 'tool_result'; tool_use_id: string; content: string | ResultBlock[]; is_error?: boolean }
  );
type WireMessage = { role: 'user' | 'assistant'; content: Block[] };

export function anthropicProvider(options: AnthropicOptions = {}): Provider {
  const apiKey = options.apiKey ?? process.env.ANTHROPIC_API_KEY;
  if (!apiKey) throw new ProviderError('no_api_key', 'The anthropic provider needs an API key: set ANTHROPIC_API_KEY.');
  const baseUrl = (options.baseUrl ?? process.env.ANTHROPIC_BASE_URL ?? 'https://api.anthropic.com').replace(
    /\/+$/,
    '',
  );
  const model = options.model ?? ANTHROPIC_DEFAULT_MODEL;
  const http = httpSettingsOf(options);
  const headers = { 'x-api-key': apiKey, 'anthropic-version': API_VERSION };

  return {
    name: 'anthropic',
    model,
    ...pricingFor(model, options),
    async complete(request: ModelRequest, { signal, onText }: CompleteOptions = {}): Promise<ModelResponse> {
      const messages = toWire(request.messages);
      const lastBlock = messages.at(-1)?.content.at(-1);
      // An empty text block may not carry a breakpoint (and the API refuses it anyway).
      if (lastBlock && !(lastBlock.type === 'text' && !lastBlock.text)) lastBlock.cache_control = EPHEMERAL;
      const body = {
        model,
        max_tokens: outputLimit(request, options.maxTokens ?? 8192),
        stream: true,
        ...(request.system ? { system: [{ type: 'text', text: request.system, cache_control: EPHEMERAL }] } : {}),
        messages,
        ...(request.tools.length
          ? {
              tools: request.tools.map((t, i, all) => ({
                name: t.name,
                description: t.description,
                input_schema: t.inputSchema,
                ...(i === all.length - 1 ? { cache_control: EPHEMERAL } : {}),
              })),
            }
          : {}),
      };
      const events = await postForEvents('the Anthropic API', `${baseUrl}/v1/messages`, headers, body, http, signal);
      return readStream(events, onText);
    },
  };
}

function toWire(messages: readonly Message[]): WireMessage[] {
  const wire: WireMessage[] = [];
  const push = (role: WireMessage['role'], content: Block[]) => {
    const last = wire.at(-1);
    if (last?.role === role) last.content.push(...content);
    else wire.push({ role, content });
  };
  for (const m of messages) {
    if (m.role === 'user') push('user', [{ type: 'text', text: m.content }]);
    else if (m.role === 'tool') {
      push(
        'user',
        m.results.map((r) => ({
          type: 'tool_result',
          tool_use_id: r.callId,
          content: resultContent(r),
          ...(r.isError ? { is_error: true } : {}),
        })),
      );
    } else {
      push('assistant', [
        ...(m.text ? [{ type: 'text' as const, text: m.text }] : []),
        ...m.toolCalls.map((c) => ({
          type: 'tool_use' as const,
          id: c.id,
          name: c.name,
          input: inputObject(c.arguments),
        })),
      ]);
    }
  }
  return wire;
}

/**
 * A result with blocks goes as blocks (`modelParts`): images (the types the API takes) and PDFs as
 * themselves, everything else as text.
 */
function resultContent(r: ToolResult): string | ResultBlock[] {
  if (!r.blocks?.length) return r.content;
  const content = modelParts(r.blocks).map(
    (part): ResultBlock =>
      part.kind === 'image'
        ? { type: 'image', source: { type: 'base64', media_type: part.mimeType, data: part.data } }
        : part.kind === 'pdf'
          ? { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: part.data } }
          : { type: 'text', text: part.text },
  );
  return content.length ? content : r.content;
}

function inputObject(text: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(text);
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch {
    // garbled input: replaying it would poison every later request
  }
  return {};
}

interface StreamEvent {
  type: string;
  index?: number;
  message?: { usage?: WireUsage };
  content_block?: { type: string; text?: string; id?: string; name?: string; input?: unknown };
  delta?: { type?: string; text?: string; partial_json?: string; stop_reason?: string | null };
  usage?: WireUsage;
  error?: { type?: string; message?: string };
}
type WireUsage = {
  input_tokens?: number | null;
  output_tokens?: number | null;
  cache_read_input_tokens?: number | null;
  cache_creation_input_tokens?: number | null;
};

async function readStream(
  events: AsyncIterable<{ event: string; data: string }>,
  onText?: (delta: string) => void,
): Promise<ModelResponse> {
  const blocks: ({ kind: 'text'; text: string } | { kind: 'call'; call: ToolCall; json: string })[] = [];
  const who = 'The Anthropic API';
  const usage: Usage = { inputTokens: 0, outputTokens: 0 };
  const count = turnSize(who);
  let stopReason: StopReason = 'other';
  let finished = false;
  for await (const { data } of events) {
    let e: StreamEvent;
    try {
      e = JSON.parse(data) as StreamEvent;
    } catch {
      throw new ProviderError(
        'bad_response',
        `The Anthropic API sent an event that is not JSON: ${data.slice(0, 200)}`,
      );
    }
    switch (e.type) {
      case 'message_start':
        addWireUsage(usage, e.message?.usage);
        break;
      case 'content_block_start': {
        const b = e.content_block;
        const at = streamIndex(who, e.index ?? blocks.length);
        // The whole event: a block keeps its text, or its call's id, name and input.
        count(data);
        if (b?.type === 'text') blocks[at] = { kind: 'text', text: b.text ?? '' };
        else if (b?.type === 'tool_use') {
          const given =
            b.input && typeof b.input === 'object' && Object.keys(b.input).length ? JSON.stringify(b.input) : '';
          blocks[at] = {
            kind: 'call',
            call: { id: String(b.id), name: String(b.name), arguments: '' },
            json: given,
          };
        }
        break;
      }
      case 'content_block_delta': {
        // A delta without an index belongs to no block.
        const block = e.index == null ? undefined : blocks[streamIndex(who, e.index)];
        if (block?.kind === 'text' && e.delta?.type === 'text_delta' && e.delta.text) {
          count(e.delta.text);
          block.text += e.delta.text;
          onText?.(e.delta.text);
        } else if (block?.kind === 'call' && e.delta?.type === 'input_json_delta') {
          count(e.delta.partial_json);
          block.json += e.delta.partial_json ?? '';
        }
        break;
      }
      case 'message_delta':
        if (e.delta?.stop_reason) stopReason = stopReasonOf(e.delta.stop_reason);
        addWireUsage(usage, e.usage);
        break;
      case 'message_stop':
        finished = true;
        break;
      case 'error':
        throw new ProviderError(
          'http_error',
          `The Anthropic API failed mid-stream: ${e.error?.type ?? 'error'}: ${e.error?.message ?? data}`,
        );
    }
  }
  if (!finished)
    throw new ProviderError(
      'stream_incomplete',
      'The Anthropic API stream ended before message_stop: the turn is incomplete',
    );
  const message: AssistantMessage = { role: 'assistant', text: '', toolCalls: [] };
  for (const b of blocks) {
    if (!b) continue;
    if (b.kind === 'text') message.text += b.text;
    else message.toolCalls.push({ ...b.call, arguments: b.json || '{}' });
  }
  return { message, stopReason, usage };
}

/**
 * The counts in `message_start`, then in `message_delta`: each is the running total of the message
 * so far, so a later count replaces an earlier one. `input_tokens` already leaves out the cached
 * tokens, which the API counts apart.
 */
function addWireUsage(usage: Usage, wire: WireUsage | undefined): void {
  if (!wire) return;
  if (wire.input_tokens != null) usage.inputTokens = tokenCount(wire.input_tokens);
  if (wire.output_tokens != null) usage.outputTokens = tokenCount(wire.output_tokens);
  if (wire.cache_read_input_tokens != null) usage.cacheReadTokens = tokenCount(wire.cache_read_input_tokens);
  if (wire.cache_creation_input_tokens != null) usage.cacheWriteTokens = tokenCount(wire.cache_creation_input_tokens);
}

function stopReasonOf(reason: string): StopReason {
  switch (reason) {
    case 'end_turn':
    case 'stop_sequence':
      return 'end_turn';
    case 'tool_use':
      return 'tool_use';
    case 'max_tokens':
    case 'model_context_window_exceeded':
      return 'max_tokens';
    case 'refusal':
      return 'refusal';
    default:
      return 'other';
  }
}
