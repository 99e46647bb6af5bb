/**
 * A host's numbers in the Prometheus text exposition format (version 0.0.4), as `/metrics` serves
 * them: calls by tool, plugin, result code and caller, call durations, plugin states, concurrency
 * slots and queues, open sessions, and a few process figures. docs/serve.md lists every metric.
 *
 * Our own writer rather than prom-client: three kinds of metric are all this needs, and counting a
 * call is a map lookup and two additions, where prom-client hashes a labels object per call.
 */
import type { Host } from '../host.ts';
import type { CallEnd, PluginState } from '../types.ts';

export const METRICS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

/**
 * Upper bounds of the call-duration buckets, in seconds: an inline call takes microseconds, a
 * worker's a fraction of a millisecond, a shell command or an HTTP request up to the tool's timeout.
 */
export const DURATION_BUCKETS = [
  0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60,
] as const;

/**
 * The most distinct callers counted by name. Configured tokens are few, JWT subjects are not:
 * past this many, further callers are counted together as `caller="other"`.
 */
export const MAX_CALLER_LABELS = 1000;

const PLUGIN_STATES: readonly PluginState[] = ['loaded', 'failed', 'quarantined'];

/** Figures that come from the server rather than the host. */
export interface ServerFigures {
  /** Open MCP sessions; absent when the server keeps none (stateless). */
  sessions?: () => number;
}

export interface HostMetrics {
  /** The exposition text, as of now. */
  render(): string;
  /** Stops counting calls. */
  close(): void;
}

interface Counted {
  labels: string;
  count: number;
}

interface Timed {
  labels: string;
  /** Calls per bucket, not cumulative (the text makes them cumulative); the last is above every bound. */
  buckets: number[];
  sum: number;
  count: number;
}

/** Counts `host`'s calls from now on, and reads its plugins' states and queues when rendered. */
export function createHostMetrics(host: Host, server: ServerFigures = {}, maxCallers = MAX_CALLER_LABELS): HostMetrics {
  const calls = new Map<string, Counted>();
  const durations = new Map<string, Timed>();
  const callers = new Set<string>();

  const callerLabel = (end: CallEnd): string => {
    const name = end.caller?.name;
    if (name === undefined || callers.has(name)) return name ?? '';
    if (callers.size >= maxCallers) return 'other';
    callers.add(name);
    return name;
  };

  const count = (end: CallEnd): void => {
    // A tool no plugin has gets no label of its own: callers choose those names, without bound.
    const tool = end.plugin === undefined ? '' : end.tool;
    const plugin = end.plugin ?? '';
    const code = end.result.isError ? (end.result.code ?? 'tool_error') : 'ok';
    const caller = callerLabel(end);
    const callKey = `${tool}\u0000${plugin}\u0000${code}\u0000${caller}`;
    let counted = calls.get(callKey);
    if (!counted) {
      counted = { labels: labels({ tool, plugin, code, caller }), count: 0 };
      calls.set(callKey, counted);
    }
    counted.count++;

    const timeKey = `${tool}\u0000${plugin}`;
    let timed = durations.get(timeKey);
    if (!timed) {
      timed = {
        labels: labels({ tool, plugin }),
        buckets: new Array(DURATION_BUCKETS.length + 1).fill(0),
        sum: 0,
        count: 0,
      };
      durations.set(timeKey, timed);
    }
    const seconds = end.result.durationMs / 1000;
    let i = 0;
    while (i < DURATION_BUCKETS.length && seconds > DURATION_BUCKETS[i]!) i++;
    timed.buckets[i]!++;
    timed.sum += seconds;
    timed.count++;
  };

  const stop = host.onCallEnd(count);

  return {
    close: stop,
    render() {
      const out: string[] = [];
      family(
        out,
        'rousseau_tool_calls_total',
        'counter',
        'Tool calls that ended, by tool, plugin, result code and caller.',
      );
      for (const c of calls.values()) out.push(`rousseau_tool_calls_total{${c.labels}} ${c.count}`);

      family(
        out,
        'rousseau_tool_call_duration_seconds',
        'histogram',
        'Time from a call being asked to its result, less any wait for a person to approve it.',
      );
      for (const t of durations.values()) {
        let cumulative = 0;
        DURATION_BUCKETS.forEach((bound, i) => {
          cumulative += t.buckets[i]!;
          out.push(`rousseau_tool_call_duration_seconds_bucket{${t.labels},le="${bound}"} ${cumulative}`);
        });
        out.push(`rousseau_tool_call_duration_seconds_bucket{${t.labels},le="+Inf"} ${t.count}`);
        out.push(`rousseau_tool_call_duration_seconds_sum{${t.labels}} ${t.sum}`);
        out.push(`rousseau_tool_call_duration_seconds_count{${t.labels}} ${t.count}`);
      }

      family(out, 'rousseau_plugin_state', 'gauge', 'Each plugin: 1 for the state it is in, 0 for the others.');
      for (const p of host.plugins())
        for (const state of PLUGIN_STATES)
          out.push(`rousseau_plugin_state{${labels({ plugin: p.name, state })}} ${p.status === state ? 1 : 0}`);

      const load = host.load();
      family(out, 'rousseau_plugin_calls_running', 'gauge', "Calls holding one of a plugin's concurrency slots.");
      for (const l of load) out.push(`rousseau_plugin_calls_running{${labels({ plugin: l.plugin })}} ${l.running}`);
      family(out, 'rousseau_plugin_calls_queued', 'gauge', "Calls waiting for one of a plugin's concurrency slots.");
      for (const l of load) out.push(`rousseau_plugin_calls_queued{${labels({ plugin: l.plugin })}} ${l.queued}`);

      if (server.sessions) {
        family(out, 'rousseau_mcp_sessions', 'gauge', 'Open MCP sessions.');
        out.push(`rousseau_mcp_sessions ${server.sessions()}`);
      }

      const cpu = process.cpuUsage();
      family(out, 'process_cpu_seconds_total', 'counter', 'User and system CPU time of the host process, in seconds.');
      out.push(`process_cpu_seconds_total ${(cpu.user + cpu.system) / 1e6}`);
      family(out, 'process_resident_memory_bytes', 'gauge', 'Resident memory of the host process.');
      out.push(`process_resident_memory_bytes ${process.memoryUsage.rss()}`);
      family(out, 'process_start_time_seconds', 'gauge', 'When the host process started, in seconds since the epoch.');
      out.push(`process_start_time_seconds ${PROCESS_START_SECONDS}`);
      return `${out.join('\n')}\n`;
    },
  };
}

const PROCESS_START_SECONDS = Math.round((Date.now() - process.uptime() * 1000) / 1000);

function family(out: string[], name: string, type: 'counter' | 'gauge' | 'histogram', help: string): void {
  out.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
}

/** `name="value",…`, each value escaped as the format asks: backslash, double quote and newline. */
export function labels(values: Record<string, string>): string {
  return Object.entries(values)
    .map(([name, value]) => `${name}="${value.replace(/[\\"\n]/g, escapeChar)}"`)
    .join(',');
}

function escapeChar(c: string): string {
  return c === '\n' ? '\\n' : `\\${c}`;
}
