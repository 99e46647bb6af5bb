// A hostile model server against each streaming provider: where a piece of the turn goes (a
// block's, a call's, an output item's index) and how much of it comes are the server's choice.
import { expect } from 'chai';
import { ProviderError, type Provider } from '../../../core/agent/messages.ts';
import { anthropicProvider } from '../../../core/agent/providers/anthropic.ts';
import { openaiProvider } from '../../../core/agent/providers/openai.ts';
import { openaiResponsesProvider } from '../../../core/agent/providers/openai-responses.ts';
import { turnSize } from '../../../core/agent/providers/stream-limits.ts';
import { ANTHROPIC_TEST_KEY, startAnthropicServer } from '../../fixtures/providers/anthropic-server.ts';
import { type FakeServer, type Step, sse } from '../../fixtures/providers/fake-server.ts';
import { OPENAI_TEST_KEY, startOpenAIServer } from '../../fixtures/providers/openai-server.ts';
import { RESPONSES_TEST_KEY, startResponsesServer } from '../../fixtures/providers/responses-server.ts';

interface Wire {
  name: string;
  start(steps: Step[]): Promise<FakeServer>;
  provider(server: FakeServer): Provider;
  /** A whole turn whose one tool call sits at `index`. */
  callAt(index: unknown): string[];
  /** A whole turn of text whose every token count is `count`. */
  counted(count: unknown): string[];
  /** A turn that never ends: `text` pieces, then `args` pieces of one call's arguments. */
  long(text: Iterable<string>, args: Iterable<string>): Iterable<string>;
}

const WIRES: Wire[] = [
  {
    name: 'openai',
    start: startOpenAIServer,
    provider: (server) =>
      openaiProvider({ apiKey: OPENAI_TEST_KEY, baseUrl: `${server.url}/v1`, model: 'test-model', retries: 0 }),
    callAt: (index) => [
      sse({
        choices: [{ delta: { tool_calls: [{ index, id: 'c1', function: { name: 'greet', arguments: '{}' } }] } }],
      }),
      sse({ choices: [{ delta: {}, finish_reason: 'tool_calls' }] }),
      sse('[DONE]'),
    ],
    counted: (count) => [
      sse({ choices: [{ delta: { content: 'hi' } }] }),
      sse({ choices: [{ delta: {}, finish_reason: 'stop' }] }),
      sse({
        choices: [],
        usage: { prompt_tokens: count, completion_tokens: count, prompt_tokens_details: { cached_tokens: count } },
      }),
      sse('[DONE]'),
    ],
    *long(text, args) {
      for (const t of text) yield sse({ choices: [{ delta: { content: t } }] });
      yield sse({ choices: [{ delta: { tool_calls: [{ index: 0, id: 'c1', function: { name: 'greet' } }] } }] });
      for (const a of args)
        yield sse({ choices: [{ delta: { tool_calls: [{ index: 0, function: { arguments: a } }] } }] });
    },
  },
  {
    name: 'anthropic',
    start: startAnthropicServer,
    provider: (server) => anthropicProvider({ apiKey: ANTHROPIC_TEST_KEY, baseUrl: server.url, retries: 0 }),
    callAt: (index) => [
      sse({ type: 'message_start', message: { usage: { input_tokens: 1, output_tokens: 1 } } }, 'message_start'),
      sse(
        { type: 'content_block_start', index, content_block: { type: 'tool_use', id: 't1', name: 'greet', input: {} } },
        'content_block_start',
      ),
      sse({ type: 'content_block_stop', index }, 'content_block_stop'),
      sse({ type: 'message_delta', delta: { stop_reason: 'tool_use' }, usage: { output_tokens: 2 } }, 'message_delta'),
      sse({ type: 'message_stop' }, 'message_stop'),
    ],
    counted: (count) => [
      sse({ type: 'message_start', message: { usage: { input_tokens: count, output_tokens: count } } }),
      sse({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: 'hi' } }),
      sse({
        type: 'message_delta',
        delta: { stop_reason: 'end_turn' },
        usage: { output_tokens: count, cache_read_input_tokens: count, cache_creation_input_tokens: count },
      }),
      sse({ type: 'message_stop' }),
    ],
    *long(text, args) {
      yield sse({ type: 'message_start', message: { usage: { input_tokens: 1 } } }, 'message_start');
      yield sse({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } });
      for (const t of text)
        yield sse({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: t } });
      yield sse({
        type: 'content_block_start',
        index: 1,
        content_block: { type: 'tool_use', id: 't1', name: 'greet' },
      });
      for (const a of args)
        yield sse({ type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: a } });
    },
  },
  {
    name: 'openai-responses',
    start: startResponsesServer,
    provider: (server) =>
      openaiResponsesProvider({ apiKey: RESPONSES_TEST_KEY, baseUrl: `${server.url}/v1`, retries: 0 }),
    callAt: (index) => [
      sse({
        type: 'response.output_item.added',
        output_index: index,
        item: { type: 'function_call', call_id: 'c1', name: 'greet', arguments: '{}' },
      }),
      sse({ type: 'response.completed', response: { status: 'completed', output: [] } }),
    ],
    counted: (count) => [
      sse({
        type: 'response.completed',
        response: {
          status: 'completed',
          output: [{ type: 'message', content: [{ type: 'output_text', text: 'hi' }] }],
          usage: { input_tokens: count, output_tokens: count, input_tokens_details: { cached_tokens: count } },
        },
      }),
    ],
    *long(text, args) {
      for (const t of text) yield sse({ type: 'response.output_text.delta', output_index: 0, delta: t });
      yield sse({
        type: 'response.output_item.added',
        output_index: 1,
        item: { type: 'function_call', call_id: 'c1', name: 'greet', arguments: '' },
      });
      for (const a of args) yield sse({ type: 'response.function_call_arguments.delta', output_index: 1, delta: a });
    },
  },
];

