/**
 * What may cross from a worker to the host as a tool's result: plain JSON data (and `Date`).
 *
 * Structured clone would carry a BigInt, a cycle, a Map or an Error and let them fail or shrink later
 * (JSON turns a Map into `{}` and an Error into `{}`), and it throws on a function. Checking before
 * sending turns each of these into one clear `tool_error` that names the path. This differs from
 * `copyJsonValue` (safe-json.ts), which guards *input*: it rejects keys such as `constructor`, and
 * does not look for cycles, since parsed JSON cannot have any.
 */
import { thousands } from '../thousands.ts';

/** Why `value` cannot be sent as plain data, naming where in it; `undefined` when it can. */
export function unsendable(value: unknown): string | undefined {
  return check(value, '', []);
}

function check(value: unknown, path: string, ancestors: object[]): string | undefined {
  const at = path ? `at ${path}` : 'the result';
  switch (typeof value) {
    case 'string':
    case 'boolean':
    case 'undefined':
      return undefined;
    case 'number':
      return Number.isFinite(value) ? undefined : `${at} is ${value}, which JSON cannot carry`;
    case 'bigint':
      return `${at} is a BigInt (${value}n); return it as a string or a number`;
    case 'function':
      return `${at} is a function`;
    case 'symbol':
      return `${at} is a symbol`;
  }
  if (value === null || value instanceof Date) return undefined;
  const object = value as object;
  if (ancestors.includes(object)) return `${at} is a circular reference`;
  if (object instanceof Error) return `${at} is an Error ("${object.message}"); throw it instead of returning it`;
  const proto = Object.getPrototypeOf(object);
  if (!Array.isArray(object) && proto !== Object.prototype && proto !== null) {
    return `${at} is a ${(proto as { constructor?: { name?: string } }).constructor?.name || 'non-plain'} object, not plain JSON data`;
  }
  ancestors.push(object);
  for (const [key, item] of Object.entries(object)) {
    const why = check(item, `${path}/${key}`, ancestors);
    if (why) return why;
  }
  ancestors.pop();
  return undefined;
}

/**
 * The deepest a message may nest. The host's deserializer (a thread's message, a process's IPC)
 * recurses once a level, with less stack than the sender: a result 2,000 levels deep was dropped
 * unread by a thread's port (the call timed out) and ended a host reading it from a process.
 */
export const MAX_SENT_DEPTH = 1_000;

/** Where `tooLargeToSend`'s walk leaves an object: no value a plugin sends can be it. */
const LEAVE = Symbol('leave');

/**
 * Why `value`, copied by structured clone, is too large for the host to take: deeper than
 * MAX_SENT_DEPTH, or more than `maxChars` characters of text (bytes of binary data counted alike).
 * The clone copies an object once however many places hold it, but a string in full each time,
 * and a string built by doubling is small in the heap and whole in its copy: a value the plugin's
 * heap holds easily may take the host's memory once copied there. `undefined` when it is not.
 */
export function tooLargeToSend(value: unknown, maxChars: number): string | undefined {
  const seen = new Set<object>();
  // Depth first; LEAVE, pushed below an object's values, marks where the walk climbs back out of it
  // (a depth per stacked value cost twice as much: 16 k instructions a small message, not 5 k)
  const stack: unknown[] = [value];
  let left = maxChars;
  let depth = 0;
  while (stack.length > 0) {
    const item = stack.pop();
    if (typeof item === 'string') left -= item.length;
    else if (item === LEAVE) depth--;
    else if (item !== null && typeof item === 'object' && !seen.has(item)) {
      if (depth >= MAX_SENT_DEPTH) return `it nests deeper than ${thousands(MAX_SENT_DEPTH)} levels`;
      seen.add(item);
      depth++;
      stack.push(LEAVE);
      // An Error's clone carries its message, stack and cause, none of them an enumerable key
      if (item instanceof Error) stack.push(item.message, item.stack, item.cause);
      if (ArrayBuffer.isView(item) || item instanceof ArrayBuffer) left -= item.byteLength;
      else if (item instanceof Map || item instanceof Set) for (const entry of item) stack.push(entry);
      else {
        // An array's indices cross as numbers, and only those it holds (a sparse array's holes do not)
        const keyed = !Array.isArray(item);
        for (const key of Object.keys(item)) {
          if (keyed) left -= key.length;
          stack.push((item as Record<string, unknown>)[key]);
        }
      }
    }
    if (left < 0)
      return `it holds over ${thousands(maxChars)} characters of text once copied, more than the plugin's heap (memoryMb) holds: a string held in many places is copied to the host once for each`;
  }
  return undefined;
}
