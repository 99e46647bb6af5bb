/**
 * The one place regexes from outside the host are compiled: policy rules, glob patterns and the
 * `pattern`s of plugin and MCP schemas. Such a regex runs on the host thread against text a model
 * controls, so it must match in bounded time: each is vetted for V8's linear-time engine, and a
 * backtracking match that runs away falls back to that engine (both switched on here, process-wide;
 * neither changes a match result). The engine takes no `u`, `i` or `v` flag, no backreference, no
 * lookaround and no counted repeat above 16, so a regex that needs one is refused with a reason.
 * See docs/policy.md and docs/plugins.md.
 */
import { chargeScan, SCAN_STEPS } from './check-budget.ts';
import { messageOf } from './errors.ts';

let available: boolean | undefined;
function linearEngine(): boolean {
  if (available === undefined) {
    // Taken here, not imported: a host whose plugins have no `pattern` and no policy regex skips it.
    const v8 = process.getBuiltinModule('node:v8');
    v8.setFlagsFromString('--enable-experimental-regexp-engine');
    v8.setFlagsFromString('--enable-experimental-regexp-engine-on-excessive-backtracks');
    try {
      // A literal with the `l` flag would be a syntax error before the flag is on.
      // biome-ignore lint/complexity/useRegexLiterals: the flag exists only once V8's option is set
      available = new RegExp('a', 'l').test('a');
    } catch {
      available = false;
    }
  }
  return available;
}

/**
 * `source` compiled with `flags` (none of `u`, `i`, `v`), after checking that V8's linear engine can
 * run it. Throws a SyntaxError for an invalid regex, an Error saying why for one that cannot be linear.
 */
export function linearRegExp(source: string, flags = '', shown = source): RegExp {
  // First: the fallback must be on before any regex of ours is compiled.
  if (!linearEngine())
    throw new Error(
      'this Node.js has no linear-time regular expression engine (V8 --enable-experimental-regexp-engine)',
    );
  const re = new RegExp(source, flags);
  let linear: RegExp;
  try {
    linear = new RegExp(source, `${flags}l`);
  } catch {
    throw new Error(
      `the regular expression /${shown}/ uses a backreference, a lookaround or a counted repeat over 16 (such as {1,64}), which cannot be matched in bounded time; rewrite it without them`,
    );
  }
  // V8 falls back to the linear engine only after a match backtracks too much, and a pattern that
  // backtracks a little from each of many start positions never gets there: /[a-z]*q0/ held the
  // thread 3.6 s over 40,000 letters (the linear engine: 75 ms). Past BACKTRACK_MAX_TEXT characters
  // the linear engine runs the match; below it backtracking is faster (~20 ns against ~0.5 µs for a
  // short name) and bounded by the text's length (a cubic pattern over 64 letters: ~1 ms).
  Object.defineProperty(re, 'test', {
    configurable: true,
    value: (text: string) => RegExp.prototype.test.call(text.length <= BACKTRACK_MAX_TEXT ? re : linear, text),
  });
  return re;
}

/** The longest text a backtracking match runs on; `linearRegExp` says why. */
export const BACKTRACK_MAX_TEXT = 64;

/** Text length × written pattern size a schema pattern may test: ~0.1 s of the linear engine at its worst, measured. */
const PATTERN_BUDGET = 2_000_000;

const longestText = new WeakMap<RegExp, number>();

/** The longest text a schema pattern made by `schemaPatternRegExp` tests; undefined for any other value. */
export function patternTextLimit(pattern: unknown): number | undefined {
  return pattern instanceof RegExp ? longestText.get(pattern) : undefined;
}

/**
 * What checking a value against JSON Schema's `format: "regex"` may cost: typebox compiles it with
 * the `u` flag, about 1 µs a character, and each `\p{…}` class costs V8 ~120 µs to build (200,000 of
 * them, 1 MB of input, held the host 45 s). A value over REGEX_FORMAT_BUDGET is not taken as a
 * regex (~20 ms at worst); schema-errors.ts says why.
 */
