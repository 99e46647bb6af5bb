/**
 * What a model server's stream may make the host hold. The server says where each piece of a turn
 * goes (a content block's, a tool call's or an output item's index) and how much of it comes; both
 * are checked here, for every provider that reads a stream, before anything is stored.
 *
 * An index is an array position the providers store by: `"__proto__"` there was the array's
 * prototype (OpenAI's fragments then wrote `id`, `name` and `arguments` onto every array of the
 * host), and 4294967294 made an array of that length, whose holes reading the turn back walked one
 * by one on the host's thread for minutes. Text and arguments are bounded together: a stream that
 * never ends, each event under the 16 MiB an event may hold, grew the turn until the host ran out
 * of memory.
 */
import { thousands } from '../../thousands.ts';
import { ProviderError } from '../messages.ts';

/** The highest index a turn's block, call or output item may take: far past the calls of any real turn. */
export const MAX_STREAM_INDEX = 9_999;

/** The most characters of text and tool-call arguments one turn may hold, together. */
export const MAX_TURN_CHARS = 16 * 1024 * 1024;

/**
 * `index` as an array position from 0 to MAX_STREAM_INDEX; `bad_response` naming it otherwise.
 * `who` names the API. A provider that appends where the server gives no index passes the length
 * here too: a turn of endless unindexed pieces is bounded the same way.
 */
export function streamIndex(who: string, index: unknown): number {
  if (Number.isInteger(index) && (index as number) >= 0 && (index as number) <= MAX_STREAM_INDEX)
    return index as number;
  throw new ProviderError(
    'bad_response',
    `${who} sent a stream index ${JSON.stringify(index)?.slice(0, 100)}: the host takes indexes from 0 to ${thousands(MAX_STREAM_INDEX)}`,
  );
}

/** Counts one turn's text and arguments as they stream; the function returned throws `bad_response` once they pass MAX_TURN_CHARS. */
export function turnSize(who: string): (piece: unknown) => void {
  let chars = 0;
  return (piece) => {
    // A piece is whatever JSON the server sent there, stored as the text it becomes: counted as
    // that text. Its own `length` ({"length": "a"}) made the count a string, and the bound never held.
    if (piece != null) chars += typeof piece === 'string' ? piece.length : String(piece).length;
    if (chars > MAX_TURN_CHARS)
      throw new ProviderError(
        'bad_response',
        `${who} sent a turn of over ${thousands(MAX_TURN_CHARS)} characters of text and tool-call arguments, more than any model's output limit: the stream was ended`,
      );
  };
}
