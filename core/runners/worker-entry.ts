/**
 * A plugin's worker thread or process (bundled to dist/worker.js). It imports the plugin here, with
 * the same loaders and the same instantiation as the inline runner, so a module that hangs or
 * loops while loading blocks only this thread or process; then it sends the reports the host's
 * contract check reads, and runs calls. Logs and progress are relayed to the host, rate-limited;
 * results are checked to be plain data before they are sent (wire.ts).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { parentPort, workerData } from 'node:worker_threads';
import { CallTable } from '../call-table.ts';
import type { Authorization, ElicitResult, SampleResult } from '../contract.ts';
import { HostError, hostError, messageOf } from '../errors.ts';
import { isLogLevel, LOG_LEVELS, type LogLevel } from '../log.ts';
import type { Progress } from '../types.ts';
import { trackChildProcesses } from './child-processes.ts';
import { MAX_RELAYED_PER_SECOND, RelayBudget } from './relay-budget.ts';
import { type ImportedPlugin, importPlugin } from './import-plugin.ts';
import { instantiatePlugin, type PluginInstance } from './plugin-instance.ts';
import { CallContext, type CallPort, portLogger } from './tool-context.ts';
import { delegateWatching } from './watchdog.ts';
import { tooLargeToSend, unsendable } from './wire.ts';
import { UNHANDLED_REJECTION, type FromWorker, type ToWorker, type WorkerData } from './worker-protocol.ts';

/** How long `close` waits for the plugin's child processes to die after SIGKILL. */
const CHILD_GRACE_MS = 1000;

/** The host at the other end: the thread's port, or the IPC channel of a process of its own. */
interface Channel {
  post(message: FromWorker): void;
  onMessage(listener: (message: ToWorker) => void): void;
  /** Tells the host that call `id`'s `execute` is about to run (before it runs: it may never return). */
  started(id: number): void;
  ref(): void;
  unref(): void;
}

const lastStarted = parentPort ? (workerData as WorkerData).lastStarted : undefined;
const channel: Channel = parentPort
  ? {
      post: (message) => parentPort!.postMessage(message),
      onMessage: (listener) => parentPort!.on('message', listener),
      started: (id) => {
        if (lastStarted) Atomics.store(lastStarted, 0, id);
      },
      ref: () => parentPort!.ref(),
      unref: () => parentPort!.unref(),
    }
  : {
      // Once the host is gone there is no one to tell: the 'disconnect' handler below ends the process.
      post: (message) => void (process.connected && process.send!(message)),
      onMessage: (listener) => process.on('message', listener as (message: unknown) => void),
      started: (id) => post({ type: 'started', id }),
      ref: () => process.channel?.ref(),
      unref: () => process.channel?.unref(),
    };
const data: WorkerData = parentPort ? (workerData as WorkerData) : await initMessage();
const threshold = LOG_LEVELS.indexOf(isLogLevel(data.logLevel) ? data.logLevel : 'info');
const lifetime = new AbortController();
/** The plugin's own logger (setup, dispose), outside any call: its lines go to the host's logger for this plugin. */
const pluginLog = portLogger({
  log(level, message, meta) {
    if (LOG_LEVELS.indexOf(level) > threshold) return;
    relay({ type: 'log', level, message, ...(meta ? { meta } : {}) });
  },
});
/** The calls running here, by the host's id (a Map would cost each call ~0.6 µs: call-table.ts). */
const calls = new CallTable<WorkerCall>();
/** `ctx.authorize` requests waiting for the host's answer, by `seq`. */
const authorizations = new Map<number, (result: Authorization) => void>();
let nextAuthorization = 0;
/** `ctx.elicit` and `ctx.sample` questions waiting for the host's answer, by `seq`. */
const questions = new Map<number, Question>();
let nextQuestion = 0;

interface Question {
  /** The call that asked: its abort rejects the question. */
  id: number;
  resolve(result: ElicitResult | SampleResult): void;
  reject(error: Error): void;
}
/** Which call's code is running, followed into its timers and promises: a fatal fault there is that call's. */
const running = new AsyncLocalStorage<Extract<ToWorker, { type: 'run' }>>();
let instance: PluginInstance | undefined;
let blamed = false;

