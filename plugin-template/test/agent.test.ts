// The tool inside a real agent loop. The replay provider stands in for the model: it plays scripted
// turns, with no network and no key, and every call it scripts runs through the host's pipeline,
// so this is what an agent does with the tool, down to what the model is told and sees back.
import { expect } from 'chai';
import { fileURLToPath } from 'node:url';
import {
  Agent,
  createHost,
  replayProvider,
  type Host,
  type Message,
  type ModelRequest,
  type Provider,
} from 'rousseau-host';

const pluginDir = fileURLToPath(new URL('..', import.meta.url));

describe('in an agent loop (replay provider)', () => {
  let host: Host;
  before(async () => {
    host = await createHost({
      cwd: pluginDir,
      config: { builtins: false, plugins: [pluginDir], policy: { default: 'allow' } },
      audit: false,
      logLevel: 'error',
    });
  });
  after(() => host?.close());

  it('is offered to the model, called, and its result (or its error) goes back to the model', async () => {
    const replay = replayProvider({
      script: {
        turns: [
          {
            text: 'Let me count.',
            toolCalls: [{ name: 'count_words', input: { text: 'the cat and the hat', top: 1 } }],
          },
          // A model sometimes sends a wrong input: it gets an error result it can act on, not a crash.
          { toolCalls: [{ name: 'count_words', input: { text: 'x', top: 0 } }] },
          { text: 'The most frequent word is "the" (2 of 5).' },
        ],
      },
    });
    // Watch what the model is sent; the replayed answers stay as scripted.
    const requests: ModelRequest[] = [];
    const provider: Provider = {
      ...replay,
      complete: (request, options) => (requests.push(request), replay.complete(request, options)),
    };

    const agent = new Agent({ host, provider, maxTurns: 5 });
    const result = await agent.run('Which word is most frequent in "the cat and the hat"?');

    expect(result).to.include({
      stopReason: 'end_turn',
      text: 'The most frequent word is "the" (2 of 5).',
      turns: 3,
      toolCalls: 2,
    });
    const offered = requests[0]!.tools.find((t) => t.name === 'count_words');
    expect(offered?.description).to.include('Count the words');
    expect(offered?.inputSchema).to.include({ type: 'object', additionalProperties: false });

    const results = agent.messages
      .filter((m): m is Extract<Message, { role: 'tool' }> => m.role === 'tool')
      .map((m) => m.results[0]!);
    expect(results[0]).to.include({
      name: 'count_words',
      isError: false,
      content: '5 words, 4 distinct\nthe: 2\n(3 more distinct words not listed)',
    });
    expect(results[1]).to.include({ name: 'count_words', isError: true, code: 'invalid_input' });
    expect(results[1]!.content).to.include('/top');
  });
});
