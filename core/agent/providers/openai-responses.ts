/**
 * OpenAI's Responses API (`POST {baseUrl}/responses`), streamed or not. Wire rules kept here
 * (docs/agent.md lists the providers): the conversation is a list of input items, where the
 * model's calls go back as `function_call` items and each result as a `function_call_output` item
 * carrying the `call_id` it answers, right after them (its `output` a list of `input_text`,
 * `input_image` and `input_file` parts when the result has blocks); `arguments` is the string the
 * model wrote, sent back exactly as written; tools are flat `{ type: 'function', name, parameters, strict }`,
 * with `strict: false` said out loud because the API's default is true, and strict mode refuses
 * any schema with an optional property. Requests are stateless (`store: false`): the whole
 * conversation goes each time, so nothing of it is kept on OpenAI's side.
 */
import { basename } from 'node:path';
import {
  outputLimit,
  ProviderError,
  type CompleteOptions,
  type Message,
  type ModelRequest,
  type ModelResponse,
  type Provider,
  type StopReason,
  type ToolCall,
  type ToolResult,
} from '../messages.ts';
import { modelParts } from '../blocks.ts';
import {
  httpSettingsOf,
  postForEvents,
  postForJson,
  pricingFor,
  type ProviderOptions,
  withoutCredentials,
} from './http.ts';
import { openaiEndpoint, openaiUsage } from './openai.ts';
import { streamIndex, turnSize } from './stream-limits.ts';

export interface OpenAIResponsesOptions extends ProviderOptions {
  /** Default: `OPENAI_API_KEY`. Optional when a base URL is given. */
  apiKey?: string;
  /** Default: `OPENAI_BASE_URL`, else `https://api.openai.com/v1`. */
  baseUrl?: string;
  /** Default: `OPENAI_MODEL`, else `gpt-4.1`. */
  model?: string;
  /** Default true; false asks for each answer as one JSON body (no text shows before the turn ends). */
  stream?: boolean;
}

type InputItem =
  | { role: 'user'; content: string }
  | { role: 'assistant'; content: string }
  | { type: 'function_call'; call_id: string; name: string; arguments: string }
  | { type: 'function_call_output'; call_id: string; output: string | OutputPart[] };

type OutputPart =
  | { type: 'input_text'; text: string }
  | { type: 'input_image'; image_url: string }
  | { type: 'input_file'; filename: string; file_data: string };

interface OutputItem {
  type: string;
  id?: string;
  call_id?: string;
  name?: string;
  arguments?: string;
  content?: { type: string; text?: string; refusal?: string }[];
}

interface WireResponse {
  status?: string;
  output?: OutputItem[];
  incomplete_details?: { reason?: string } | null;
  error?: { code?: string; message?: string } | null;
  usage?: {
    input_tokens?: number;
    output_tokens?: number;
    input_tokens_details?: { cached_tokens?: number | null } | null;
  } | null;
}

export function openaiResponsesProvider(options: OpenAIResponsesOptions = {}): Provider {
  const { baseUrl, model, headers } = openaiEndpoint(
    'openai-responses',
    options,
    'another server that speaks the Responses API',
  );
  const stream = options.stream ?? true;
  const http = httpSettingsOf(options);
  const who = `the Responses API at ${withoutCredentials(baseUrl)}`;

  return {
    name: 'openai-responses',
    model,
    ...pricingFor(model, options),
    async complete(request: ModelRequest, { signal, onText }: CompleteOptions = {}): Promise<ModelResponse> {
      const limit = outputLimit(request, options.maxTokens);
      const body = {
        model,
        stream,
        store: false,
        ...(request.system ? { instructions: request.system } : {}),
        ...(limit ? { max_output_tokens: limit } : {}),
        input: toWire(request.messages),
        ...(request.tools.length
          ? {
              tools: request.tools.map((t) => ({
                type: 'function',
                name: t.name,
                description: t.description,
                parameters: t.inputSchema,
                strict: false,
              })),
            }
          : {}),
      };
      const url = `${baseUrl}/responses`;
      if (!stream) {
        const response = (await postForJson(who, url, headers, body, http, signal)) as WireResponse;
        const answer = answerOf(response, []);
        if (answer.message.text) onText?.(answer.message.text);
        return answer;
      }
      return readStream(await postForEvents(who, url, headers, body, http, signal), onText);
    },
  };
}

function toWire(messages: readonly Message[]): InputItem[] {
  const items: InputItem[] = [];
  for (const m of messages) {
    if (m.role === 'user') items.push({ role: 'user', content: m.content });
    else if (m.role === 'tool')
      for (const r of m.results) items.push({ type: 'function_call_output', call_id: r.callId, output: outputOf(r) });
    else {
      if (m.text) items.push({ role: 'assistant', content: m.text });
      for (const c of m.toolCalls)
        items.push({ type: 'function_call', call_id: c.id, name: c.name, arguments: c.arguments });
    }
  }
  return items;
}

