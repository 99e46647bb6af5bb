// Shared test plumbing: temp dirs that clean up, polling until a condition holds, and the real CLI
// (the built bundle), run in this process or as a child process.
import { execFileSync, spawn } from 'node:child_process';
import {
  closeSync,
  constants,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  readSync,
  realpathSync,
  rmSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Writable } from 'node:stream';
import { fileURLToPath, pathToFileURL } from 'node:url';
import winston from 'winston';
import type { HostConfig } from '../core/config-schema.ts';
import { createHost, type Host } from '../core/index.ts';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));
export const FIXTURES = join(ROOT, 'test', 'fixtures');
export const BIN = join(ROOT, 'bin', 'rousseau-host.js');

export interface TempDir {
  dir: string;
  write(rel: string, text: string): string;
  cleanup(): void;
}

/** A fresh temp directory (real path), removed by `cleanup()`. */
export function tempDir(prefix = 'rh-test-'): TempDir {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
  return {
    dir,
    write(rel, text) {
      const file = join(dir, rel);
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, text);
      return file;
    },
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/**
 * Each test's own temp directory, made before it and removed after it (mocha's `beforeEach` and
 * `afterEach` of the `describe` that calls this): the returned object is the current test's.
 */
export function tempDirPerTest(prefix?: string): TempDir {
  let current: TempDir | undefined;
  beforeEach(() => {
    current = tempDir(prefix);
  });
  afterEach(() => current?.cleanup());
  const now = () => {
    if (!current) throw new Error('tempDirPerTest: its directory exists only while a test runs');
    return current;
  };
  return {
    get dir() {
      return now().dir;
    },
    write: (rel, text) => now().write(rel, text),
    cleanup: () => now().cleanup(),
  };
}

/**
 * A host for a test about its plugins: no audit, errors-only logs, no built-ins, every call
 * allowed; `config` adds plugins and overrides any of that.
 */
export function quietHost(cwd: string, config: HostConfig): Promise<Host> {
  return createHost({
    cwd,
    audit: false,
    logLevel: 'error',
    config: { builtins: false, policy: { default: 'allow' }, ...config },
  });
}

export interface UntilOptions {
  /** Default 5000. */
  timeoutMs?: number;
  /** Default 25. */
  intervalMs?: number;
  /** What was awaited, for the error on timeout; a function to say the state it ended in. */
  message?: string | (() => string);
}

/** Polls `predicate` until it returns a truthy value, and resolves to that value; rejects after `timeoutMs`. */
export async function until<T>(predicate: () => T | Promise<T>, options: UntilOptions = {}): Promise<NonNullable<T>> {
  const { timeoutMs = 5000, intervalMs = 25, message = 'a condition' } = options;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await predicate();
    if (value) return value as NonNullable<T>;
    if (Date.now() > deadline)
      throw new Error(
        `timed out after ${timeoutMs} ms waiting for ${typeof message === 'function' ? message() : message}`,
      );
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

/**
 * How late a 20 ms timer set before `work` fires: a host thread held by `work` (a runaway regex)
 * delays it by as long. Tests allow a wide margin; this is no speed measurement.
 */
export async function timerLateness(work: () => unknown): Promise<number> {
  const start = performance.now();
  const fired = new Promise<number>((resolve) => setTimeout(() => resolve(performance.now() - start - 20), 20));
  await work();
  return fired;
}

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface CliOptions {
  /** Where the command runs (its working directory); the repo by default. */
  cwd?: string;
  /** Variables set for the run (`undefined` unsets one), over this process's environment. */
  env?: NodeJS.ProcessEnv;
  timeoutMs?: number;
}

let cliBundle: Promise<{ main(argv: string[]): Promise<number> }> | undefined;
let cliQueue: Promise<unknown> = Promise.resolve();

/**
 * Runs `rousseau-host ...args` in this process: the built bundle's `main` (what bin/ runs), with
 * stdout, stderr, the working directory and the environment its own for the run. A process costs
 * ~0.3 s of CPU to start and load the CLI, and the suite runs the CLI over a hundred times; what
 * only a process shows (stdin, the exit once the answer is printed, signals) is
 * `runCliProcess`'s. Runs queue: stdout and stderr are the process's own.
 */
export function runCli(args: string[], options: CliOptions = {}): Promise<CliResult> {
  const result = cliQueue.then(() => runCliHere(args, options));
  cliQueue = result.catch(() => {});
  return result;
}

async function runCliHere(args: string[], options: CliOptions): Promise<CliResult> {
  cliBundle ??= import(pathToFileURL(join(ROOT, 'dist', 'cli.js')).href);
  const { main } = await cliBundle;
  const output = { stdout: '', stderr: '' };
  const capture = (into: 'stdout' | 'stderr') =>
    ((chunk: string | Uint8Array, encoding?: unknown, callback?: unknown) => {
      output[into] += typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString();
      const done = typeof encoding === 'function' ? encoding : callback;
      if (typeof done === 'function') process.nextTick(done as () => void);
      return true;
    }) as typeof process.stdout.write;
  const writes = { stdout: process.stdout.write, stderr: process.stderr.write };
  const cwd = process.cwd();
  const env = { NO_COLOR: '1', ...options.env };
  const saved = Object.fromEntries(Object.keys(env).map((key) => [key, process.env[key]]));
  const setEnv = (values: NodeJS.ProcessEnv) => {
    for (const [key, value] of Object.entries(values)) {
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
    }
  };
  process.stdout.write = capture('stdout');
  process.stderr.write = capture('stderr');
  setEnv(env);
  process.chdir(options.cwd ?? ROOT);
  let timer: NodeJS.Timeout | undefined;
  try {
    const timeoutMs = options.timeoutMs ?? 15000;
    const timedOut = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () =>
          reject(
            new Error(`rousseau-host ${args.join(' ')} did not end within ${timeoutMs} ms\nstderr: ${output.stderr}`),
          ),
        timeoutMs,
      );
    });
    const code = await Promise.race([main(args), timedOut]);
    return { code, signal: null, ...output };
  } finally {
    clearTimeout(timer);
    process.chdir(cwd);
    setEnv(saved);
    process.stdout.write = writes.stdout;
    process.stderr.write = writes.stderr;
  }
}

