/**
 * count_words: a pure tool, in the shape every tool should have: a strict schema with every
 * property described, work that yields and stops when `ctx.signal` aborts, and an output whose size
 * is bounded whatever the input.
 */
import Type from 'typebox';
import { defineTool } from 'rousseau-host';

const MAX_TEXT_CHARS = 1_000_000;
const DEFAULT_TOP = 10;
const MAX_TOP = 50;
/** Longer words are cut in the listing, so `top` lines can never add up to more than a few KiB. */
const MAX_WORD_CHARS = 40;
/** Words counted between two checks of the signal. */
const WORDS_PER_SLICE = 20_000;

// `matchAll` clones the regex, so this module-level constant keeps no state between calls; a
// shared /g regex driven by `exec` would (its lastIndex), and two concurrent calls would corrupt it.
const WORD = /[\p{L}\p{N}]+(?:['’-][\p{L}\p{N}]+)*/gu;

export const countWords = defineTool({
  name: 'count_words',
  description:
    'Count the words of a text and list the most frequent ones. ' +
    `Input: text (at most ${MAX_TEXT_CHARS.toLocaleString('en-US')} characters), top (how many words to list, 1-${MAX_TOP}, default ${DEFAULT_TOP}), ` +
    'ignore_case (default true). Output: a first line "<N> words, <M> distinct", then one "<word>: <count>" line per word, ' +
    'most frequent first (ties in alphabetical order).',
  inputSchema: Type.Object(
    {
      text: Type.String({
        description: `The text to count, at most ${MAX_TEXT_CHARS} characters.`,
        maxLength: MAX_TEXT_CHARS,
      }),
      top: Type.Optional(
        Type.Integer({
          description: `How many of the most frequent words to list, 1 to ${MAX_TOP}.`,
          minimum: 1,
          maximum: MAX_TOP,
          default: DEFAULT_TOP,
        }),
      ),
      ignore_case: Type.Optional(
        Type.Boolean({ description: 'Count "The" and "the" as one word. Default true.', default: true }),
      ),
    },
    { additionalProperties: false },
  ),
  annotations: { title: 'Count words', readOnly: true, idempotent: true },
  async execute({ text, top = DEFAULT_TOP, ignore_case = true }, ctx) {
    const counts = new Map<string, number>();
    let total = 0;
    for (const [match] of text.matchAll(WORD)) {
      const word = ignore_case ? match.toLowerCase() : match;
      counts.set(word, (counts.get(word) ?? 0) + 1);
      // A long synchronous loop holds the thread the tool runs in: the host could answer `timeout`
      // but not stop it. Yield now and then, and give up as soon as the call is aborted.
      if (++total % WORDS_PER_SLICE === 0) {
        await new Promise<void>((resolve) => setImmediate(resolve));
        ctx.signal.throwIfAborted();
      }
    }
    const ranked = [...counts].sort(([a, m], [b, n]) => n - m || (a < b ? -1 : a > b ? 1 : 0)).slice(0, top);
    const lines = ranked.map(
      ([word, n]) => `${word.length > MAX_WORD_CHARS ? `${word.slice(0, MAX_WORD_CHARS)}…` : word}: ${n}`,
    );
    const hidden = counts.size - ranked.length;
    return [
      `${total} words, ${counts.size} distinct`,
      ...lines,
      ...(hidden > 0 ? [`(${hidden} more distinct words not listed)`] : []),
    ].join('\n');
  },
});