export const REGEX_FORMAT_BUDGET = 4_000;
const PROPERTY_CLASS_COST = 25;

export function regexFormatCost(text: string): number {
  if (text.length > REGEX_FORMAT_BUDGET) return text.length;
  let classes = 0;
  for (let i = text.indexOf('\\'); i !== -1; i = text.indexOf('\\', i + 2))
    if (text[i + 1] === 'p' || text[i + 1] === 'P') classes++;
  return text.length + PROPERTY_CLASS_COST * classes;
}

/** JSON Schema's `format: "regex"` within REGEX_FORMAT_BUDGET: a valid ECMA-262 regex with the `u` flag. */
export function isRegexFormat(text: string): boolean {
  const cost = regexFormatCost(text);
  // Working out the cost reads the text; building the regex costs ~1 µs a unit (check-budget.ts).
  chargeScan(text.length * SCAN_STEPS.char + (cost > REGEX_FORMAT_BUDGET ? 0 : cost * SCAN_STEPS.regexUnit));
  if (cost > REGEX_FORMAT_BUDGET) return false;
  try {
    new RegExp(text, 'u');
    return true;
  } catch {
    return false;
  }
}

/** Counted repeats past this length of expanded source are refused: the engine's cost grows with it. */
const MAX_EXPANDED_CHARS = 20_000;

/**
 * A JSON Schema `pattern` (ECMA-262 with the `u` flag, as JSON Schema reads it) as a linear regex
 * without `u`. Counted repeats are written out (`a{2,4}` → `aa(?:a(?:a)?)?`), since the engine
 * refuses those over 16; groups stop capturing, which `test` never reads. What `u` gives and this
 * cannot is refused: `\p{…}` classes and characters outside the Basic Multilingual Plane. What is
 * lost: `.`, `\S`, `\W`, `\D` and negated classes match one UTF-16 unit, so an astral character
 * (an emoji) counts as two of them.
 */
export function schemaPatternRegExp(pattern: string): RegExp {
  try {
    new RegExp(pattern, 'u');
  } catch (error) {
    throw new Error(`pattern is not a valid regular expression: ${messageOf(error)}`);
  }
  const source = expandRepeats(pattern);
  let re: RegExp;
  try {
    re = linearRegExp(source);
  } catch {
    // Backreferences were refused and counted repeats written out: a lookaround is what is left.
    throw new Error(
      `pattern /${pattern}/ uses a lookaround ((?=…), (?!…), (?<=…), (?<!…)), which cannot be matched in bounded time`,
    );
  }
  // Linear is not cheap: the engine's work grows with the text's length times the pattern's written
  // size, a few tens of ns a unit here, so a hostile `(?:a{1,16}){1,40}b` took 16 s on 100 KB. A
  // text past the budget is refused without running the match (schema-errors.ts says why).
  const longest = Math.max(1, Math.floor(PATTERN_BUDGET / source.length));
  const test = re.test;
  const perChar = source.length * SCAN_STEPS.patternUnit;
  Object.defineProperty(re, 'test', {
    value: (text: string) => {
      if (text.length > longest) return false;
      chargeScan(text.length * perChar);
      return test(text);
    },
  });
  longestText.set(re, longest);
  return re;
}

