// Rich results on each provider's wire: what each block of a tool result becomes (docs/agent.md,
// "Rich results"), checked by the fake servers that refuse what the real APIs refuse; and that
// they do refuse it, so a passing request means something.
import { expect } from 'chai';
import { Agent } from '../../../core/agent/agent.ts';
import type { ContentBlock } from '../../../core/contract.ts';
import { anthropicProvider } from '../../../core/agent/providers/anthropic.ts';
import { openaiProvider } from '../../../core/agent/providers/openai.ts';
import { openaiResponsesProvider } from '../../../core/agent/providers/openai-responses.ts';
import { ANTHROPIC_TEST_KEY, startAnthropicServer } from '../../fixtures/providers/anthropic-server.ts';
import type { FakeServer, Step } from '../../fixtures/providers/fake-server.ts';
import { OPENAI_TEST_KEY, startOpenAIServer } from '../../fixtures/providers/openai-server.ts';
import { RESPONSES_TEST_KEY, startResponsesServer } from '../../fixtures/providers/responses-server.ts';
import { kitHost, PDF, PNG, withBlocks } from '../helpers.ts';

const SCRIPT: Step[] = [
  { turn: { toolCalls: [{ id: 'call_rich', name: 'greet', input: { who: 'Ada' } }] } },
  { turn: { text: 'Seen.' } },
];

/** Runs one turn whose `greet` result holds every kind of block; returns the request that carried it. */
async function richRequest(
  start: (steps: Step[]) => Promise<FakeServer>,
  provider: (url: string) => Agent['provider'],
  blocks?: ContentBlock[],
) {
  const { host, cleanup } = await kitHost();
  const server = await start(SCRIPT);
  try {
    const result = await new Agent({ host: withBlocks(host, blocks), provider: provider(server.url) }).run('show me');
    expect(server.violations).to.deep.equal([]);
    expect(result.text).to.equal('Seen.');
    return server.requests[1]!.body;
  } finally {
    await server.close();
    await cleanup();
  }
}

