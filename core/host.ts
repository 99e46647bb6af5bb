/**
 * The host: config → loader → registry → dispatcher. This is the embedding API (README.md, "Embedding"); the
 * CLI, the agent loop and the MCP server are built on it and nothing here knows about them.
 */
import { setMaxListeners } from 'node:events';
import { statSync } from 'node:fs';
import { resolve } from 'node:path';
import { loadConfig, validateConfig } from './config.ts';
import type { HostConfig } from './config-schema.ts';
import { type ApproveFn, type DispatchEnv, decide, dispatch, endBeforeStages } from './dispatch.ts';
import { hostError, messageOf, type ResultCode } from './errors.ts';
import { loadPlugins } from './loader.ts';
import { defaultHostId, hostIdProblem } from './identity.ts';
import { createMcpRunner } from './runners/mcp-client.ts';
import { createAuditSink, NO_AUDIT, type AuditSink } from './audit.ts';
import { DEFAULT_AUDIT_INPUT_CAP } from './audit-lines.ts';
import { MAX_JSON_TEXT_CHARS } from './json-text.ts';
import { List } from './list.ts';
import { createLogger, type Logger } from './log.ts';
import { compilePolicy, type Policy, type PolicyContext, type PolicyDecision } from './policy.ts';
import { Registry } from './registry.ts';
import { createReloader } from './reload.ts';
import { releaseIdleWatchdog } from './runners/watchdog.ts';
import { activeTracer } from './tracing.ts';
import type { CallEnd, CallOptions, CallResult, PluginStatus, ToolInfo } from './types.ts';

export interface HostOptions {
  /** Where the config search starts; the default workspace when there is no config. Default: `process.cwd()`. */
  cwd?: string;
  /** A config object: skips discovery. Plugin paths then resolve against `cwd`. */
  config?: HostConfig;
  /** A config file to load instead of searching. */
  configFile?: string;
  /** The workspace root (file tools are confined to it). Default: the config's `workspace`, else its directory. */
  workspace?: string;
  /** Decides `ask` calls. Without it `ask` is a denial. Return `'always'` to approve this exact input for the session. */
  approve?: ApproveFn;
  /** A logger (winston) to use instead of a new stderr logger. */
  logger?: Logger;
  logLevel?: string;
  /** The audit file, or `false`; overrides `log.audit` in the config. */
  audit?: string | false;
  /**
   * Which of several hosts this is: on every audit line, and the prefix of its HTTP session ids
   * (docs/serve.md, "Several hosts behind a load balancer"). Default: `ROUSSEAU_HOST_ID`, else the
   * machine's name and the process id.
   */
  hostId?: string;
  /**
   * For tests: the clock (epoch ms) worker and process plugins' crash budgets read, so a test can
   * move a quarantine past its cooldown without waiting it out. Default: `Date.now`.
   */
  clock?: () => number;
  /**
   * Resolve once the config is read, with the plugins still loading: each registers as it loads
   * (in config order), `onToolsChanged` tells, a call to a tool not there yet waits for it, and
   * `ready` resolves when every plugin has loaded or failed. Default false: resolve after that.
   */
  loadInBackground?: boolean;
}

export interface Host {
  /** Which of several hosts this is (`HostOptions.hostId`). */
  readonly hostId: string;
  /** The workspace root. */
  readonly workspace: string;
  /** The config file in use, if any. */
  readonly configFile: string | undefined;
  readonly config: HostConfig;
  readonly policy: Policy;
  readonly log: Logger;
  /** Every plugin with its status, in config order (`tools --json`). */
  plugins(): PluginStatus[];
  /** Every loaded tool, sorted by name. */
  tools(): ToolInfo[];
  /** Resolves when every plugin has loaded or failed: at once, unless the host loads in the background. */
  readonly ready: Promise<void>;
  /**
   * One call through the whole pipeline. Never throws. While plugins load in the background, a
   * call to a tool not registered yet waits until it is, or until every plugin is in (then it is
   * an unknown tool).
   */
  call(tool: string, input: unknown, options?: CallOptions): Promise<CallResult>;
  /**
   * The policy's decision on a call, without running it or asking anyone (`policy check`). With a
   * `caller`, a tool they can never call is an unknown tool, as their calls would find. Never throws.
   */
  decide(tool: string, input: unknown, options?: PolicyContext): PolicyCheck;
  /**
   * Loads the plugin named `name` (its name or its configured source), or every plugin, again from
   * its files. The old version serves until the new one passes the contract check; a failure keeps
   * it serving and shows as `reloadError` in the returned statuses. Never throws (docs/plugins.md, "Watch mode").
   */
  reload(name?: string): Promise<PluginStatus[]>;
  /**
   * Resolves once the audit lines of the calls ended so far are in the audit file, instead of
   * within the batch window (docs/policy.md, "The audit trail"): a server awaits it before a
   * result goes out, so a host killed a moment later has still audited every call it answered.
   * Never rejects.
   */
  auditWritten(): Promise<void>;
  /**
   * Writes the audit lines of the calls ended so far now, synchronously: for a front end that
   * writes its answers itself and calls this just before (stdio), with no promise to wait for.
   */
  flushAudit(): void;
  /**
   * Calls `listener` after a reload changed the tool set, and while plugins load in the background,
   * after each plugin registered (once for those that registered in the same tick). Returns the unsubscribe.
   */
  onToolsChanged(listener: () => void): () => void;
  /**
   * Calls `listener` as each call ends, with its result (metrics count calls this way). It runs on
   * the call's path: it must be quick, and a throw is logged and ignored. Returns the unsubscribe.
   */
  onCallEnd(listener: (end: CallEnd) => void): () => void;
  /** Each plugin's calls running and waiting for a slot (`maxConcurrency`, `maxQueue`), in config order. */
  load(): PluginLoad[];
  /** True from the moment `close()` is called. */
  readonly closing: boolean;
  /** Ends every plugin (dispose, workers, child processes) and flushes the audit log. */
  close(): Promise<void>;
}

