/**
 * OpenAI Chat Completions (`POST {baseUrl}/chat/completions`, streamed): OpenAI itself and every
 * server that speaks it (Ollama's `/v1`, vLLM, llama.cpp, LM Studio, OpenRouter). Wire rules kept
 * here (docs/agent.md lists the providers): each result is its own `role: "tool"` message carrying
 * the `tool_call_id` it answers (an adapter that drops them never completes a tool loop), and is
 * text only: a turn's images follow all its tool messages in one user message (`image_url` parts,
 * `data:` URLs); `arguments` is a string the model wrote, sent back exactly as written; streamed
 * call fragments are assembled by `index`.
 *
 * The output limit travels as `max_completion_tokens` to OpenAI (its `max_tokens` is deprecated and
 * refused by reasoning models) and as `max_tokens` elsewhere, the one field every compatible server
 * takes; `maxTokensField` overrides the choice.
 */
import {
  outputLimit,
  ProviderError,
  type CompleteOptions,
  type Message,
  type ModelRequest,
  type ModelResponse,
  type Provider,
  type StopReason,
  tokenCount,
  type Usage,
} from '../messages.ts';
import { imageOf } from '../blocks.ts';
import { httpSettingsOf, postForEvents, pricingFor, type ProviderOptions, withoutCredentials } from './http.ts';
import { streamIndex, turnSize } from './stream-limits.ts';

export interface OpenAIOptions extends ProviderOptions {
  /** Default: `OPENAI_API_KEY`. Optional when a base URL is given (a local server needs none). */
  apiKey?: string;
  /** Default: `OPENAI_BASE_URL`, else `https://api.openai.com/v1`. Ollama: `http://localhost:11434/v1`. */
  baseUrl?: string;
  /** Default: `OPENAI_MODEL`, else `gpt-4.1`. */
  model?: string;
  /** The field that carries `maxTokens`. Default: `maxTokensFieldFor(baseUrl)`. */
  maxTokensField?: MaxTokensField;
}

const OPENAI_DEFAULT_MODEL = 'gpt-4.1';
export const OPENAI_BASE_URL = 'https://api.openai.com/v1';

export type MaxTokensField = 'max_completion_tokens' | 'max_tokens';

/** `max_completion_tokens` for OpenAI itself (its own host, or Azure OpenAI's), `max_tokens` for any other server. */
export function maxTokensFieldFor(baseUrl: string): MaxTokensField {
  let host: string;
  try {
    host = new URL(baseUrl).hostname;
  } catch {
    return 'max_tokens';
  }
  return host === 'api.openai.com' || host.endsWith('.openai.azure.com') ? 'max_completion_tokens' : 'max_tokens';
}

type UserPart = { type: 'text'; text: string } | { type: 'image_url'; image_url: { url: string } };
type WireMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string | UserPart[] }
  | {
      role: 'assistant';
      content: string | null;
      tool_calls?: { id: string; type: 'function'; function: { name: string; arguments: string } }[];
    }
  | { role: 'tool'; tool_call_id: string; content: string };

/**
 * Usage as both OpenAI APIs count it: the input count includes the cached tokens, which are taken
 * out to carry their own price. Each count is the server's, checked (`tokenCount`).
 */
export function openaiUsage(input: unknown, output: unknown, cachedGiven: unknown): Usage {
  const cached = cachedGiven == null ? undefined : tokenCount(cachedGiven);
  return {
    inputTokens: Math.max(0, tokenCount(input) - (cached ?? 0)),
    outputTokens: tokenCount(output),
    ...(cached === undefined ? {} : { cacheReadTokens: cached }),
  };
}

/**
 * What both OpenAI providers resolve the same way: the key (none needed with a base URL: a local
 * server), the base URL, the model, and the request's headers. `needs` ends the missing-key message.
 */
export function openaiEndpoint(
  name: string,
  options: Pick<OpenAIOptions, 'apiKey' | 'baseUrl' | 'model'>,
  needs: string,
): { baseUrl: string; model: string; headers: Record<string, string> } {
  const givenBase = options.baseUrl ?? process.env.OPENAI_BASE_URL;
  const apiKey = options.apiKey ?? process.env.OPENAI_API_KEY;
  if (!apiKey && !givenBase)
    throw new ProviderError(
      'no_api_key',
      `The ${name} provider needs OPENAI_API_KEY, or OPENAI_BASE_URL for ${needs}.`,
    );
  return {
    baseUrl: (givenBase ?? OPENAI_BASE_URL).replace(/\/+$/, ''),
    model: options.model ?? process.env.OPENAI_MODEL ?? OPENAI_DEFAULT_MODEL,
    headers: apiKey ? { authorization: `Bearer ${apiKey}` } : {},
  };
}

export function openaiProvider(options: OpenAIOptions = {}): Provider {
  const { baseUrl, model, headers } = openaiEndpoint(
    'openai',
    options,
    'a local server (e.g. http://localhost:11434/v1 for Ollama)',
  );
  const http = httpSettingsOf(options);
  const maxTokensField = options.maxTokensField ?? maxTokensFieldFor(baseUrl);

  return {
    name: 'openai',
    model,
    ...pricingFor(model, options),
    async complete(request: ModelRequest, { signal, onText }: CompleteOptions = {}): Promise<ModelResponse> {
      const limit = outputLimit(request, options.maxTokens);
      const body = {
        model,
        stream: true,
        stream_options: { include_usage: true },
        ...(limit ? { [maxTokensField]: limit } : {}),
        messages: toWire(request.system, request.messages),
        ...(request.tools.length
          ? {
              tools: request.tools.map((t) => ({
                type: 'function',
                function: { name: t.name, description: t.description, parameters: t.inputSchema },
              })),
            }
          : {}),
      };
      const events = await postForEvents(
        `the OpenAI-compatible API at ${withoutCredentials(baseUrl)}`,
        `${baseUrl}/chat/completions`,
        headers,
        body,
        http,
        signal,
      );
      return readStream(events, onText);
    },
  };
}