// Node ends a worker on a stray rejection anyway; rethrowing it with this name tells the host which
// fault it was (the 'error' event carries an uncaught exception and a rejection alike).
process.on('unhandledRejection', (reason) => {
  blame();
  const error = new Error(`unhandled rejection: ${messageOf(reason)}`);
  error.name = UNHANDLED_REJECTION;
  throw error;
});
process.on('uncaughtExceptionMonitor', blame);
process.on('exit', blame);
if (!parentPort) {
  // A process has no 'error' event for the host to read: it says what killed it, then dies of it.
  process.on('uncaughtException', (error: unknown) => {
    const e = error as { name?: unknown; stack?: unknown } | null | undefined; // `throw null` is possible
    const reason = read(() => error instanceof Error && error.name === UNHANDLED_REJECTION)
      ? messageOf(error)
      : `uncaught exception: ${messageOf(error)}`;
    const stack = read(() => e?.stack);
    if (typeof stack === 'string') post({ type: 'log', level: 'debug', message: stack });
    if (!process.connected) process.exit(1);
    process.send!({ type: 'fault', reason } satisfies FromWorker, () => process.exit(1));
    setTimeout(() => process.exit(1), 1000).unref();
  });
  // The host is gone (it crashed or was killed): nothing is left to answer to, and nothing may outlive
  // it. (A plugin too busy to get here is killed with its group by the host's watchdog, watchdog.ts.)
  process.on(
    'disconnect',
    () => void children.killAll(CHILD_GRACE_MS).finally(() => process.kill(-process.pid, 'SIGKILL')),
  );
}

/**
 * Sends a message to the host. One the host could not take is refused (it throws), whatever carries
 * it (a result, a log line's meta, an authorize input, a question): too deep to read, or holding more
 * text once copied than the plugin's heap could (wire.ts, `tooLargeToSend`).
 */
function post(message: FromWorker): void {
  const why = tooLargeToSend(message, data.maxSentChars);
  if (why) throw new Error(why);
  channel.post(message);
}
// In a process of its own, what the plugin starts stays in the plugin's process group (the host and
// its watchdog kill that group); in a thread, each child leads a group the host can kill.
const children = trackChildProcesses((pid, exited) => post({ type: 'child', pid, exited }), {
  ownGroups: Boolean(parentPort),
});
// Those reports are how the host's watchdog learns of them: a plugin (the shell tool) starts none of its own.
delegateWatching();

channel.onMessage((message: ToWorker) => {
  switch (message.type) {
    case 'run':
      run(message);
      break;
    case 'abort': {
      const call = calls.get(message.id);
      call?.abort(new DOMException(message.reason.message, message.reason.name));
      break;
    }
    case 'authorized':
      authorizations.get(message.seq)?.(message.result);
      authorizations.delete(message.seq);
      break;
    case 'answer': {
      const question = questions.get(message.seq);
      questions.delete(message.seq);
      if (message.ok) question?.resolve(message.result);
      else question?.reject(new Error(message.message));
      break;
    }
    case 'ping':
      post({ type: 'pong' });
      break;
    case 'close':
      void close();
      break;
  }
});
// While loading, the channel does not keep the thread alive: a plugin whose top-level await (or
// setup) waits on nothing at all ends the worker at once, instead of waiting out the load timeout.
channel.unref();
void load().finally(() => channel.ref());

/** A process gets what a thread has as `workerData` in the host's first message. */
function initMessage(): Promise<WorkerData> {
  return new Promise((resolve) => {
    const onMessage = (message: ToWorker) => {
      if (message.type !== 'init') return;
      process.off('message', onMessage);
      resolve(message.data);
    };
    process.on('message', onMessage);
  });
}

async function load(): Promise<void> {
  try {
    let imported: ImportedPlugin;
    try {
      imported = await importPlugin(data.file, false, 'isolate');
    } catch (error) {
      throw hostError('RH_ERR_PLUGIN_IMPORT', [data.source, messageOf(error)]);
    }
    instance = await instantiatePlugin(imported.exported, {
      source: data.source,
      options: data.options,
      workspace: data.workspace,
      log: pluginLog,
      signal: lifetime.signal,
    });
    post({ type: 'loaded', report: { plugin: instance.plugin, tools: instance.tools, loader: imported.loader } });
  } catch (error) {
    post({
      type: 'load_error',
      code: error instanceof HostError ? error.code : 'RH_ERR_PLUGIN_IMPORT',
      message: messageOf(error),
    });
  }
}

function run(message: Extract<ToWorker, { type: 'run' }>): void {
  const { id } = message;
  const call = new WorkerCall(message);
  calls.set(id, call);
  let output: unknown;
  let later: boolean;
  try {
    const tool = instance?.live.get(message.tool);
    if (!tool) throw new Error(`tool "${message.tool}" is not loaded`);
    channel.started(id);
    output = running.run(message, () =>
      tool.execute(message.input as never, new CallContext(call, instance!.options, data.workspace)),
    );
    later = typeof (output as PromiseLike<unknown> | null)?.then === 'function';
  } catch (error) {
    answer(id, { error });
    return;
  }
  if (!later) {
    answer(id, { output }); // a tool that answers at once is answered in the same turn: no promise, no microtask
    return;
  }
  Promise.resolve(output).then(
    (value) => answer(id, { output: value }),
    (error: unknown) => answer(id, { error }),
  );
}

