/**
 * Adding a plugin entry to a config file, and taking one out, without losing what the file says
 * around it. JSON configs are rewritten through JSON (keys keep their order); JS and TS configs are
 * edited as text: the `plugins` array is found by a scanner that knows strings, template literals
 * and comments, so a comment stays where it was. Anything else (YAML, two `plugins` arrays, a
 * computed one) is no edit: the caller prints the line to add instead.
 */
import { basename, extname } from 'node:path';
import { jsonTextTooLong } from '../json-text.ts';

/** A config entry for one plugin: a module name, or the object form with its settings. */
export type PluginEntry = string | { module: string; isolation?: string; options?: unknown } | McpEntry;

/** An MCP server run as a plugin, as `add` shows it for a server's package. */
export type McpEntry = { name: string; mcp: { command: string; args: string[] } };

export type Edit = { text: string } | { reason: string };

const JSON_FILES = new Set(['.json', '']);
const SCRIPT_FILES = new Set(['.ts', '.mts', '.cts', '.js', '.mjs', '.cjs']);

/** The module a config entry names (an MCP entry names none). */
export function entryModule(entry: unknown): string | undefined {
  if (typeof entry === 'string') return entry;
  const module = (entry as { module?: unknown } | null)?.module;
  return typeof module === 'string' ? module : undefined;
}

/** The entry as the config's own language writes it. */
export function entrySource(entry: PluginEntry, file: string): string {
  if (!SCRIPT_FILES.has(extname(file))) return JSON.stringify(entry);
  if (typeof entry === 'string') return quote(entry);
  const parts = Object.entries(entry).map(([key, value]) => `${key}: ${jsValue(value)}`);
  return `{ ${parts.join(', ')} }`;
}

