/**
 * The replay provider: plays scripted assistant turns, one per model request, with no network and
 * no key. The calls it scripts are real: they run through the host's whole pipeline. It powers the
 * offline demo, deterministic tests, and lets a plugin author watch a tool inside a real loop.
 *
 * A script (JSON):
 *   { "prompt": "…",                       // optional: the prompt `start` sends when given none
 *     "turns": [
 *       { "text": "Reading it.", "toolCalls": [ { "name": "read", "input": { "path": "a.md" } } ] },
 *       { "toolCalls": [ { "name": "read", "arguments": "{\"path\": " } ], "stopReason": "max_tokens" },
 *       { "text": "Done." } ] }
 * `input` is an object; `arguments` is raw text, as an OpenAI-compatible model may send (malformed
 * on purpose, say). The stop reason defaults to `tool_use` when the turn has calls, else `end_turn`.
 */

import Type, { type Static } from 'typebox';
import { Compile } from 'typebox/compile';
import {
  ProviderError,
  type ModelPricing,
  type CompleteOptions,
  type ModelRequest,
  type ModelResponse,
  type Provider,
} from '../messages.ts';
import { messageOf } from '../../errors.ts';
import { readJsonFile } from '../../json-text.ts';

const ReplayTurn = Type.Object(
  {
    text: Type.Optional(Type.String()),
    toolCalls: Type.Optional(
      Type.Array(
        Type.Object(
          {
            id: Type.Optional(Type.String({ minLength: 1 })),
            name: Type.String({ minLength: 1 }),
            input: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
            arguments: Type.Optional(Type.String()),
          },
          { additionalProperties: false },
        ),
      ),
    ),
    stopReason: Type.Optional(Type.Enum(['end_turn', 'tool_use', 'max_tokens', 'refusal', 'other'])),
    usage: Type.Optional(
      Type.Object(
        {
          inputTokens: Type.Integer({ minimum: 0 }),
          outputTokens: Type.Integer({ minimum: 0 }),
          cacheReadTokens: Type.Optional(Type.Integer({ minimum: 0 })),
          cacheWriteTokens: Type.Optional(Type.Integer({ minimum: 0 })),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);

const ReplayScriptSchema = Type.Object(
  { $schema: Type.Optional(Type.String()), prompt: Type.Optional(Type.String()), turns: Type.Array(ReplayTurn) },
  { additionalProperties: false },
);

export type ReplayScript = Static<typeof ReplayScriptSchema>;
export type ReplayTurn = Static<typeof ReplayTurn>;

let validator: ReturnType<typeof Compile<typeof ReplayScriptSchema>> | undefined;

/** Reads and checks a script file; every problem is named with its path in the file. */
export function loadReplayScript(file: string): ReplayScript {
  let raw: unknown;
  try {
    raw = readJsonFile(file);
  } catch (error) {
    throw new ProviderError('bad_response', `Cannot read the replay script ${file}: ${messageOf(error)}`);
  }
  validator ??= Compile(ReplayScriptSchema);
  if (!validator.Check(raw)) {
    const problems = validator.Errors(raw).map((e) => `  ${e.instancePath || '/'}: ${e.message}`);
    throw new ProviderError('bad_response', `Invalid replay script ${file}:\n${[...new Set(problems)].join('\n')}`);
  }
  return raw;
}

export interface ReplayOptions {
  /** A script file, or the script itself. */
  file?: string;
  script?: ReplayScript;
  /** A price for the scripted usage, so costs show with no model behind them. */
  pricing?: ModelPricing;
}

/** Each `complete()` plays the next turn; past the last one it fails with `replay_exhausted`. */
export function replayProvider(options: ReplayOptions): Provider {
  const script = options.script ?? (options.file ? loadReplayScript(options.file) : undefined);
  if (!script)
    throw new ProviderError(
      'bad_response',
      'The replay provider needs a script: set provider.file in the config, or pass --replay FILE.',
    );
  let next = 0;
  return {
    name: 'replay',
    model: options.file ?? 'script',
    ...(options.pricing ? { pricing: options.pricing } : {}),
    async complete(_request: ModelRequest, { signal, onText }: CompleteOptions = {}): Promise<ModelResponse> {
      if (signal?.aborted)
        throw new ProviderError('aborted', 'The replay request was cancelled', { cause: signal.reason });
      const index = next++;
      const turn = script.turns[index];
      if (!turn)
        throw new ProviderError(
          'replay_exhausted',
          `The replay script has ${script.turns.length} turns and all were played.`,
        );
      const text = turn.text ?? '';
      if (text) onText?.(text);
      const toolCalls = (turn.toolCalls ?? []).map((c, i) => ({
        id: c.id ?? `replay_${index + 1}_${i + 1}`,
        name: c.name,
        arguments: c.arguments ?? JSON.stringify(c.input ?? {}),
      }));
      return {
        message: { role: 'assistant', text, toolCalls },
        stopReason: turn.stopReason ?? (toolCalls.length ? 'tool_use' : 'end_turn'),
        usage: turn.usage ?? { inputTokens: 0, outputTokens: 0 },
      };
    },
  };
}
