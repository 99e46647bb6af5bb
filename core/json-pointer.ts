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