/** `text` (the content of `file`) with `entry` appended to its plugins. */
export function addEntry(file: string, text: string, entry: PluginEntry): Edit {
  if (isJson(file)) {
    return editJson(file, text, (config) => {
      config.plugins = [...(Array.isArray(config.plugins) ? config.plugins : []), entry];
    });
  }
  if (!SCRIPT_FILES.has(extname(file))) return { reason: `${basename(file)} is not JSON, JavaScript or TypeScript` };
  const code = scan(text);
  const source = entrySource(entry, file);
  const arrays = pluginArrays(text, code);
  if (arrays.length > 1) return { reason: 'it has more than one `plugins` array' };
  const [array] = arrays;
  if (!array && [...text.matchAll(/\bplugins\s*:/g)].some((m) => code[m.index])) {
    return { reason: 'its plugins are not written as a literal array' };
  }
  if (!array) {
    // No plugins yet: the key goes first in the exported object.
    const opener = /export\s+default\s+(?:defineConfig\s*\(\s*)?\{/g;
    const found = [...text.matchAll(opener)].filter((m) => code[m.index] && code[m.index + m[0].length - 1]);
    if (found.length !== 1)
      return { reason: 'it has no `plugins` array, and no single `export default { … }` to add one to' };
    const at = found[0]!.index + found[0]![0].length;
    return { text: `${text.slice(0, at)}\n  plugins: [${source}],${text.slice(at)}` };
  }
  const { open, close } = array;
  const lastLineStart = text.lastIndexOf('\n', close - 1);
  if (lastLineStart > open) {
    // A multi-line array: the entry gets a line of its own after the last one (and after a comment
    // on that line), indented two more than the closing bracket.
    const indent = /^[ \t]*/.exec(text.slice(lastLineStart + 1))![0];
    const line = `\n${indent}  ${source},`;
    const last = elements(text, code, open, close).at(-1);
    if (!last) return { text: text.slice(0, lastLineStart) + line + text.slice(lastLineStart) };
    const comma = hasTrailingComma(text, code, last.end, close) ? '' : ',';
    const eol = text.indexOf('\n', last.end);
    const at = eol === -1 || eol > close ? close : eol;
    return { text: `${text.slice(0, last.end)}${comma}${text.slice(last.end, at)}${line}${text.slice(at)}` };
  }
  const inner = text.slice(open + 1, close).trim();
  const joined = inner === '' ? source : `${inner.replace(/,\s*$/, '')}, ${source}`;
  return { text: `${text.slice(0, open + 1)}${joined}${text.slice(close)}` };
}

/** `text` without the plugin entries that name `module`. */
export function removeEntry(file: string, text: string, module: string): Edit {
  if (isJson(file)) {
    return editJson(file, text, (config) => {
      if (Array.isArray(config.plugins)) config.plugins = config.plugins.filter((e) => entryModule(e) !== module);
    });
  }
  if (!SCRIPT_FILES.has(extname(file))) return { reason: `${basename(file)} is not JSON, JavaScript or TypeScript` };
  const code = scan(text);
  const arrays = pluginArrays(text, code);
  if (arrays.length !== 1)
    return { reason: `it has ${arrays.length || 'no'} \`plugins\` arrays where one was expected` };
  const { open, close } = arrays[0]!;
  const doomed = elements(text, code, open, close).filter((e) => elementModule(text, code, e) === module);
  if (doomed.length === 0) return { reason: `no entry naming ${quote(module)} was found in its plugins array` };
  let out = text;
  for (const e of doomed.reverse()) {
    let start = e.start;
    let end = e.end;
    const trailing = out[end] === ',';
    if (trailing) end++;
    const lineStart = out.lastIndexOf('\n', start - 1) + 1;
    const lineEnd = out.indexOf('\n', end);
    if (
      /^\s*$/.test(out.slice(lineStart, start)) &&
      /^\s*$/.test(out.slice(end, lineEnd === -1 ? undefined : lineEnd))
    ) {
      // The entry had the line to itself: the line goes with it.
      start = lineStart;
      end = lineEnd === -1 ? out.length : lineEnd + 1;
    } else if (trailing) {
      while (out[end] === ' ') end++;
    } else {
      // The last on its line: the comma before it goes instead.
      while (start > open && /\s/.test(out[start - 1]!)) start--;
      if (out[start - 1] === ',') start--;
    }
    out = out.slice(0, start) + out.slice(end);
  }
  return { text: out };
}

function isJson(file: string): boolean {
  const ext = extname(file);
  return JSON_FILES.has(ext) && (ext === '.json' || basename(file) === '.rousseaurc');
}

function editJson(file: string, text: string, change: (config: Record<string, unknown>) => void): Edit {
  let document: Record<string, unknown>;
  const tooLong = jsonTextTooLong(text.length);
  if (tooLong) return { reason: `${basename(file)} holds ${tooLong}` };
  try {
    document = JSON.parse(text) as Record<string, unknown>;
  } catch {
    return { reason: `${basename(file)} is not plain JSON` };
  }
  const inPackage = basename(file) === 'package.json';
  const config = (inPackage ? document.rousseau : document) as Record<string, unknown> | undefined;
  if (!config || typeof config !== 'object' || Array.isArray(config)) return { reason: 'its config is not an object' };
  change(config);
  const indent = /^[ \t]+/m.exec(text)?.[0] ?? '  ';
  return { text: `${JSON.stringify(document, null, indent)}\n` };
}

/**
 * For each character of `text`: true when it is code, false inside a string, a template literal or
 * a comment. Regex literals are not told apart from division; a config has no reason to hold one.
 */
function scan(text: string): boolean[] {
  const code = new Array<boolean>(text.length).fill(true);
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    let end = i;
    if (c === '/' && text[i + 1] === '/') end = text.indexOf('\n', i);
    else if (c === '/' && text[i + 1] === '*') end = text.indexOf('*/', i + 2) + 1;
    else if (c === "'" || c === '"' || c === '`') {
      end = i + 1;
      while (end < text.length && text[end] !== c) end += text[end] === '\\' ? 2 : 1;
    } else continue;
    if (end <= 0) end = text.length - 1;
    for (let j = i; j <= end; j++) code[j] = false;
    i = end;
  }
  return code;
}

const PAIRS: Record<string, string> = { '[': ']', '{': '}', '(': ')' };

/** The index of the bracket that closes the one at `open`, in code. */
function matching(text: string, code: boolean[], open: number): number {
  const stack: string[] = [];
  for (let i = open; i < text.length; i++) {
    if (!code[i]) continue;
    const c = text[i]!;
    if (PAIRS[c]) stack.push(PAIRS[c]);
    else if (c === stack.at(-1)) {
      stack.pop();
      if (stack.length === 0) return i;
    }
  }
  return -1;
}

/** Every `plugins: [ … ]` in code, by its brackets. */
function pluginArrays(text: string, code: boolean[]): { open: number; close: number }[] {
  const out: { open: number; close: number }[] = [];
  for (const m of text.matchAll(/(?:\bplugins|(['"])plugins\1)\s*:\s*\[/g)) {
    const open = m.index + m[0].length - 1;
    if (!code[open] || (m[1] === undefined && !code[m.index])) continue;
    const close = matching(text, code, open);
    if (close !== -1) out.push({ open, close });
  }
  return out;
}

/** The elements of the array between `open` and `close`: their spans, trimmed, comments outside. */
function elements(text: string, code: boolean[], open: number, close: number): { start: number; end: number }[] {
  const out: { start: number; end: number }[] = [];
  let start = -1;
  let end = -1;
  const flush = () => {
    if (start !== -1) out.push({ start, end });
    start = -1;
  };
  for (let i = open + 1; i < close; i++) {
    const c = text[i]!;
    const isComment = !code[i] && isInComment(text, code, i);
    if (code[i] && c === ',') {
      flush();
      continue;
    }
    if (code[i] && PAIRS[c]) {
      const to = matching(text, code, i);
      if (start === -1) start = i;
      end = to + 1;
      i = to;
      continue;
    }
    if (isComment || /\s/.test(c)) continue;
    if (start === -1) start = i;
    end = i + 1;
  }
  flush();
  return out;
}

/** Inside a comment (not a string): the nearest non-code run started with a comment opener. */
function isInComment(text: string, code: boolean[], at: number): boolean {
  let i = at;
  while (i > 0 && !code[i - 1]) i--;
  return text.startsWith('//', i) || text.startsWith('/*', i);
}

function hasTrailingComma(text: string, code: boolean[], from: number, close: number): boolean {
  for (let i = from; i < close; i++) if (code[i] && text[i] === ',') return true;
  return false;
}

/** `text` as a single-quoted JS string. A line break cannot stand in one: it is written as its escape. */
function quote(text: string): string {
  const escaped = text
    .replace(/[\\']/g, '\\$&')
    .replace(/[\n\r\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  return `'${escaped}'`;
}

/**
 * The module an element of the plugins array names, read as JavaScript reads it: a string literal,
 * or the one after the object's own `module:` key (not a `module` deeper in its options, nor text
 * in a comment or a string). Undefined for anything else, or a literal this does not read.
 */
function elementModule(
  text: string,
  code: boolean[],
  { start, end }: { start: number; end: number },
): string | undefined {
  if (text[start] !== '{') return stringValue(text.slice(start, end));
  // The object's own keys: its text with what is nested, and comments, left out.
  let own = '';
  const ownCode: boolean[] = [];
  for (let i = start + 1; i < end - 1; i++) {
    const nested = code[i] && PAIRS[text[i]!];
    own += nested || (!code[i] && isInComment(text, code, i)) ? ' ' : text[i];
    ownCode.push(code[i]!);
    if (nested) i = matching(text, code, i);
  }
  const values = [];
  let from = 0;
  for (let i = 0; i <= own.length; i++) {
    if (i < own.length && (own[i] !== ',' || !ownCode[i])) continue;
    const entry = /^\s*(?:module|'module'|"module")\s*:\s*(.*?)\s*$/s.exec(own.slice(from, i));
    if (entry) values.push(entry[1]!);
    from = i + 1;
  }
  return values.length === 1 ? stringValue(values[0]!) : undefined;
}

const ESCAPES: Record<string, string> = { n: '\n', r: '\r', t: '\t', b: '\b', f: '\f', v: '\v' };

/** The value of a single- or double-quoted JavaScript string literal; undefined for anything else. */
function stringValue(literal: string): string | undefined {
  const q = literal[0];
  if ((q !== "'" && q !== '"') || literal.length < 2 || literal.at(-1) !== q) return undefined;
  let out = '';
  for (let i = 1; i < literal.length - 1; i++) {
    const c = literal[i]!;
    if (c === q || c === '\n' || c === '\r') return undefined; // not one literal
    if (c !== '\\') {
      out += c;
      continue;
    }
    const e = literal[++i]!;
    const hex = e === 'x' ? /^[\da-fA-F]{2}/ : e === 'u' ? /^(?:[\da-fA-F]{4}|\{[\da-fA-F]{1,6}\})/ : undefined;
    if (hex) {
      const digits = hex.exec(literal.slice(i + 1, -1))?.[0];
      const point = digits === undefined ? Number.NaN : Number.parseInt(digits.replace(/[{}]/g, ''), 16);
      if (!(point <= 0x10ffff)) return undefined;
      out += String.fromCodePoint(point);
      i += digits!.length;
    } else if (ESCAPES[e]) out += ESCAPES[e];
    else if (e === '0' && !/\d/.test(literal[i + 1]!)) out += '\0';
    else if (/\d/.test(e))
      return undefined; // a legacy octal escape
    else if (e === '\r')
      i += literal[i + 1] === '\n' ? 1 : 0; // a line continuation
    else if (e !== '\n' && e !== '\u2028' && e !== '\u2029') out += e;
  }
  return out;
}

/** A JSON value written as a JS literal: keys bare where they can be, strings single-quoted. */
function jsValue(value: unknown): string {
  if (typeof value === 'string') return quote(value);
  if (Array.isArray(value)) return `[${value.map(jsValue).join(', ')}]`;
  if (value && typeof value === 'object') {
    const parts = Object.entries(value).map(
      ([k, v]) => `${/^[A-Za-z_$][\w$]*$/.test(k) ? k : quote(k)}: ${jsValue(v)}`,
    );
    return parts.length ? `{ ${parts.join(', ')} }` : '{}';
  }
  return JSON.stringify(value);
}
