/**
 * The MCP handshake in plain code: `initialize`, `notifications/initialized` and `ping` read and
 * answered as the SDK's `Server` answers them, so `start --mcp` answers a client before the SDK has
 * loaded (its modules cost about a third of a second of CPU to import; stdio-start.ts). Like
 * shapes.ts, each check accepts only a subset of what the SDK's schema accepts and says nothing
 * (undefined) about the rest, which waits for the SDK and gets its answer. Nothing here imports the
 * SDK but its types. Written against `@modelcontextprotocol/sdk` 1.32.2 (`Server._oninitialize` in
 * server/index.js, `InitializeRequestSchema` in types.js); test/mcp/handshake.test.ts compares the
 * answers with the SDK's, and the session checks each one when the SDK takes over (`dropReplayAnswers`).
 */
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { HOST_INFO } from '../identity.ts';
import { isObject, isPlainMeta, isPlainRequest } from './shapes.ts';

/** The SDK's `LATEST_PROTOCOL_VERSION` (test/mcp/handshake.test.ts compares them). */
export const LATEST_PROTOCOL_VERSION = '2025-11-25';
/** The SDK's `SUPPORTED_PROTOCOL_VERSIONS`, the latest first. */
export const SUPPORTED_PROTOCOL_VERSIONS: readonly string[] = [
  LATEST_PROTOCOL_VERSION,
  '2025-06-18',
  '2025-03-26',
  '2024-11-05',
  '2024-10-07',
];

/**
 * Whether a stdio session announces tools registering after `initialize`: it does, its plugins
 * loading in the background. Both stdio.ts's server and the handshake answered before it (stdio-start.ts)
 * say so; an answer that differed from the server's would be logged as a mismatch.
 */
export const STDIO_LIST_CHANGED = true;

/** What the host's MCP server offers (server.ts gives it to the SDK's `Server`; `initialize` answers it). */
export function serverCapabilities(listChanged: boolean) {
  return { tools: { listChanged }, logging: {} };
}

/** What the server answers `initialize` with: the client's version when the SDK supports it, else the latest. */
export function initializeResult(requestedVersion: string, listChanged: boolean) {
  return {
    protocolVersion: SUPPORTED_PROTOCOL_VERSIONS.includes(requestedVersion)
      ? requestedVersion
      : LATEST_PROTOCOL_VERSION,
    capabilities: serverCapabilities(listChanged),
    serverInfo: HOST_INFO,
  };
}

/** A handshake message read in plain code: answered (a request) or only remembered (the notification). */
export type HandshakeMessage =
  | { method: 'ping'; id: string | number }
  | { method: 'initialize'; id: string | number; result: ReturnType<typeof initializeResult> }
  | { method: 'notifications/initialized' };

/**
 * `message` as a handshake message, when the SDK would take it as one and answer it as the host
 * does; undefined for anything else (another method, a batch, a field the SDK's schema may refuse).
 */
export function readHandshake(message: unknown, listChanged: boolean): HandshakeMessage | undefined {
  if (isPlainRequest(message)) {
    const { id, method, params } = message;
    if (method === 'ping') return { method, id };
    if (method === 'initialize' && isPlainInitializeParams(params))
      return { method, id, result: initializeResult(params.protocolVersion, listChanged) };
    return undefined;
  }
  return isPlainInitialized(message) ? { method: 'notifications/initialized' } : undefined;
}

/** The JSON-RPC line answering `id` with `result`, its keys in the SDK's order. */
export function answerLine(id: string | number, result: unknown): string {
  return `${JSON.stringify({ result, jsonrpc: '2.0', id })}\n`;
}

/** `JSONRPCNotificationSchema` (strict) with `InitializedNotificationSchema`'s method and params. */
function isPlainInitialized(message: unknown): boolean {
  if (!isObject(message)) return false;
  for (const key in message) if (key !== 'jsonrpc' && key !== 'method' && key !== 'params') return false;
  const { params } = message;
  return (
    message.jsonrpc === '2.0' &&
    message.method === 'notifications/initialized' &&
    (params === undefined || (isObject(params) && isPlainMeta(params._meta)))
  );
}

const isOptional = (value: unknown, is: (value: unknown) => boolean) => value === undefined || is(value);
const isString = (value: unknown) => typeof value === 'string';
const isBoolean = (value: unknown) => typeof value === 'boolean';
const isObjectOfObjects = (value: unknown) => isObject(value) && Object.values(value).every(isObject);

/**
 * Of `ClientCapabilitiesSchema`, the capabilities clients declare: `roots`, `sampling`,
 * `elicitation`, `experimental`, each well formed. Any other (`tasks`, `extensions`, a key of the
 * future) is left to the SDK.
 */
const CAPABILITY: Record<string, (value: unknown) => boolean> = {
  roots: (v) => isObject(v) && isOptional(v.listChanged, isBoolean),
  sampling: (v) => isObject(v) && isOptional(v.context, isObject) && isOptional(v.tools, isObject),
  elicitation: (v) =>
    isObject(v) &&
    isOptional(v.form, (form) => isObject(form) && isOptional(form.applyDefaults, isBoolean)) &&
    isOptional(v.url, isObject),
  experimental: isObjectOfObjects,
};

/** `InitializeRequestParamsSchema`: a version string, capabilities as above, a `clientInfo` without icons. */
function isPlainInitializeParams(
  params: unknown,
): params is { protocolVersion: string; capabilities: object; clientInfo: object } {
  if (!isObject(params) || !isString(params.protocolVersion)) return false;
  const { capabilities, clientInfo: info } = params;
  if (!isObject(capabilities)) return false;
  for (const key in capabilities)
    if (!Object.hasOwn(CAPABILITY, key) || !CAPABILITY[key]!(capabilities[key])) return false;
  return (
    isObject(info) &&
    isString(info.name) &&
    isString(info.version) &&
    isOptional(info.title, isString) &&
    isOptional(info.websiteUrl, isString) &&
    isOptional(info.description, isString) &&
    info.icons === undefined
  );
}

/**
 * Has `transport` drop the SDK's answers to the handshake's requests, read again by the SDK's
 * server under the ids of `answers` (so that it holds the client's capabilities and info as if it
 * had answered them), once it has compared each with the answer the client got. A difference means
 * this file no longer answers as the SDK does: `onMismatch` says so. The transport's own `send` is
 * back once every answer is in.
 */
export function dropReplayAnswers(
  transport: Transport,
  answers: Map<string, unknown>,
  onMismatch: (ours: string, sdks: string) => void,
): void {
  if (answers.size === 0) return;
  const send = transport.send;
  transport.send = (message: JSONRPCMessage, options) => {
    const id = 'id' in message ? message.id : undefined;
    if (typeof id !== 'string' || !answers.has(id)) return send.call(transport, message, options);
    const ours = JSON.stringify(answers.get(id));
    const sdks = JSON.stringify('result' in message ? message.result : message);
    if (ours !== sdks) onMismatch(ours, sdks);
    answers.delete(id);
    if (answers.size === 0) transport.send = send;
    return Promise.resolve();
  };
}