/** Sends a call's result, once checked to be plain data, or why it failed. Never throws. */
function answer(id: number, settled: { output: unknown } | { error: unknown }): void {
  calls.delete(id);
  let error = 'error' in settled ? settled.error : undefined;
  if ('output' in settled) {
    try {
      const why = unsendable(settled.output);
      if (!why) {
        post({ type: 'result', id, ok: true, output: settled.output });
        return;
      }
      error = new Error(`it returned a value that cannot be sent to the host: ${why}`);
    } catch (thrown) {
      // a value that could not even be looked at, cloned, or sent whole
      error = new Error(`it returned a value that cannot be sent to the host: ${messageOf(thrown)}`);
    }
  }
  post({ type: 'result', id, ok: false, message: messageOf(error) });
}

/** Tells the host once which call's code is killing the isolate, when a call's is. */
function blame(): void {
  const call = running.getStore();
  if (!call || blamed) return;
  blamed = true;
  post({ type: 'culprit', id: call.id, tool: call.tool });
}

/** `get()`, or `undefined` when it throws. */
function read<T>(get: () => T): T | undefined {
  try {
    return get();
  } catch {
    return undefined;
  }
}

/** The isolate's side of a call: what `ctx` does is relayed to the host, which answers `authorize`. */
class WorkerCall implements CallPort {
  readonly tool: string;
  readonly callId: string;
  readonly sessionId?: string;
  private readonly id: number;
  /** The host wants every level of this call's log lines (its caller takes them: `CallOptions.onLog`). */
  private readonly logAll: boolean;
  private controller?: AbortController;
  private reason?: DOMException;

  constructor(message: Extract<ToWorker, { type: 'run' }>) {
    this.id = message.id;
    this.tool = message.tool;
    this.callId = message.callId;
    if (message.sessionId) this.sessionId = message.sessionId;
    this.logAll = message.logAll === true;
  }

  /** Made only when the tool reads it: most tools never do, and an AbortController costs. */
  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.reason) this.controller.abort(this.reason);
    }
    return this.controller.signal;
  }

  abort(reason: DOMException): void {
    this.reason = reason;
    this.controller?.abort(reason);
    // The host stops waiting for the user or the model too; the tool is not left waiting on an answer that will not come.
    for (const [seq, question] of questions) {
      if (question.id !== this.id) continue;
      questions.delete(seq);
      question.reject(new Error(`the call ended before the answer came (${reason.message})`));
    }
  }

  log(level: LogLevel, message: string, meta?: Record<string, unknown>): void {
    if (!this.logAll && LOG_LEVELS.indexOf(level) > threshold) return;
    relay({
      type: 'log',
      level,
      message,
      call: { id: this.id, tool: this.tool, callId: this.callId },
      ...(meta ? { meta } : {}),
    });
  }

  progress(progress: Progress): void {
    relay({ type: 'progress', id: this.id, progress });
  }

  /** Asks the host; what cannot be sent is refused here (the host judges only what it receives). */
  authorize(input: unknown): Promise<Authorization> {
    const seq = ++nextAuthorization;
    return new Promise((resolve) => {
      try {
        post({ type: 'authorize', id: this.id, seq, input });
        authorizations.set(seq, resolve);
      } catch (error) {
        resolve({ allowed: false, message: `the input cannot be sent to the host: ${messageOf(error)}` });
      }
    });
  }

  elicit(request: unknown): Promise<ElicitResult> {
    return this.ask('elicit', request) as Promise<ElicitResult>;
  }

  sample(request: unknown): Promise<SampleResult> {
    return this.ask('sample', request) as Promise<SampleResult>;
  }

  /** Relays a question; the host checks it, asks, and checks the answer before sending it back. */
  private ask(kind: 'elicit' | 'sample', request: unknown): Promise<ElicitResult | SampleResult> {
    const seq = ++nextQuestion;
    return new Promise((resolve, reject) => {
      if (this.reason) {
        reject(new Error(`ctx.${kind}: the call has ended`));
        return;
      }
      try {
        post({ type: 'question', id: this.id, seq, kind, request });
        questions.set(seq, { id: this.id, resolve, reject });
      } catch (error) {
        reject(new Error(`ctx.${kind}: the request cannot be sent to the host: ${messageOf(error)}`));
      }
    });
  }
}

async function close(): Promise<void> {
  lifetime.abort(new DOMException('host closed', 'AbortError'));
  try {
    await instance?.dispose?.();
  } catch (error) {
    pluginLog.warn(`dispose() threw: ${messageOf(error)}`);
  }
  await children.killAll(CHILD_GRACE_MS);
  post({ type: 'closed' });
}

const relayBudget = new RelayBudget(MAX_RELAYED_PER_SECOND, (message) => post({ type: 'log', level: 'warn', message }));

function relay(message: Extract<FromWorker, { type: 'log' | 'progress' }>): void {
  if (!relayBudget.take()) return;
  try {
    post(message);
  } catch {
    // log meta that cannot be cloned or is too large: the line still goes, without it
    if (message.type === 'log') {
      const { meta: _, ...line } = message;
      post(line);
    }
  }
}
