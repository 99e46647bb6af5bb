/**
 * grep's regular expression runs in a worker thread. The pattern comes from the model, and a
 * backtracking one (`(a+)+$`) can run for minutes on a short line; in the host's thread (the fs
 * plugin is inline) that would freeze every call and the agent loop with it. A worker can be
 * terminated mid-match, so a file that takes longer than its budget ends the search with a clear
 * error instead. The worker's code is inline (eval), so it exists the same from source and bundled.
 */
import { once } from 'node:events';
import { Worker } from 'node:worker_threads';
import { abortable } from '../../core/abortable.ts';
import { FsToolError } from './errors.ts';

/** Time one batch of files (at most 4 MiB) may take to match; a linear pattern needs a few ms. */
export const MATCH_BUDGET_MS = 2000;

const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const regex = new RegExp(workerData.source, workerData.flags);
parentPort.on('message', (texts) => {
  parentPort.postMessage(texts.map((text) => {
    const lines = text.split('\\n');
    const hits = [];
    for (let i = 0; i < lines.length; i++) if (regex.test(lines[i])) hits.push(i);
    return hits;
  }));
});
`;

export class RegexWorker {
  readonly #worker: Worker;
  readonly #pattern: string;
  #failure: Error | undefined;

  /** `regex` has been compiled once in this thread already, so its syntax is known to be valid. */
  constructor(regex: RegExp) {
    this.#pattern = regex.source;
    this.#worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: { source: regex.source, flags: regex.flags },
      execArgv: [], // not the host's loaders (tsx): plain JavaScript starts fastest
      resourceLimits: { maxOldGenerationSizeMb: 64 },
    });
    this.#worker.on('error', (error) => (this.#failure = error));
    this.#worker.unref();
  }

  /**
   * For each text, the indices of its lines that match. `files` names them for the error when the
   * budget runs out. Throws then, and when the signal aborts.
   */
  match(texts: string[], files: string[], signal: AbortSignal): Promise<number[][]> {
    if (this.#failure) return Promise.reject(this.#failure);
    // `once` also rejects on the worker's 'error'; its listeners left after a timeout or an abort go
    // with the worker, which grep closes then.
    const reply = once(this.#worker, 'message') as Promise<[number[][]]>;
    this.#worker.postMessage(texts);
    return abortable(reply, {
      signal,
      timeoutMs: MATCH_BUDGET_MS,
      onTimeout: () =>
        new FsToolError(
          'pattern_too_slow',
          `pattern /${this.#pattern}/ took over ${MATCH_BUDGET_MS} ms on ${files.length === 1 ? files[0] : `${files.length} files (${files[0]}, …)`} and was stopped (nested quantifiers such as (a+)+ backtrack exponentially); simplify it`,
        ),
    }).then(([hits]) => hits);
  }

  close(): Promise<number> {
    return this.#worker.terminate();
  }
}