function expandRepeats(pattern: string): string {
  let out = '';
  // Where each open group starts in `out`, and where the last complete atom starts.
  const groups: number[] = [];
  let atom = -1;
  let inClass = false;
  const refuse = (what: string): never => {
    throw new Error(
      `pattern /${pattern}/ uses ${what}, which needs the u flag; the host matches patterns without it to keep them linear`,
    );
  };
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    const code = c.charCodeAt(0);
    if (code >= 0xd800 && code <= 0xdfff) refuse('a character outside the Basic Multilingual Plane');
    if (c === '\\') {
      const next = pattern[i + 1]!;
      if (next === 'p' || next === 'P') refuse('a Unicode property class (\\p{…})');
      if (next === 'u' && pattern[i + 2] === '{') refuse('a code point escape (\\u{…})');
      if (next === 'u' && /^[dD][89abAB]/.test(pattern.slice(i + 2, i + 4)))
        refuse('a surrogate escape (an astral character)');
      // Checked here, not by the engine: groups no longer capture, so `\1` would read as an octal escape.
      if (/[1-9k]/.test(next))
        throw new Error(`pattern /${pattern}/ uses a backreference, which cannot be matched in bounded time`);
      if (!inClass) atom = out.length;
      out += c + next;
      i++;
    } else if (inClass) {
      out += c;
      if (c === ']') inClass = false;
    } else if (c === '[') {
      atom = out.length;
      inClass = true;
      out += c;
    } else if (c === '(') {
      groups.push(out.length);
      if (pattern[i + 1] === '?') {
        // Named groups become plain ones (a name written out twice is a syntax error); `(?:`, `(?=`… stay.
        const named = /^\?<([^=!][^>]*)>/.exec(pattern.slice(i + 1));
        if (named) {
          out += '(?:';
          i += named[0].length;
          continue;
        }
        out += '(';
      } else {
        out += '(?:';
      }
    } else if (c === ')') {
      atom = groups.pop()!;
      out += c;
    } else if (c === '{') {
      // The u flag makes a `{` that is no quantifier a syntax error, so this always matches.
      const [text, min, comma, max] = /^\{(\d+)(,?)(\d*)\}/.exec(pattern.slice(i))!;
      const lazy = pattern[i + text.length] === '?' ? '?' : '';
      const body = out.slice(atom);
      const low = Number(min);
      const high = !comma ? low : max === '' ? Infinity : Number(max);
      if (high !== Infinity && high - low > MAX_GROUP_DEPTH) throw tooDeep(pattern);
      let tail = high === Infinity ? `(?:${body})*${lazy}` : '';
      for (let n = high === Infinity ? 0 : high - low; n > 0; n--) tail = `(?:${body}${tail})?${lazy}`;
      out = out.slice(0, atom) + `(?:${body})`.repeat(low) + tail;
      if (out.length > MAX_EXPANDED_CHARS) {
        throw new Error(
          `pattern /${pattern}/ repeats too much: written out for the linear engine it passes ${MAX_EXPANDED_CHARS} characters`,
        );
      }
      i += text.length - 1 + lazy.length;
    } else {
      if (c !== '|' && c !== '*' && c !== '+' && c !== '?') atom = out.length;
      out += c;
    }
  }
  if (groupDepth(out) > MAX_GROUP_DEPTH) throw tooDeep(pattern);
  return out;
}

/**
 * Groups nested in a written-out pattern, at most: V8's regex compiler runs out of memory and ends
 * the process (no exception to catch) somewhere past 2,500 (`x{0,2800}`, nine characters, did),
 * and it compiles a pattern at its first match, on the host's thread.
 */
const MAX_GROUP_DEPTH = 1000;

function tooDeep(pattern: string): Error {
  return new Error(
    `pattern /${pattern}/ repeats too much: written out for the linear engine it nests more than ${MAX_GROUP_DEPTH} groups`,
  );
}

/** How deep groups nest in a regex source (escapes and classes skipped). */
function groupDepth(source: string): number {
  let depth = 0;
  let deepest = 0;
  let inClass = false;
  for (let i = 0; i < source.length; i++) {
    const c = source[i];
    if (c === '\\') i++;
    else if (inClass) inClass = c !== ']';
    else if (c === '[') inClass = true;
    else if (c === '(') deepest = Math.max(deepest, ++depth);
    else if (c === ')') depth--;
  }
  return deepest;
}