/** One plugin's concurrency slots in use and calls queued for one. */
export interface PluginLoad {
  plugin: string;
  running: number;
  queued: number;
}

/** What `host.decide()` answers: the decision on the validated, canonical input, or why the input never got that far. */
export type PolicyCheck =
  | (PolicyDecision & { ok: true; canonical: string })
  | { ok: false; code: ResultCode; content: string };

/** The audit file when the config says nothing, relative to the workspace. */
export const DEFAULT_AUDIT_FILE = '.rousseau/audit.jsonl';

/** What a call made once the host is closing answers. */
function closedResult(): CallResult {
  return { isError: true, code: 'cancelled', content: hostError('RH_ERR_HOST_CLOSED', []).message, durationMs: 0 };
}

function isDirectory(path: string): boolean {
  return statSync(path, { throwIfNoEntry: false })?.isDirectory() === true;
}

/** Loads the config and every plugin. Throws `HostError` only for a config that cannot be used. */
export async function createHost(options: HostOptions = {}): Promise<Host> {
  const cwd = resolve(options.cwd ?? process.cwd());
  const loaded = options.config
    ? { config: validateConfig(options.config, 'the config object'), dir: cwd, file: undefined }
    : await loadConfig({ cwd, ...(options.configFile ? { configFile: options.configFile } : {}) });
  const { config } = loaded;
  const logLevel = options.logLevel ?? config.log?.level ?? 'info';
  const log = options.logger ?? createLogger({ level: logLevel });
  const workspace = resolve(
    options.workspace ?? (config.workspace ? resolve(loaded.dir, config.workspace) : loaded.dir),
  );
  // A typo here would otherwise confine the tools to an empty tree the audit file then creates.
  if (options.workspace === undefined && config.workspace !== undefined && !isDirectory(workspace))
    throw hostError('RH_ERR_CONFIG_INVALID', [
      loaded.file ?? 'the config object',
      `  workspace: no directory at ${workspace} (the path is relative to the config's directory)`,
    ]);
  const policy = compilePolicy(config.policy, loaded.file ?? 'the config object');
  // An empty variable is an unset one, as a shell's `ROUSSEAU_HOST_ID=` means.
  const hostId = options.hostId ?? (process.env.ROUSSEAU_HOST_ID || defaultHostId());
  const badId = hostIdProblem(hostId);
  if (badId)
    throw hostError('RH_ERR_CONFIG_INVALID', [
      options.hostId === undefined ? '(ROUSSEAU_HOST_ID)' : '(hostId)',
      `  ${badId}`,
    ]);

  const auditSetting = options.audit ?? config.log?.audit ?? DEFAULT_AUDIT_FILE;
  const audit: AuditSink =
    auditSetting === false
      ? NO_AUDIT
      : createAuditSink(resolve(workspace, auditSetting), {
          host: hostId,
          workspace,
          onError: (error) => log.error(`audit trail: ${error.message}`),
        });

  const registry = new Registry();
  const closing = new AbortController();
  // Each call waiting on a person listens for the close: as many as there are calls in flight.
  setMaxListeners(0, closing.signal);

  const listeners = new Set<() => void>();
  const toolsChanged = () => {
    for (const listener of listeners) {
      try {
        listener();
      } catch (error) {
        log.warn(`a tools-changed listener failed: ${messageOf(error)}`);
      }
    }
  };
  // Plugins that register in the same tick are told once.
  let told = false;
  const registeredSoon = () => {
    if (told) return;
    told = true;
    setImmediate(() => {
      told = false;
      toolsChanged();
    });
  };
  // Calls waiting for a tool wake at each registration, and when loading is over.
  let allLoaded = false;
  let wake = () => {};
  let registration = new Promise<void>((resolve) => (wake = resolve));
  const registered = () => {
    const woken = wake;
    registration = new Promise<void>((resolve) => (wake = resolve));
    woken();
  };

  const loadContext = {
    config,
    dir: loaded.dir,
    workspace,
    registry,
    log,
    logLevel,
    audit,
    mcpRunner: createMcpRunner,
    ...(options.clock ? { clock: options.clock } : {}),
    signal: closing.signal,
  };
  const reloading = loadPlugins({
    ...loadContext,
    onRegistered: () => {
      registered();
      if (options.loadInBackground) registeredSoon();
    },
  })
    .then((entries) => {
      const reloader = createReloader(loadContext, entries);
      reloader.onToolsChanged(toolsChanged);
      return reloader;
    })
    .finally(() => {
      allLoaded = true;
      registered();
    });
  const ready = reloading.then(() => {});
  if (!options.loadInBackground) await ready;
  else ready.catch((error: unknown) => log.error(`loading the plugins failed: ${messageOf(error)}`));

  /** Waits until `tool` is registered, every plugin is in, the call is cancelled or the host closes. */
  async function registeredTool(tool: string, signal: AbortSignal | undefined): Promise<void> {
    const stopped = signal ? AbortSignal.any([signal, closing.signal]) : closing.signal;
    let stop = () => {};
    const stopping = new Promise<void>((resolve) => (stop = resolve));
    stopped.addEventListener('abort', stop, { once: true });
    try {
      while (!allLoaded && !registry.get(tool) && !stopped.aborted) await Promise.race([registration, stopping]);
    } finally {
      stopped.removeEventListener('abort', stop);
    }
  }

  /** A call made while the plugins are still loading: it waits for its tool, or for the loading to end. */
  async function callOnceRegistered(tool: string, input: unknown, callOptions?: CallOptions): Promise<CallResult> {
    const started = performance.now();
    await registeredTool(tool, callOptions?.signal);
    if (callOptions?.signal?.aborted && !registry.get(tool) && !closing.signal.aborted) {
      const content = `The call to "${tool}" was cancelled while the plugins were still loading.`;
      return endBeforeStages(env, tool, callOptions, { ok: false, code: 'cancelled', content }, started);
    }
    return closing.signal.aborted ? closedResult() : dispatch(env, tool, input, callOptions);
  }

  const tracer = activeTracer();
  const env: DispatchEnv = {
    registry,
    policy,
    ...(options.approve ? { approve: options.approve } : {}),
    audit,
    auditInputCap: config.log?.auditInputCap ?? DEFAULT_AUDIT_INPUT_CAP,
    maxInputChars: config.limits?.maxInputChars ?? MAX_JSON_TEXT_CHARS,
    workspace,
    log,
    closing: closing.signal,
    inflight: new List(),
    // Asked once: an SDK registers its provider before the host is made (docs/serve.md, "Metrics and tracing").
    ...(tracer ? { tracer } : {}),
    callEnd: [],
  };
  let closed: Promise<void> | undefined;

  return {
    hostId,
    workspace,
    configFile: loaded.file,
    config,
    policy,
    log,
    plugins: () => registry.plugins(),
    tools: () => registry.tools(),
    ready,
    call(tool, input, callOptions) {
      // Not async: returning dispatch's own promise spares every call the turns of adopting it.
      if (!allLoaded && !registry.get(tool)) return callOnceRegistered(tool, input, callOptions);
      if (closing.signal.aborted) return Promise.resolve(closedResult());
      return dispatch(env, tool, input, callOptions);
    },
    decide(name, input, decideOptions) {
      const decided = decide(env, name, input, decideOptions ?? {});
      if (!decided.ok) return { ok: false, code: decided.code, content: decided.content };
      return { ok: true, ...decided.decision, canonical: decided.canonical() };
    },
    reload: (name) => (closing.signal.aborted ? Promise.resolve([]) : reloading.then((r) => r.reload(name))),
    onToolsChanged(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    auditWritten: () => audit.written(),
    flushAudit: () => audit.flush(),
    onCallEnd(listener) {
      // A copy per change: a listener that unsubscribes while being told does not skip the next one.
      env.callEnd = [...env.callEnd, listener];
      return () => {
        env.callEnd = env.callEnd.filter((l) => l !== listener);
      };
    },
    load: () =>
      registry.handlesList().map((h) => {
        const { active, waiting } = h.limiter.stats;
        return { plugin: h.name, running: active, queued: waiting };
      }),
    get closing() {
      return closing.signal.aborted;
    },
    close() {
      closed ??= (async () => {
        closing.abort();
        for (const run of [...env.inflight]) run.shutdown();
        // Loads still under way give up on the close; what loaded is closed with the rest.
        await reloading.then(
          (r) => r.close(),
          () => {},
        );
        // Whatever a runner does on close, the audit trail is still flushed, and close() never throws.
        const ended = await Promise.allSettled(registry.handlesList().map((h) => h.runner?.close()));
        for (const e of ended) if (e.status === 'rejected') log.warn(`closing a plugin failed: ${messageOf(e.reason)}`);
        await audit.close();
        releaseIdleWatchdog();
      })();
      return closed;
    },
  };
}
