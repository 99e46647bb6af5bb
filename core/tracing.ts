/**
 * OpenTelemetry spans of tool calls and model requests, named and attributed by the GenAI semantic
 * conventions (docs/serve.md, "Metrics and tracing"). Spans go through `@opentelemetry/api`, which
 * records nothing until an SDK registers a tracer provider; the host asks once, when it is created,
 * whether one is, so a host without an SDK pays one branch per call and nothing else.
 */
import {
  type Attributes,
  context,
  ProxyTracerProvider,
  type Span,
  SpanKind,
  SpanStatusCode,
  type Tracer,
  type TracerProvider,
  trace,
} from '@opentelemetry/api';
import type { CallResult } from './types.ts';

/** The instrumentation scope every span of the host is recorded under. */
export const TRACER_NAME = 'rousseau-host';

/** What `trace.getTracerProvider()` delegates to while no SDK is registered. */
const NOOP_PROVIDER = new ProxyTracerProvider().getDelegate();

/**
 * The host's tracer when an SDK has registered a tracer provider, else undefined. A provider
 * registered through another copy of the API is not our proxy, and counts as registered.
 */
export function activeTracer(): Tracer | undefined {
  return registeredTracerProvider() && trace.getTracerProvider().getTracer(TRACER_NAME);
}

/** The tracer provider an SDK registered (the API's proxy unwrapped), else undefined. */
export function registeredTracerProvider(): TracerProvider | undefined {
  const provider = trace.getTracerProvider();
  if (!(provider instanceof ProxyTracerProvider)) return provider;
  const delegate = provider.getDelegate();
  return delegate === NOOP_PROVIDER ? undefined : delegate;
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
  return context.with(trace.setSpan(context.active(), span), fn);
}

export { SpanKind, SpanStatusCode };
export type { Span, Tracer };