/** A result with blocks goes as a list (`modelParts`): images and PDFs as `data:` URLs, everything else as text. */
function outputOf(r: ToolResult): string | OutputPart[] {
  if (!r.blocks?.length) return r.content;
  const parts = modelParts(r.blocks).map(
    (part): OutputPart =>
      part.kind === 'image'
        ? { type: 'input_image', image_url: `data:${part.mimeType};base64,${part.data}` }
        : part.kind === 'pdf'
          ? {
              type: 'input_file',
              filename: basename(part.uri) || 'document.pdf',
              file_data: `data:application/pdf;base64,${part.data}`,
            }
          : { type: 'input_text', text: part.text },
  );
  return parts.length ? parts : r.content;
}

interface StreamEvent {
  type: string;
  output_index?: number;
  item?: OutputItem;
  delta?: string;
  response?: WireResponse;
  code?: string | null;
  message?: string;
}

/**
 * Text streams through `onText` as it comes; the turn itself is read from the terminal event's
 * response (`response.completed`, or `response.incomplete` when the output limit cut it), or, from
 * a server whose terminal event carries no output, from the items the stream built.
 */
async function readStream(
  events: AsyncIterable<{ data: string }>,
  onText?: (delta: string) => void,
): Promise<ModelResponse> {
  const who = 'The Responses API';
  const built: OutputItem[] = [];
  const count = turnSize(who);
  for await (const { data } of events) {
    let e: StreamEvent;
    try {
      e = JSON.parse(data) as StreamEvent;
    } catch {
      throw new ProviderError(
        'bad_response',
        `The Responses API sent an event that is not JSON: ${data.slice(0, 200)}`,
      );
    }
    switch (e.type) {
      case 'response.output_item.added':
      case 'response.output_item.done':
        // An item without an index has no place in the output.
        if (e.item && e.output_index != null) {
          count(data); // the whole event: the item is kept as it came
          built[streamIndex(who, e.output_index)] = { ...e.item };
        }
        break;
      case 'response.output_text.delta':
        count(e.delta);
        if (e.delta) onText?.(e.delta);
        break;
      case 'response.function_call_arguments.delta': {
        const item = e.output_index == null ? undefined : built[streamIndex(who, e.output_index)];
        if (item?.type === 'function_call') {
          count(e.delta);
          item.arguments = (item.arguments ?? '') + (e.delta ?? '');
        }
        break;
      }
      case 'response.completed':
      case 'response.incomplete':
        return answerOf(e.response ?? {}, built);
      case 'response.failed':
        throw new ProviderError(
          'http_error',
          `The Responses API failed: ${e.response?.error?.code ?? 'error'}: ${e.response?.error?.message ?? data}`,
        );
      case 'error':
        throw new ProviderError(
          'http_error',
          `The Responses API failed mid-stream: ${e.code ?? 'error'}: ${e.message ?? data}`,
        );
    }
  }
  throw new ProviderError(
    'stream_incomplete',
    'The Responses API stream ended before response.completed: the turn is incomplete',
  );
}

/** The turn in a finished response; `built` stands in for an output the response leaves out. */
function answerOf(response: WireResponse, built: readonly OutputItem[]): ModelResponse {
  if (response.status === 'failed')
    throw new ProviderError(
      'http_error',
      `The Responses API failed: ${response.error?.code ?? 'error'}: ${response.error?.message ?? 'no message'}`,
    );
  const output = response.output?.length ? response.output : built.filter(Boolean);
  let text = '';
  let refused = false;
  const toolCalls: ToolCall[] = [];
  for (const item of output) {
    if (item.type === 'message')
      for (const part of item.content ?? []) {
        if (part.type === 'output_text') text += part.text ?? '';
        else if (part.type === 'refusal') {
          text += part.refusal ?? '';
          refused = true;
        }
      }
    else if (item.type === 'function_call') {
      // The call_id pairs the result with its call; the item's own id (`fc_…`) is not that.
      toolCalls.push({ id: String(item.call_id ?? item.id), name: String(item.name), arguments: item.arguments ?? '' });
    }
  }
  return {
    message: { role: 'assistant', text, toolCalls },
    stopReason: stopReasonOf(response, refused, toolCalls.length > 0),
    usage: openaiUsage(
      response.usage?.input_tokens,
      response.usage?.output_tokens,
      response.usage?.input_tokens_details?.cached_tokens,
    ),
  };
}

function stopReasonOf(response: WireResponse, refused: boolean, hasCalls: boolean): StopReason {
  if (response.status === 'incomplete') {
    const reason = response.incomplete_details?.reason;
    return reason === 'max_output_tokens' ? 'max_tokens' : reason === 'content_filter' ? 'refusal' : 'other';
  }
  if (hasCalls) return 'tool_use';
  if (refused) return 'refusal';
  return response.status === 'completed' ? 'end_turn' : 'other';
}
