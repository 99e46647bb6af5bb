/**
 * Call ids: one random UUID per process whose last 12 hex digits count the calls. As unique as a
 * UUID per call (74 random bits tell processes apart), without drawing random bytes on every call.
 * The first 8 of those digits change once in 65536 calls: a call only looks up its last 4.
 * The UUID is drawn at the first call: `node:crypto` costs a host that only loads plugins ~28 M
 * instructions to import.
 */
let callIdPrefix = '';
const HEX_BYTE = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));
let callCount = 0;
let countHigh = -1;
let idHead = '';

/** The next call's id, in a UUID's shape: the process's 24 random characters, then the count in 12 hex digits. */
export function nextCallId(): string {
  const low = callCount % 65536;
  const high = (callCount - low) / 65536;
  callCount++;
  if (high !== countHigh) {
    countHigh = high;
    callIdPrefix ||= process.getBuiltinModule('node:crypto').randomUUID().slice(0, 24);
    idHead = callIdPrefix + high.toString(16).padStart(8, '0');
  }
  return idHead + HEX_BYTE[low >> 8] + HEX_BYTE[low & 255];
}
