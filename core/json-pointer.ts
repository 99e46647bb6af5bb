/** JSON pointers (RFC 6901), the one place their escaping lives. */

/** Escapes one segment: `~` → `~0`, `/` → `~1`. */
export function escapeSegment(segment: string): string {
  return segment.replace(/~/g, '~0').replace(/\//g, '~1');
}

/** The unescaped segments of a pointer (`''` → `[]`). */
export function segments(pointer: string): string[] {
  return pointer
    .split('/')
    .slice(1)
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
}

/**
 * The value a path of segments reaches, following own properties of objects and arrays only: never
 * a prototype's (a field written onto `Object.prototype`), nor a string's `length`. `undefined` when
 * it reaches nothing (JSON values hold no `undefined` of their own).
 */
export function valueAt(root: unknown, path: readonly string[]): unknown {
  let value = root;
  for (const key of path) {
    if (value === null || typeof value !== 'object' || !Object.hasOwn(value, key)) return undefined;
    value = (value as Record<string, unknown>)[key];
  }
  return value;
}
