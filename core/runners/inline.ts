/**
 * The inline runner: the plugin runs in the host's thread. Fastest (a call costs a few µs), but
 * its timeout is cooperative: the dispatcher answers `timeout` on time and aborts the signal, yet a
 * synchronous loop would still freeze the host. Built-ins and trusted plugins only; see
 * docs/isolation.md.
 */
import type { Authorization, PluginLogger, ToolContext } from '../contract.ts';
import { hostError, messageOf } from '../errors.ts';
import type { Logger } from '../log.ts';
import { importPlugin } from './import-plugin.ts';
import { instantiatePlugin, type PluginInstance } from './plugin-instance.ts';
import type { LoadedPlugin, PluginRunner, PluginSpec, RunOutcome, RunRequest } from './runner.ts';

export function createInlineRunner(spec: PluginSpec, log: Logger, preloaded?: unknown): PluginRunner {
  let instance: PluginInstance | undefined;
  const lifetime = new AbortController();

  return {
    isolation: 'inline',

    async load(): Promise<LoadedPlugin> {
      let exported = preloaded;
      if (exported === undefined) {
        try {
          exported = await importPlugin(spec.file, spec.fresh);
        } catch (error) {
          throw hostError('RH_ERR_PLUGIN_IMPORT', [spec.source, messageOf(error)], error);
        }
      }
      instance = await instantiatePlugin(exported, {
        source: spec.source,
        options: spec.options,
        workspace: spec.workspace,
        log,
        signal: lifetime.signal,
      });
      return { plugin: instance.plugin, tools: instance.tools };
    },

    async run(request: RunRequest): Promise<RunOutcome> {
      const tool = instance?.live.get(request.tool);
      if (!tool) return { ok: false, code: 'tool_error', message: `tool "${request.tool}" is not loaded` };
      try {
        const output = await tool.execute(
          request.input as never,
          new CallContext(request, instance!.options, spec.workspace, log),
        );
        return { ok: true, output };
      } catch (error) {
        return { ok: false, code: 'tool_error', message: messageOf(error) };
      }
    },

    async close(): Promise<void> {
      lifetime.abort(new DOMException('host closed', 'AbortError'));
      try {
        await instance?.dispose?.();
      } catch (error) {
        log.warn(`dispose() threw: ${messageOf(error)}`);
      }
    },
  };
}

/** `ctx` for one call. A class, so its lazy getters live on the prototype (object literals with accessors are slow to create). */
class CallContext implements ToolContext {
  readonly options: Record<string, unknown>;
  readonly callId: string;
  readonly sessionId?: string;
  readonly workspace: string;
  private readonly request: RunRequest;
  private readonly pluginLog: Logger;
  private callLog?: PluginLogger;

  constructor(request: RunRequest, options: unknown, workspace: string, log: Logger) {
    this.request = request;
    this.options = options as Record<string, unknown>;
    this.callId = request.callId;
    if (request.sessionId) this.sessionId = request.sessionId;
    this.workspace = workspace;
    this.pluginLog = log;
    this.progress = (done, total, message) =>
      request.onProgress?.({
        done,
        ...(total === undefined ? {} : { total }),
        ...(message === undefined ? {} : { message }),
      });
    this.authorize = (input) => request.authorize(input);
  }

  get signal(): AbortSignal {
    return this.request.signal;
  }

  get log(): PluginLogger {
    this.callLog ??= this.pluginLog.child({ tool: this.request.tool, callId: this.callId });
    return this.callLog;
  }

  /** An own property, not a method: a tool may destructure it (`const { progress } = ctx`). */
  readonly progress: (done: number, total?: number, message?: string) => void;
  readonly authorize: (input: unknown) => Promise<Authorization>;
}