/**
 * The arguments for a `node` child that imports the core's TypeScript module `source` (a path in
 * the repo) and then runs `code`, the body of an async function with the module's exports as `$`:
 * for what only a process of its own shows (its exit). Through jiti and its transpile cache, as
 * an isolate started from source loads its entry (runners/isolate.ts): ~0.15 s of CPU where
 * `--import tsx` costs ~0.6 s.
 */
export function nodeWithSource(source: string, code: string): string[] {
  const jiti = JSON.stringify(createRequire(import.meta.url).resolve('jiti'));
  const file = JSON.stringify(join(ROOT, source));
  return ['-e', `require(${jiti}).createJiti(${file}).import(${file}).then(async ($) => {\n${code}\n});`];
}

/** Runs `rousseau-host ...args` as a real child process. */
export function runCliProcess(
  args: string[],
  options: { cwd?: string; input?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number } = {},
): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      cwd: options.cwd ?? ROOT,
      env: { ...process.env, NO_COLOR: '1', ...options.env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(
        new Error(
          `rousseau-host ${args.join(' ')} did not exit within ${options.timeoutMs ?? 15000} ms\nstderr: ${stderr}`,
        ),
      );
    }, options.timeoutMs ?? 15000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
    child.stdin.end(options.input ?? '');
  });
}

/**
 * What the host writes to its stderr while `work` runs, kept off the test's output: a plugin
 * process's stderr is passed on there (a V8 fatal trace, for a heap bomb). `work` can read what
 * came so far, to wait for a line written after its call returned (winston's).
 */
export async function capturingStderr<T>(
  work: (captured: () => string) => Promise<T>,
): Promise<{ value: T; stderr: string }> {
  const write = process.stderr.write;
  let stderr = '';
  process.stderr.write = ((chunk: string | Uint8Array) => {
    stderr += typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString();
    return true;
  }) as typeof process.stderr.write;
  try {
    return { value: await work(() => stderr), stderr };
  } finally {
    process.stderr.write = write;
  }
}

export interface LogLine {
  level: string;
  message: string;
}

