/**
 * OpenTelemetry spans of tool calls and model requests, named and attributed by the GenAI semantic
 * conventions (docs/serve.md, "Metrics and tracing"). Spans go through `@opentelemetry/api`, which
 * records nothing until an SDK registers a tracer provider; the host asks once, when it is created,
 * whether one is, so a host without an SDK pays one branch per call and nothing else.
 *
 * The API is some 45 CommonJS modules (~70 ms of CPU at every start), so it is loaded only once an
 * SDK has registered something: every copy of the API, major version 1, registers on one global key,
 * and while that holds no tracer provider there is nothing the API could hand us.
 */
import { createRequire } from 'node:module';
import type * as OpenTelemetry from '@opentelemetry/api';
import type { Attributes, Span, Tracer, TracerProvider } from '@opentelemetry/api';
import { HOST_INFO } from './identity.ts';
import type { CallResult } from './types.ts';

/** The instrumentation scope every span of the host is recorded under. */
export const TRACER_NAME = 'rousseau-host';

/** The key every copy of `@opentelemetry/api` 1.x keeps its registered globals under. */
const API_GLOBALS = Symbol.for('opentelemetry.js.api.1');

/** The API's enum members the host sets, by value (fixed within the API's major version). */
export const SpanKind = {
  INTERNAL: 0 as OpenTelemetry.SpanKind.INTERNAL,
  CLIENT: 2 as OpenTelemetry.SpanKind.CLIENT,
} as const;
export const SpanStatusCode = { ERROR: 2 as OpenTelemetry.SpanStatusCode.ERROR } as const;

let loaded: { api: typeof OpenTelemetry; noop: TracerProvider } | undefined;

/** The API, and what `trace.getTracerProvider()` delegates to while no SDK is registered. */
function otel(): { api: typeof OpenTelemetry; noop: TracerProvider } {
  if (!loaded) {
    const api: typeof OpenTelemetry = createRequire(import.meta.url)('@opentelemetry/api');
    loaded = { api, noop: new api.ProxyTracerProvider().getDelegate() };
  }
  return loaded;
}

/**
 * The host's tracer when an SDK has registered a tracer provider, else undefined. A provider
 * registered through another copy of the API is not our proxy, and counts as registered.
 */
export function activeTracer(): Tracer | undefined {
  return registeredTracerProvider() && otel().api.trace.getTracerProvider().getTracer(TRACER_NAME, HOST_INFO.version);
}

/** The tracer provider an SDK registered (the API's proxy unwrapped), else undefined. */
export function registeredTracerProvider(): TracerProvider | undefined {
  const globals = (globalThis as { [API_GLOBALS]?: { trace?: unknown } })[API_GLOBALS];
  if (globals?.trace === undefined) return undefined;
  const { api, noop } = otel();
  const provider = api.trace.getTracerProvider();
  if (!(provider instanceof api.ProxyTracerProvider)) return provider;
  const delegate = provider.getDelegate();
  return delegate === noop ? undefined : delegate;
}

/** What a tool call's span is started with. */
export interface ToolSpanStart {
  tool: string;
  callId: string;
  caller?: string;
}

/** Starts `execute_tool {tool}` as a child of the active span (an agent's model request, an HTTP request). */
export function startToolSpan(tracer: Tracer, call: ToolSpanStart): Span {
  const attributes: Attributes = {
    'gen_ai.operation.name': 'execute_tool',
    'gen_ai.tool.name': call.tool,
    'gen_ai.tool.call.id': call.callId,
  };
  if (call.caller !== undefined) attributes['rousseau.caller.name'] = call.caller;
  return tracer.startSpan(`execute_tool ${call.tool}`, { kind: SpanKind.INTERNAL, attributes });
}

/**
 * Ends a tool call's span with the call's outcome: its result code (`ok` for a success), and for a
 * failure `error.type` (the same code, one of the closed set in docs/errors.md) and status ERROR.
 */
export function endToolSpan(span: Span, result: CallResult, plugin: string | undefined): void {
  if (plugin !== undefined) span.setAttribute('rousseau.plugin', plugin);
  if (result.isError) {
    const code = result.code ?? 'tool_error';
    span.setAttribute('rousseau.result.code', code);
    span.setAttribute('error.type', code);
    span.setStatus({ code: SpanStatusCode.ERROR, message: code });
  } else {
    span.setAttribute('rousseau.result.code', 'ok');
  }
  span.end();
}

/** Runs `fn` with `span` as the active span, so the spans started inside it are its children. */
export function withSpan<T>(span: Span, fn: () => T): T {
  const { context, trace } = otel().api;
  return context.with(trace.setSpan(context.active(), span), fn);
}

export type { Span, Tracer };