/** Posts `body` to a fake server's API; the status and the API's error message. */
async function post(server: FakeServer, path: string, headers: Record<string, string>, body: unknown) {
  const res = await fetch(`${server.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  const answer = (await res.json()) as { error?: { message?: string } };
  return { status: res.status, message: answer.error?.message ?? '' };
}

describe('rich results: anthropic', () => {
  it('puts the image and the PDF inside tool_result as image and document blocks, everything else as text', async () => {
    const body = await richRequest(startAnthropicServer, (url) =>
      anthropicProvider({ apiKey: ANTHROPIC_TEST_KEY, baseUrl: url, retries: 0 }),
    );
    const result = body.messages.at(-1).content.find((b: { type?: string }) => b.type === 'tool_result');
    const { cache_control: _, ...plain } = result;
    expect(plain).to.deep.equal({
      type: 'tool_result',
      tool_use_id: 'call_rich',
      content: [
        { type: 'text', text: 'Here it is.' },
        { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } },
        { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: PDF } },
        { type: 'text', text: '[audio audio/wav, 4 B]' },
        { type: 'text', text: '[resource file:///w/notes.md text/markdown]\n# Notes' },
        { type: 'text', text: '[resource link file:///w/big.bin "big.bin"]' },
      ],
    });
  });

  it('the fake refuses an image without media_type, of a type the API does not take, or whose bytes are another type', async () => {
    const server = await startAnthropicServer();
    const headers = { 'x-api-key': ANTHROPIC_TEST_KEY, 'anthropic-version': '2023-06-01' };
    const withResult = (content: unknown) => ({
      model: 'm',
      max_tokens: 10,
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'go' }] },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'greet', input: {} }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content }] },
      ],
    });
    try {
      const image = (source: Record<string, unknown>) => withResult([{ type: 'image', source }]);
      expect(await post(server, '/v1/messages', headers, image({ type: 'base64', data: PNG }))).to.deep.equal({
        status: 400,
        message: 'messages.2.content.0.tool_result.content.0.source.base64.media_type: Field required',
      });
      expect(
        (await post(server, '/v1/messages', headers, image({ type: 'base64', media_type: 'image/bmp', data: PNG })))
          .message,
      ).to.match(/media_type: Input should be 'image\/jpeg'/);
      expect(
        (await post(server, '/v1/messages', headers, image({ type: 'base64', media_type: 'image/jpeg', data: PNG })))
          .message,
      ).to.match(/Image does not match the provided media type image\/jpeg/);
      expect(
        (await post(server, '/v1/messages', headers, withResult([{ type: 'audio', data: 'UklGRg==' }]))).message,
      ).to.match(/content\.0\.type: Input should be 'text', 'image'/);
      expect((await post(server, '/v1/messages', headers, withResult([{ type: 'text', text: '' }]))).message).to.match(
        /text content blocks must be non-empty/,
      );
    } finally {
      await server.close();
    }
  });
});

describe('rich results: openai chat completions', () => {
  it("keeps each tool message text and sends the turn's images after all of them, in one user message", async () => {
    const body = await richRequest(startOpenAIServer, (url) =>
      openaiProvider({ apiKey: OPENAI_TEST_KEY, baseUrl: `${url}/v1`, retries: 0 }),
    );
    const [tool, images] = body.messages.slice(-2);
    expect(tool.role).to.equal('tool');
    expect(tool.content)
      .to.be.a('string')
      .and.match(/^Here it is\.\n\[image image\/png, [\d.]+ K?B\]/);
    expect(tool.content).to.match(/\[1 image\(s\) of this result follow in a user message\]$/);
    expect(images).to.deep.equal({
      role: 'user',
      content: [
        { type: 'text', text: 'The images of the result of greet (call_rich):' },
        { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } },
      ],
    });
  });

  it('the fake refuses an image in a tool message, a user message between the calls and their results, and a data URL that is not an image', async () => {
    const server = await startOpenAIServer();
    const headers = { authorization: `Bearer ${OPENAI_TEST_KEY}` };
    const call = {
      role: 'assistant',
      content: null,
      tool_calls: [{ id: 'c1', type: 'function', function: { name: 'greet', arguments: '{}' } }],
    };
    const image = { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } };
    try {
      expect(
        (
          await post(server, '/v1/chat/completions', headers, {
            model: 'm',
            messages: [{ role: 'user', content: 'go' }, call, { role: 'tool', tool_call_id: 'c1', content: [image] }],
          })
        ).message,
      ).to.match(/Image URLs are only allowed for messages with role 'user', but this message with role 'tool'/);
      expect(
        (
          await post(server, '/v1/chat/completions', headers, {
            model: 'm',
            messages: [
              { role: 'user', content: 'go' },
              call,
              { role: 'user', content: [image] },
              { role: 'tool', tool_call_id: 'c1', content: 'x' },
            ],
          })
        ).message,
      ).to.match(/must be followed by tool messages responding to each 'tool_call_id'/);
      expect(
        (
          await post(server, '/v1/chat/completions', headers, {
            model: 'm',
            messages: [
              {
                role: 'user',
                content: [{ type: 'image_url', image_url: { url: `data:application/pdf;base64,${PDF}` } }],
              },
            ],
          })
        ).message,
      ).to.match(/Invalid MIME type application\/pdf/);
    } finally {
      await server.close();
    }
  });
});

describe('rich results: openai responses', () => {
  it('answers the call with a list of input_text, input_image and input_file parts', async () => {
    const body = await richRequest(startResponsesServer, (url) =>
      openaiResponsesProvider({ apiKey: RESPONSES_TEST_KEY, baseUrl: `${url}/v1`, retries: 0 }),
    );
    const output = body.input.find((item: { type?: string }) => item.type === 'function_call_output');
    expect(output).to.deep.equal({
      type: 'function_call_output',
      call_id: 'call_rich',
      output: [
        { type: 'input_text', text: 'Here it is.' },
        { type: 'input_image', image_url: `data:image/png;base64,${PNG}` },
        { type: 'input_file', filename: 'report.pdf', file_data: `data:application/pdf;base64,${PDF}` },
        { type: 'input_text', text: '[audio audio/wav, 4 B]' },
        { type: 'input_text', text: '[resource file:///w/notes.md text/markdown]\n# Notes' },
        { type: 'input_text', text: '[resource link file:///w/big.bin "big.bin"]' },
      ],
    });
  });

  it('the fake refuses an output part it does not know and an input_image without a URL', async () => {
    const server = await startResponsesServer();
    const headers = { authorization: `Bearer ${RESPONSES_TEST_KEY}` };
    const answered = (output: unknown) => ({
      model: 'm',
      input: [
        { type: 'function_call', call_id: 'c1', name: 'greet', arguments: '{}' },
        { type: 'function_call_output', call_id: 'c1', output },
      ],
    });
    try {
      expect((await post(server, '/v1/responses', headers, answered([{ type: 'image', data: PNG }]))).message).to.match(
        /Invalid value: 'image'.*\(input\[1\]\.output\[0\]\.type\)/,
      );
      expect((await post(server, '/v1/responses', headers, answered([{ type: 'input_image' }]))).message).to.match(
        /Missing required parameter: 'input\[1\]\.output\[0\]\.image_url'/,
      );
    } finally {
      await server.close();
    }
  });
});

describe('rich results: blocks whose bytes are not what their MIME type says', () => {
  // A tool, or an MCP server, may name its bytes wrongly; the APIs check the bytes and refuse the
  // whole request, which would end the turn. PNG bytes named JPEG go as PNG; bytes that are no
  // image (or no PDF) go as the line that names them.
  const LYING: ContentBlock[] = [
    { type: 'image', data: PNG, mimeType: 'image/jpeg' },
    { type: 'image', data: 'AAAAAAAAAAAAAAAA', mimeType: 'image/png' },
    { type: 'resource', resource: { uri: 'file:///w/not.pdf', mimeType: 'application/pdf', blob: 'AAAAAAAA' } },
  ];
  const providers: [string, (steps: Step[]) => Promise<FakeServer>, (url: string) => Agent['provider']][] = [
    [
      'anthropic',
      startAnthropicServer,
      (url) => anthropicProvider({ apiKey: ANTHROPIC_TEST_KEY, baseUrl: url, retries: 0 }),
    ],
    [
      'openai',
      startOpenAIServer,
      (url) => openaiProvider({ apiKey: OPENAI_TEST_KEY, baseUrl: `${url}/v1`, retries: 0 }),
    ],
    [
      'responses',
      startResponsesServer,
      (url) => openaiResponsesProvider({ apiKey: RESPONSES_TEST_KEY, baseUrl: `${url}/v1`, retries: 0 }),
    ],
  ];
  for (const [name, start, provider] of providers) {
    it(`${name}: the turn goes on, each image sent as the type its bytes are`, async () => {
      const body = JSON.stringify(await richRequest(start, provider, LYING));
      expect(body).to.not.match(/data:image\/jpeg|"media_type":"image\/jpeg"/);
      expect(body).to.match(/data:image\/png;base64,iVBORw0KGgo|"media_type":"image\/png","data":"iVBORw0KGgo/);
      expect(body).to.not.include('AAAAAAAAAAAAAAAA');
    });
  }
});