function toWire(system: string | undefined, messages: readonly Message[]): WireMessage[] {
  const wire: WireMessage[] = system ? [{ role: 'system', content: system }] : [];
  for (const m of messages) {
    if (m.role === 'user') wire.push({ role: 'user', content: m.content });
    else if (m.role === 'tool') {
      // A tool message is text only, and the tool messages must follow their assistant message
      // directly: the turn's images go after all of them, in one user message.
      const images: UserPart[] = [];
      for (const r of m.results) {
        const own = (r.blocks ?? []).flatMap((b) => {
          const image = imageOf(b);
          return image
            ? [{ type: 'image_url' as const, image_url: { url: `data:${image.mimeType};base64,${image.data}` } }]
            : [];
        });
        if (own.length)
          images.push({ type: 'text', text: `The images of the result of ${r.name} (${r.callId}):` }, ...own);
        const content = own.length
          ? `${r.content}\n[${own.length} image(s) of this result follow in a user message]`
          : r.content;
        wire.push({ role: 'tool', tool_call_id: r.callId, content });
      }
      if (images.length) wire.push({ role: 'user', content: images });
    } else {
      wire.push({
        role: 'assistant',
        content: m.text || null,
        ...(m.toolCalls.length
          ? {
              tool_calls: m.toolCalls.map((c) => ({
                id: c.id,
                type: 'function' as const,
                function: { name: c.name, arguments: c.arguments },
              })),
            }
          : {}),
      });
    }
  }
  return wire;
}

interface Chunk {
  choices?: {
    delta?: {
      content?: string | null;
      tool_calls?: { index?: number; id?: string; function?: { name?: string; arguments?: string } }[];
    };
    finish_reason?: string | null;
  }[];
  usage?: {
    prompt_tokens?: number;
    completion_tokens?: number;
    prompt_tokens_details?: { cached_tokens?: number | null } | null;
  } | null;
  error?: { message?: string };
}

async function readStream(
  events: AsyncIterable<{ data: string }>,
  onText?: (delta: string) => void,
): Promise<ModelResponse> {
  const who = 'The OpenAI-compatible API';
  let text = '';
  const calls: { id: string; name: string; arguments: string }[] = [];
  const usage: Usage = { inputTokens: 0, outputTokens: 0 };
  const count = turnSize(who);
  let finish: string | undefined;
  for await (const { data } of events) {
    if (data.trim() === '[DONE]') break;
    let chunk: Chunk;
    try {
      chunk = JSON.parse(data) as Chunk;
    } catch {
      throw new ProviderError(
        'bad_response',
        `The OpenAI-compatible API sent a chunk that is not JSON: ${data.slice(0, 200)}`,
      );
    }
    if (chunk.error)
      throw new ProviderError(
        'http_error',
        `The OpenAI-compatible API failed mid-stream: ${chunk.error.message ?? data}`,
      );
    if (chunk.usage)
      Object.assign(
        usage,
        openaiUsage(
          chunk.usage.prompt_tokens,
          chunk.usage.completion_tokens,
          chunk.usage.prompt_tokens_details?.cached_tokens,
        ),
      );
    const choice = chunk.choices?.[0];
    if (!choice) continue;
    if (choice.delta?.content) {
      count(choice.delta.content);
      text += choice.delta.content;
      onText?.(choice.delta.content);
    }
    for (const fragment of choice.delta?.tool_calls ?? []) {
      const index = streamIndex(who, fragment.index ?? calls.length);
      const call = calls[index] ?? { id: '', name: '', arguments: '' };
      calls[index] = call;
      count(fragment.id);
      count(fragment.function?.name);
      count(fragment.function?.arguments);
      // Text whatever JSON type came, as the other providers take them: the id goes to the audit and back to the server.
      if (fragment.id) call.id = String(fragment.id);
      if (fragment.function?.name) call.name += String(fragment.function.name);
      if (fragment.function?.arguments) call.arguments += String(fragment.function.arguments);
    }
    if (choice.finish_reason) finish = choice.finish_reason;
  }
  if (finish === undefined)
    throw new ProviderError(
      'stream_incomplete',
      'The OpenAI-compatible API stream ended without a finish_reason: the turn is incomplete',
    );
  // Some servers never send an id; the results still need one to point at.
  const toolCalls = calls.filter(Boolean).map((c, i) => ({ ...c, id: c.id || `call_${i}` }));
  return {
    message: { role: 'assistant', text, toolCalls },
    stopReason: stopReasonOf(finish, toolCalls.length > 0),
    usage,
  };
}

function stopReasonOf(finish: string, hasCalls: boolean): StopReason {
  switch (finish) {
    case 'length':
      return 'max_tokens';
    case 'content_filter':
      return 'refusal';
    case 'tool_calls':
    case 'function_call':
      return 'tool_use';
    // Ollama-style servers may say `stop` although the turn holds calls.
    case 'stop':
      return hasCalls ? 'tool_use' : 'end_turn';
    default:
      return hasCalls ? 'tool_use' : 'other';
  }
}
