/**
 * What one check of a value against a schema may cost the host's thread, which it holds until the
 * check ends: the bound, in steps, and the meter of the work no count made before the check can see.
 *
 * A step is about what meeting one schema costs (2–5 ns). Before a check, shared-validators.ts
 * counts values times the schemas each may meet. A string counts as one value there, yet a
 * `format` or `pattern` reads it to its end: 1,000 `format: "email"` schemas against one 1 MB
 * string held the thread 9 s. So every check that reads a string character by character charges
 * its reading here as it starts, and the check stops past the bound: the charge is exact (only the
 * schemas the string actually meets), and a check that stops has cost at most the bound.
 */
import { thousands } from './thousands.ts';

/**
 * The steps one check may take, for each of its two bounds (values times schemas met, counted
 * before; strings read, metered during): at 2–5 ns a step, 0.1–0.25 s of the host's thread each.
 * A 1,000,000-value input (6.9 MB of JSON, under the MCP stdio limit) against a schema that meets
 * 16,000 schemas per value would have held it for a minute.
 */
export const MAX_CHECK_STEPS = 50_000_000;

/**
 * Steps per character read, measured on Node 22 at the worst of seven kinds of text, 1 MB each:
 * typebox's formats read a character in ≤ 5 ns (`email` over `a.a.a.…`), `idn-hostname` in 26 ns;
 * counting code points (`minLength`, `maxLength` between the limit and twice it) 2.2 ns. A
 * `pattern` runs on V8's linear engine at up to 93 ns per character times the written size of the
 * pattern (linear-regex.ts).
 */
export const SCAN_STEPS = {
  char: 2,
  idnChar: 10,
  patternUnit: 25,
  /** A unit of `format: "regex"`'s cost (linear-regex.ts): its 4,000-unit budget takes up to 20 ms, 5 µs a unit. */
  regexUnit: 1_250,
} as const;

/** Thrown out of a check whose reading of strings passed MAX_CHECK_STEPS: the check did not finish. */
export class CheckTooCostly extends Error {
  override readonly name = 'CheckTooCostly';
  constructor() {
    super(
      `its strings would be read past ${thousands(MAX_CHECK_STEPS)} steps by the schema's format, pattern and length checks (each character a check reads counts, and a pattern's character counts its written size; the host reads at most that per call, on its own thread)`,
    );
  }
}

/** The steps charged so far by the check under way on this thread, or undefined between checks. */
let charged: number | undefined;

/** Charges `steps` of reading to the check under way; throws CheckTooCostly past the bound. */
export function chargeScan(steps: number): void {
  if (charged === undefined) return;
  charged += steps;
  if (charged > MAX_CHECK_STEPS) throw new CheckTooCostly();
}

/**
 * Runs `check(value)` with its reading metered. A check inside another (a `patternProperties`
 * value's validator, run by the outer one) charges the outer check's meter: one value, one bound.
 * The check and its value are passed apart: a closure per call would cost the hot path.
 */
export function metered<V, T>(check: (value: V) => T, value: V): T {
  if (charged !== undefined) return check(value);
  charged = 0;
  try {
    return check(value);
  } finally {
    charged = undefined;
  }
}