/** A winston logger that keeps what it is given, off the test output, for the test to read. */
export function capturingLogger(level: string): { logger: winston.Logger; lines: LogLine[] } {
  const lines: LogLine[] = [];
  const stream = new Writable({
    objectMode: true,
    write(info: { level: string; message: unknown }, _encoding, next) {
      lines.push({ level: info.level, message: String(info.message) });
      next();
    },
  });
  return { lines, logger: winston.createLogger({ level, transports: [new winston.transports.Stream({ stream })] }) };
}

export interface HttpHost {
  child: ReturnType<typeof spawn>;
  /** `http://127.0.0.1:PORT/mcp`, as the host printed it. */
  url: string;
  port: number;
  /** What it wrote to stderr so far. */
  stderr(): string;
  /** Sends `signal` (default SIGTERM) and resolves with how it exited. */
  stop(signal?: NodeJS.Signals): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * `rousseau-host start --mcp-http 0 …args` as a real child process, once it serves: the OS picks
 * the port, and the host's startup line on stderr says which.
 */
export function spawnHttpHost(
  args: string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv } = {},
): Promise<HttpHost> {
  const child = spawn(process.execPath, [BIN, 'start', '--mcp-http', '0', ...args], {
    cwd: options.cwd ?? ROOT,
    env: { ...process.env, NO_COLOR: '1', ...options.env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const stop = (signal: NodeJS.Signals = 'SIGTERM') => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    return exited;
  };
  return new Promise((resolve, reject) => {
    child.stderr!.on('data', (d: Buffer) => {
      stderr += d.toString();
      const url = /serving \d+ tools over MCP at (http:\/\/127\.0\.0\.1:(\d+)\/mcp)/.exec(stderr);
      if (url) resolve({ child, url: url[1]!, port: Number(url[2]), stderr: () => stderr, stop });
    });
    void exited.then(({ code, signal }) =>
      reject(new Error(`rousseau-host start --mcp-http exited (${code ?? signal}) before serving:\n${stderr}`)),
    );
  });
}

/** The config of a host of the inline echo fixture that allows every call and writes its audit trail to `audit`. */
export const echoAuditingTo = (audit: string) => ({
  builtins: false,
  plugins: [{ module: join(FIXTURES, 'plugins', 'echo.ts'), isolation: 'inline' }],
  policy: { default: 'allow' },
  log: { audit },
});

/**
 * A FIFO at `dir`/audit.fifo whose pipe is full, for an audit trail that is slow to take its lines:
 * a host's next audit write there waits until `lines()` reads the filler, so whatever the host does
 * before that write has finished shows (an answer sent ahead of its lines).
 */
export function fullFifo(dir: string) {
  const path = join(dir, 'audit.fifo');
  execFileSync('mkfifo', [path]);
  // Read and write ends in one descriptor: the host's open finds a reader, and the pipe is filled
  // until the kernel refuses more.
  const fd = openSync(path, constants.O_RDWR | constants.O_NONBLOCK);
  let filler = 0;
  const chunk = Buffer.alloc(4096, 'x');
  for (;;) {
    try {
      filler += writeSync(fd, chunk);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EAGAIN') break;
      throw error;
    }
  }
  let read = '';
  const buffer = Buffer.alloc(65536);
  return {
    path,
    /**
     * Resolves once the process `pid` waits to write to a full pipe (Linux's /proc), then once what it
     * wrote before that had time to arrive: the host's audit write, and what it did first.
     */
    async writerWaits(pid: number): Promise<void> {
      // `pipe_write`, `anon_pipe_write` on newer kernels.
      await until(() => /pipe_write$/.test(readFileSync(`/proc/${pid}/wchan`, 'utf8')), {
        timeoutMs: 15_000,
        message: 'the host to wait on the audit FIFO',
      });
      await new Promise((resolve) => setTimeout(resolve, 200));
    },
    /** What the host wrote after the filler, once its call line is there. */
    async lines(): Promise<string[]> {
      await until(
        () => {
          try {
            read += buffer.toString('latin1', 0, readSync(fd, buffer));
          } catch (error) {
            if ((error as NodeJS.ErrnoException).code !== 'EAGAIN') throw error;
          }
          return read.includes('"event":"call"');
        },
        { timeoutMs: 10_000, message: 'the call line in the FIFO' },
      );
      return read.slice(filler).split('\n').filter(Boolean);
    },
    close: () => closeSync(fd),
  };
}
