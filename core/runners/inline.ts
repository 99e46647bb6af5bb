/**
 * The inline runner: the plugin runs in the host's thread. Fastest (a call costs a few µs), but
 * its timeout is cooperative: the dispatcher answers `timeout` on time and aborts the signal, yet a
 * synchronous loop would still freeze the host. Built-ins and trusted plugins only; see
 * docs/isolation.md.
 */
import type { Authorization, ElicitResult, SampleResult } from '../contract.ts';
import { hostError, messageOf } from '../errors.ts';
import type { Logger, LogLevel } from '../log.ts';
import type { Progress } from '../types.ts';
import { type ImportedPlugin, importPlugin } from './import-plugin.ts';
import { instantiatePlugin, type PluginInstance } from './plugin-instance.ts';
import type { LoadedPlugin, PluginRunner, PluginSpec, RunOutcome, RunRequest } from './runner.ts';
import { CallContext, type CallPort, emitLog } from './tool-context.ts';

export function createInlineRunner(spec: PluginSpec, log: Logger, preloaded?: ImportedPlugin): PluginRunner {
  let instance: PluginInstance | undefined;
  const lifetime = new AbortController();

  return {
    isolation: 'inline',

    async load(): Promise<LoadedPlugin> {
      let imported = preloaded;
      if (imported === undefined) {
        try {
          imported = await importPlugin(spec.file, spec.fresh);
        } catch (error) {
          throw hostError('RH_ERR_PLUGIN_IMPORT', [spec.source, messageOf(error)], error);
        }
      }
      instance = await instantiatePlugin(imported.exported, {
        source: spec.source,
        options: spec.options,
        workspace: spec.workspace,
        log,
        signal: lifetime.signal,
      });
      return { plugin: instance.plugin, tools: instance.tools, loader: imported.loader };
    },

    async run(request: RunRequest): Promise<RunOutcome> {
      const tool = instance?.live.get(request.tool);
      if (!tool) return { ok: false, code: 'tool_error', message: `tool "${request.tool}" is not loaded` };
      try {
        const output = await tool.execute(
          request.input as never,
          new CallContext(new InlineCall(request, log), instance!.options, spec.workspace),
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

/** The inline side of a call: `ctx` answers straight from the dispatcher's request. */
class InlineCall implements CallPort {
  readonly tool: string;
  readonly callId: string;
  readonly sessionId?: string;
  private readonly request: RunRequest;
  private readonly pluginLog: Logger;
  private callLog?: Logger;

  constructor(request: RunRequest, log: Logger) {
    this.request = request;
    this.tool = request.tool;
    this.callId = request.callId;
    if (request.sessionId) this.sessionId = request.sessionId;
    this.pluginLog = log;
  }

  get signal(): AbortSignal {
    return this.request.signal;
  }

  log(level: LogLevel, message: string, data?: Record<string, unknown>): void {
    this.callLog ??= this.pluginLog.child({ tool: this.tool, callId: this.callId });
    this.callLog.log(level, message, data);
    emitLog(this.request.onLog, level, message, data);
  }

  progress(progress: Progress): void {
    this.request.onProgress?.(progress);
  }

  authorize(input: unknown): Promise<Authorization> {
    return this.request.authorize(input);
  }

  elicit(request: unknown): Promise<ElicitResult> {
    return this.request.elicit(request);
  }

  sample(request: unknown): Promise<SampleResult> {
    return this.request.sample(request);
  }
}
