/**
 * Plain-code checks of the commonest MCP messages, for the stdio hot path. The SDK checks every
 * message with zod several times over (the transport parses it as a union, the protocol layer
 * tries it against each message type in turn, a handler parses its params again), which costs more
 * CPU than the host's whole call pipeline. Each check here accepts only a subset of what the SDK's
 * schema accepts, and says nothing (false, undefined) about the rest: anything it does not
 * recognise goes the SDK's way, so a message is accepted or refused exactly as the SDK would, with
 * the SDK's own error. Written against `@modelcontextprotocol/sdk` 1.32.2 (`types.js`); the version
 * check in test/mcp/server.test.ts has these read again on an upgrade. Nothing here imports the SDK
 * (types only): the `start --mcp` handshake (handshake.ts) reads messages with these checks before
 * the SDK has loaded.
 */
import type { JSONRPCRequest } from '@modelcontextprotocol/sdk/types.js';

type Plain = Record<string, unknown>;

/** The SDK's `RELATED_TASK_META_KEY` (test/mcp/shapes.test.ts compares them). */
export const RELATED_TASK_META_KEY = 'io.modelcontextprotocol/related-task';

/**
 * A JSON object (not an array, not null) that zod's `z.object` and `z.record` read as it is: zod
 * rebuilds each object key by key, and an own `__proto__` key (JSON.parse makes one) does not
 * survive that, so an object holding one is left to the SDK wherever these checks meet it.
 */
export function isObject(value: unknown): value is Plain {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !Object.hasOwn(value, '__proto__');
}

/** `RequestIdSchema`, `ProgressTokenSchema`: a string or an integer. */
function isIdLike(value: unknown): boolean {
  return typeof value === 'string' || (typeof value === 'number' && Number.isSafeInteger(value));
}

/** `RequestMetaSchema` (loose): any keys, a string or integer `progressToken`; no related task (checked by the SDK). */
export function isPlainMeta(meta: unknown): boolean {
  if (meta === undefined) return true;
  return (
    isObject(meta) &&
    (meta.progressToken === undefined || isIdLike(meta.progressToken)) &&
    meta[RELATED_TASK_META_KEY] === undefined
  );
}

/**
 * A message that `JSONRPCRequestSchema` (strict) accepts, and that no response schema does: only
 * `jsonrpc`, `id`, `method` and `params`, each well formed.
 */
export function isPlainRequest(message: unknown): message is JSONRPCRequest {
  if (!isObject(message)) return false;
  for (const key in message)
    if (key !== 'jsonrpc' && key !== 'id' && key !== 'method' && key !== 'params') return false;
  if (message.jsonrpc !== '2.0' || !isIdLike(message.id) || typeof message.method !== 'string') return false;
  const { params } = message;
  return params === undefined || (isObject(params) && isPlainMeta(params._meta));
}

/** What the `tools/call` handler reads of its params. */
export interface CallParams {
  name: string;
  arguments?: Record<string, unknown> | undefined;
  _meta?: { progressToken?: string | number; [key: string]: unknown } | undefined;
}

/**
 * The params of a `tools/call` request when `CallToolRequestSchema` accepts them as they are: only
 * `name` (a string), `arguments` (an object) and `_meta`; no task. Undefined for anything else,
 * which the caller parses with the schema (and answers as the SDK would).
 */
export function plainCallParams(request: unknown): CallParams | undefined {
  const params = isObject(request) ? request.params : undefined;
  if (!isObject(params)) return undefined;
  for (const key in params) if (key !== 'name' && key !== 'arguments' && key !== '_meta') return undefined;
  if (typeof params.name !== 'string') return undefined;
  const args = params.arguments;
  if (args !== undefined && !isObject(args)) return undefined;
  if (!isPlainMeta(params._meta)) return undefined;
  return params as unknown as CallParams;
}