/** `count` pieces of `size` characters. */
function* pieces(count: number, size: number): Iterable<string> {
  const piece = 'y'.repeat(size);
  for (let i = 0; i < count; i++) yield piece;
}

async function failure(wire: Wire, step: Step): Promise<ProviderError> {
  const server = await wire.start([step]);
  try {
    const error = await wire
      .provider(server)
      .complete({ messages: [{ role: 'user', content: 'hi' }], tools: [] })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(error, 'the turn was taken as it came').to.be.instanceOf(ProviderError);
    return error as ProviderError;
  } finally {
    await server.close();
  }
}

describe('providers: a hostile model stream', () => {
  for (const wire of WIRES) {
    describe(wire.name, () => {
      it('refuses an index that is no array position (__proto__), and no array of the host changes', async () => {
        const error = await failure(wire, { frames: wire.callAt('__proto__') });
        expect(error.code).to.equal('bad_response');
        expect(error.message).to.include('"__proto__"').and.include('0 to 9,999');
        expect(([] as unknown as Record<string, unknown>).id).to.equal(undefined);
        expect(Object.getOwnPropertyNames(Array.prototype)).to.not.include.members(['id', 'arguments']);
      });

      // An index of 2^32 - 2 made an array of that length: reading the turn back walked every hole
      // of it on the host's thread (over two minutes, every other call stalled behind it).
      for (const index of [4_294_967_294, -1, 1.5, 10_000])
        it(`refuses the index ${index} at once, naming it`, async () => {
          const error = await failure(wire, { frames: wire.callAt(index) });
          expect(error.code).to.equal('bad_response');
          expect(error.message).to.include(`index ${index}`).and.include('0 to 9,999');
        });

      it('keeps a call at the last index allowed', async () => {
        const server = await wire.start([{ frames: wire.callAt(9_999) }]);
        try {
          const answer = await wire
            .provider(server)
            .complete({ messages: [{ role: 'user', content: 'hi' }], tools: [] });
          expect(answer.message.toolCalls.map((c) => c.name)).to.deep.equal(['greet']);
        } finally {
          await server.close();
        }
      });

      // The counts are added up over a session, priced, kept with it and shown: a string there was
      // joined to the totals as text ("0" + "12"), and a session holding it could not be resumed.
      for (const count of ['12', -5, 1e300, { n: 1 }, Number.MAX_SAFE_INTEGER + 2])
        it(`counts a token count of ${JSON.stringify(count)} as 0`, async () => {
          const server = await wire.start([{ frames: wire.counted(count) }]);
          try {
            const answer = await wire
              .provider(server)
              .complete({ messages: [{ role: 'user', content: 'hi' }], tools: [] });
            expect(answer.message.text).to.equal('hi');
            for (const value of Object.values(answer.usage)) expect(value).to.equal(0);
          } finally {
            await server.close();
          }
        });

      // Text and a call's arguments, each under the bound, together over it: a turn that never ends
      // is cut where it passes 16 Mi characters, whatever it holds.
      it('ends a turn that goes on past 16 Mi characters of text and arguments with bad_response', async () => {
        const error = await failure(wire, { frames: wire.long(pieces(9, 1024 * 1024), pieces(9, 1024 * 1024)) });
        expect(error.code).to.equal('bad_response');
        expect(error.message).to.include('16,777,216 characters');
      });
    });
  }
});

describe('turnSize', () => {
  // A server's piece is any JSON: an id or a delta of {"length": "a"} once made the count a string
  // ("0a…"), which no number passes, and the turn went on without a bound.
  it('counts a piece that is not text as the text it is stored as, whatever length it claims', () => {
    const count = turnSize('The API');
    count({ length: 'a' });
    count([1, 2]);
    const mebi = 'y'.repeat(1024 * 1024);
    expect(() => {
      for (let i = 0; i < 16; i++) count(mebi);
    }).to.throw(ProviderError, '16,777,216 characters');
  });
});
