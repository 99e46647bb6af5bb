/** The shell plugin's options and their defaults. */
import Type, { type Static } from 'typebox';
import Value from 'typebox/value';
import { CONFIG_FILES } from '../../core/config-names.ts';

/** Passed to every command: what a shell needs to find programs and speak the user's locale. */
export const BASE_ENV = ['PATH', 'HOME', 'USER', 'LOGNAME', 'SHELL', 'LANG', 'LC_*', 'TERM', 'TZ', 'TMPDIR'];

export const ShellOptions = Type.Object(
  {
    env: Type.Array(Type.String({ pattern: '^[A-Za-z_][A-Za-z0-9_]*\\*?$' }), {
      default: [],
      description: `Host environment variables passed to commands besides ${BASE_ENV.join(', ')}: names, or prefixes ending in "*" (e.g. "NODE_*"). Everything else is scrubbed.`,
    }),
    defaultTimeoutMs: Type.Integer({
      minimum: 1,
      maximum: 600_000,
      default: 120_000,
      description: 'Timeout of a command when the call gives no timeout_ms.',
    }),
    maxOutputBytes: Type.Integer({
      minimum: 1024,
      default: 32_000,
      description: 'Output kept in the result: half from the start, half from the end.',
    }),
    killAfterOutputBytes: Type.Integer({
      minimum: 1024,
      default: 8 * 1024 * 1024,
      description: 'Output past which a command is deemed runaway and killed.',
    }),
    killGraceMs: Type.Integer({
      minimum: 0,
      maximum: 60_000,
      default: 2000,
      description: 'Time between SIGTERM and SIGKILL to the process group.',
    }),
    sandbox: Type.Union([Type.Literal('auto'), Type.Literal('bwrap'), Type.Literal('unshare'), Type.Literal('none')], {
      default: 'auto',
      description:
        'Where commands run: "bwrap" (bubblewrap) or "unshare" (util-linux): a PID namespace and /proc of their own, so no process of the host (nor its environment) is visible; "none"; or "auto": the first of bwrap and unshare that works here, else none, with a warning.',
    }),
    filesystem: Type.Union([Type.Literal('open'), Type.Literal('workspace')], {
      default: 'open',
      description:
        '"open": commands write what the user may, as outside the sandbox (npm, pip, git and caches under HOME work); "workspace": everything is read-only but the workspace, the temp directory and `writable` (needs bubblewrap).',
    }),
    network: Type.Boolean({
      default: true,
      description: 'false: commands get no network but loopback (needs a sandbox).',
    }),
    writable: Type.Array(Type.String({ pattern: '^/' }), {
      default: [],
      description:
        'With filesystem "workspace": absolute paths commands may write besides the workspace and the temp directory (e.g. "/home/me/.npm").',
    }),
    readOnly: Type.Array(Type.String({ pattern: '^[^/]', minLength: 1 }), {
      default: ['.git', '.rousseau', ...CONFIG_FILES],
      description:
        'With filesystem "workspace": paths in the workspace (relative to it) that commands may not write, even where `writable` says otherwise. .git by default: a hook or a core.fsmonitor written there would run outside the sandbox at the next git command; .rousseau holds the audit trail; the host config\'s files (rousseau.config.ts…) are code the host runs at its next start.',
    }),
  },
  { additionalProperties: false },
);

export type ShellOptions = Static<typeof ShellOptions>;

/** The options with the schema's defaults filled in; `options` itself is left as it was. */
export function limitsOf(options: Partial<ShellOptions> | undefined): ShellOptions {
  return Value.Default(ShellOptions, structuredClone(options ?? {})) as ShellOptions;
}
