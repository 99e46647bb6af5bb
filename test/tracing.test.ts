// OpenTelemetry spans of tool calls and model requests, recorded by a real SDK (the in-memory
// exporter), with the AsyncLocalStorage context manager an SDK for Node registers.
import { context, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Agent } from '../core/agent/agent.ts';
import { anthropicProvider } from '../core/agent/providers/anthropic.ts';
import type { Host } from '../core/host.ts';
import { HOST_INFO } from '../core/identity.ts';
import { kitHost } from './agent/helpers.ts';
import { ROOT } from './helpers.ts';
import { ANTHROPIC_TEST_KEY, startAnthropicServer } from './fixtures/providers/anthropic-server.ts';

const caller = { name: 'ci-bot', scopes: ['tools'], via: 'token' as const };

describe('tracing (OpenTelemetry)', () => {
  const exporter = new InMemorySpanExporter();
  let provider: BasicTracerProvider;
  let host: Host;
  let cleanup: () => Promise<void>;

  before(() => {
    provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
    expect(trace.setGlobalTracerProvider(provider)).to.equal(true);
    expect(context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable())).to.equal(true);
  });
  after(async () => {
    trace.disable();
    context.disable();
    await provider.shutdown();
  });
  beforeEach(async () => {
    exporter.reset();
    ({ host, cleanup } = await kitHost());
  });
  afterEach(() => cleanup());

  const spans = (name?: string): ReadableSpan[] =>
    exporter.getFinishedSpans().filter((s) => name === undefined || s.name === name);

  it('records each call as an execute_tool span with the GenAI attributes, the plugin, the caller and the result code', async () => {
    const result = await host.call('greet', { who: 'Ada' }, { callId: 'call-1', caller });
    expect(result.isError).to.equal(false);
    const [span, more] = spans();
    expect(more).to.equal(undefined);
    expect(span!.name).to.equal('execute_tool greet');
    // The scope says which host version recorded it, as a backend groups spans by it.
    expect(span!.instrumentationScope).to.include({ name: 'rousseau-host', version: HOST_INFO.version });
    expect(span!.kind).to.equal(SpanKind.INTERNAL);
    expect(span!.attributes).to.deep.equal({
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'greet',
      'gen_ai.tool.call.id': 'call-1',
      'rousseau.caller.name': 'ci-bot',
      'rousseau.plugin': 'kit',
      'rousseau.result.code': 'ok',
    });
    expect(span!.status.code).to.equal(SpanStatusCode.UNSET);
    expect(span!.parentSpanContext).to.equal(undefined);
  });

  it('marks a failed call ERROR with its result code as error.type; an unknown tool has no plugin', async () => {
    await host.call('fail', { message: 'boom' });
    await host.call('fail', { message: 'forbidden thing' });
    await host.call('no_such_tool', {});
    const got = spans().map((s) => ({
      name: s.name,
      status: s.status.code,
      type: s.attributes['error.type'],
      code: s.attributes['rousseau.result.code'],
      plugin: s.attributes['rousseau.plugin'],
    }));
    expect(got).to.deep.equal([
      {
        name: 'execute_tool fail',
        status: SpanStatusCode.ERROR,
        type: 'tool_error',
        code: 'tool_error',
        plugin: 'kit',
      },
      { name: 'execute_tool fail', status: SpanStatusCode.ERROR, type: 'denied', code: 'denied', plugin: 'kit' },
      {
        name: 'execute_tool no_such_tool',
        status: SpanStatusCode.ERROR,
        type: 'unknown_tool',
        code: 'unknown_tool',
        plugin: undefined,
      },
    ]);
  });

  it('is a child of the span active when the call is made', async () => {
    const tracer = trace.getTracer('test');
    const outer = tracer.startSpan('outer');
    await context.with(trace.setSpan(context.active(), outer), () => host.call('slow', { ms: 5, tag: 'x' }));
    outer.end();
    const call = spans('execute_tool slow')[0]!;
    expect(call.parentSpanContext?.spanId).to.equal(outer.spanContext().spanId);
    expect(call.spanContext().traceId).to.equal(outer.spanContext().traceId);
  });

  it('records a model request as chat {model} with its tokens, and the calls of its turn as its children', async () => {
    const server = await startAnthropicServer([
      {
        turn: {
          toolCalls: [
            { id: 'toolu_1', name: 'greet', input: { who: 'A' } },
            { id: 'toolu_2', name: 'fail', input: { message: 'boom' } },
          ],
          usage: { input: 12, output: 7 },
        },
      },
      { turn: { text: 'done', usage: { input: 20, output: 3 } } },
    ]);
    try {
      const model = 'claude-test-model';
      const agent = new Agent({
        host,
        sessionId: 'session-1',
        provider: anthropicProvider({ apiKey: ANTHROPIC_TEST_KEY, baseUrl: server.url, model, retries: 0 }),
      });
      const result = await agent.run('go');
      expect(result.stopReason).to.equal('end_turn');
      expect(server.violations).to.deep.equal([]);

      const chats = spans(`chat ${model}`);
      expect(chats).to.have.length(2);
      const [first, second] = chats;
      expect(first!.kind).to.equal(SpanKind.CLIENT);
      expect(first!.attributes).to.deep.include({
        'gen_ai.operation.name': 'chat',
        'gen_ai.provider.name': 'anthropic',
        'gen_ai.request.model': model,
        'gen_ai.conversation.id': 'session-1',
        'gen_ai.usage.input_tokens': 12,
        'gen_ai.usage.output_tokens': 7,
      });
      expect(first!.attributes['gen_ai.response.finish_reasons']).to.deep.equal(['tool_use']);
      expect(second!.attributes['gen_ai.response.finish_reasons']).to.deep.equal(['end_turn']);

      const calls = spans().filter((s) => s.name.startsWith('execute_tool'));
      expect(calls.map((s) => [s.attributes['gen_ai.tool.call.id'], s.status.code]).sort()).to.deep.equal([
        ['toolu_1', SpanStatusCode.UNSET],
        ['toolu_2', SpanStatusCode.ERROR],
      ]);
      for (const call of calls) {
        expect(call.parentSpanContext?.spanId).to.equal(first!.spanContext().spanId);
        expect(call.spanContext().traceId).to.equal(first!.spanContext().traceId);
      }
    } finally {
      await server.close();
    }
  });

  it("marks a model request that failed ERROR with the provider's error code", async () => {
    const server = await startAnthropicServer([{ status: 400, message: 'bad request' }]);
    try {
      const agent = new Agent({
        host,
        provider: anthropicProvider({ apiKey: ANTHROPIC_TEST_KEY, baseUrl: server.url, retries: 0 }),
      });
      const result = await agent.run('go');
      expect(result.stopReason).to.equal('error');
      const [chat] = spans().filter((s) => s.name.startsWith('chat '));
      expect(chat!.status.code).to.equal(SpanStatusCode.ERROR);
      expect(chat!.attributes['error.type']).to.equal(result.error!.code);
    } finally {
      await server.close();
    }
  });

  it('records nothing for a host made before any SDK was registered: whether to trace is decided once', async () => {
    trace.disable();
    const { host: untraced, cleanup: done } = await kitHost();
    trace.setGlobalTracerProvider(provider);
    try {
      await untraced.call('greet', { who: 'Ada' });
      expect(spans()).to.deep.equal([]);
      await host.call('greet', { who: 'Ada' });
      expect(spans()).to.have.length(1);
    } finally {
      await done();
    }
  });

  it('depends on API 1.9, the oldest current minor: the API sees an SDK registered through its own minor or a later one, never an earlier', () => {
    const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
    };
    expect(manifest.dependencies['@opentelemetry/api']).to.equal('~1.9.0');
  });
});
