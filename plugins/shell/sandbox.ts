/**
 * The sandbox a command runs in. Scrubbing the environment a command gets is not enough: every
 * process can read `/proc/<pid>/environ` of its ancestors (the host, the user's shell) where API
 * keys live. A command therefore runs in a PID namespace of its own with a fresh /proc, where no
 * process of the host is visible, and with no capabilities (so it cannot unmount that /proc):
 *
 * - bubblewrap (`bwrap`): with `filesystem: 'workspace'`, also a mount view where everything is
 *   read-only but the workspace, the temp directory and the `writable` paths; with `network: false`,
 *   no network but loopback.
 * - `unshare` + `setpriv` (util-linux), where bubblewrap is missing: the PID namespace and /proc,
 *   and the network boundary; the filesystem stays as it is.
 *
 * The filesystem is open by default: a read-only HOME breaks npm, pip, git and every cache, and the
 * secrets this sandbox is for live in /proc, not in files. The boundary is one option away.
 *
 * Which one works is found at load, by running `true` in it once: without blocking, so the host loads
 * its other plugins meanwhile.
 */
import { spawn } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import type { ShellOptions } from './options.ts';

export type SandboxKind = 'bwrap' | 'unshare';

export interface Sandbox {
  kind: SandboxKind | 'none';
  /** The argv that runs a program in the sandbox (through the wrapper): append the program and its arguments. */
  prefix: string[];
  /** Why there is none, when `kind` is 'none' under 'auto'. */
  unavailable?: string;
}

/**
 * Inside the sandbox: runs the command with fd 3 closed (and bash's own "Terminated" notices sent
 * nowhere), then writes its status on fd 3, with " bg" when processes it left are still running,
 * and stays while any of them does: a background job lives on as it would outside, since the
 * namespace ends when this shell does. `kill -0 -- -1` finds any process of the namespace but init
 * and this shell.
 */
const WRAPPER = `exec 4>&2 2>/dev/null
"$@" 2>&4 3>&- 4>&-; s=$?
if kill -0 -- -1 2>/dev/null; then echo "$s bg" >&3; else echo "$s" >&3; fi
exec 3>&-
while kill -0 -- -1 2>/dev/null; do sleep 0.5; done
exit $s`;

/** The argv that runs `args` in the sandbox; `args` unchanged with none. */
export function sandboxed(sandbox: Sandbox, args: string[]): string[] {
  return [...sandbox.prefix, ...args];
}

interface Boundary {
  workspace: string;
  filesystem: 'open' | 'workspace';
  writable: readonly string[];
  readOnly: readonly string[];
  network: boolean;
}

/**
 * The host ends a command with SIGTERM to its process group, then SIGKILL. The sandbox's own
 * processes share that group, and bwrap or unshare dying of the SIGTERM would take the command down
 * at once, with no time for its own cleanup: so they are started with SIGTERM ignored (the shell
 * before `exec`), the wrapper keeps ignoring it, and `env --default-signal` gives it back to the command.
 */
function prefixOf(kind: SandboxKind, boundary: Boundary): string[] {
  return [
    '/bin/sh',
    '-c',
    'trap "" TERM; exec "$@"',
    'sh',
    ...isolation(kind, boundary),
    '/bin/bash',
    '-c',
    WRAPPER,
    'sandbox',
    'env',
    '--default-signal=TERM',
  ];
}

function isolation(kind: SandboxKind, { workspace, filesystem, writable, readOnly, network }: Boundary): string[] {
  const root = process.getuid?.() === 0;
  if (kind === 'bwrap') {
    return [
      'bwrap',
      ...(filesystem === 'open'
        ? ['--bind', '/', '/']
        : [
            '--ro-bind',
            '/',
            '/',
            '--bind',
            tmpdir(),
            tmpdir(),
            '--bind',
            workspace,
            workspace,
            ...writable.flatMap((path) => ['--bind-try', path, path]),
            // `readOnly` stays so inside the writable workspace (and whatever `writable` says): the
            // host's state (.rousseau: a command could forge lines of the audit trail, or empty
            // it), and .git, whose hooks and config (core.fsmonitor) run at the user's next git
            // command, outside any sandbox. After the binds above, so that none covers them.
            ...readOnly.flatMap((path) => ['--ro-bind-try', join(workspace, path), join(workspace, path)]),
          ]),
      // After the binds, so that none (not even writable: ['/']) can cover the fresh /proc.
      '--dev',
      '/dev',
      '--proc',
      '/proc',
      '--unshare-pid',
      ...(network ? [] : ['--unshare-net']),
      '--die-with-parent',
      // Run as root, bwrap would leave the command every capability (and remount / read-write).
      ...(root ? ['--cap-drop', 'ALL'] : []),
      '--',
    ];
  }
  return [
    'unshare',
    '--pid',
    '--fork',
    '--mount-proc',
    '--kill-child',
    ...(network ? [] : ['--net']),
    ...(root ? [] : ['--user', '--map-root-user']),
    // Without the bounding set, root in the namespace could unmount the fresh /proc and see the host's.
    'setpriv',
    '--bounding-set=-all',
    '--inh-caps=-all',
    '--no-new-privs',
    '--',
  ];
}

/**
 * Trials run (or running) in this process, by argv: a host made again (tests, an embedder) does not
 * pay twice. A failure is forgotten once known: one that passes (a trial that timed out on a busy
 * machine) must not leave every later load, under 'auto', without a sandbox.
 */
const trials = new Map<string, Promise<string | undefined>>();

/** Why running `true` in the sandbox failed, or undefined when it worked. */
function trial(kind: SandboxKind, prefix: string[], workspace: string): Promise<string | undefined> {
  const key = JSON.stringify(prefix);
  let running = trials.get(key);
  if (!running) {
    running = runTrial(kind, prefix, workspace);
    trials.set(key, running);
    void running.then((failure) => {
      if (failure !== undefined) trials.delete(key);
    });
  }
  return running;
}

/**
 * How long the trial of `true` may take before it counts as a failure (it takes milliseconds): under
 * 'auto', both trials fit in the default plugin load timeout (10 s), so a hung bwrap still leaves
 * unshare its turn.
 */
const TRIAL_TIMEOUT_MS = 4000;

function runTrial(kind: SandboxKind, prefix: string[], workspace: string): Promise<string | undefined> {
  const [file, ...args] = sandboxed({ kind, prefix }, ['/bin/true']);
  // In a group of its own, ended with SIGKILL: the prefix ignores SIGTERM (prefixOf), so `timeout`'s
  // SIGTERM would not end a hung trial, and a process it left would hold the pipes open.
  const child = spawn(file!, args, {
    cwd: workspace,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
    stdio: ['ignore', 'ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // The group ended meanwhile.
      }
      resolve(`${kind}: running \`true\` took more than ${TRIAL_TIMEOUT_MS / 1000} s`);
    }, TRIAL_TIMEOUT_MS);
    const settle = (failure: string | undefined) => {
      clearTimeout(timer);
      resolve(failure);
    };
    child.on('error', (error) => settle(`${kind}: ${error.message}`));
    child.on('close', (status, signal) => {
      const message = stderr.trim().replace(/^sh: \d+: exec: /, '');
      // bwrap, unshare and setpriv name themselves in their messages; sh says "exec: bwrap: not found".
      settle(status === 0 ? undefined : message || `${kind}: exit ${status ?? signal}`);
    });
  });
}

/**
 * The sandbox the options ask for, tried once. 'auto' takes the first that works, or none (saying
 * why); a sandbox named explicitly that does not work is an error.
 */
export async function chooseSandbox(
  options: Pick<ShellOptions, 'sandbox' | 'filesystem' | 'network' | 'writable' | 'readOnly'>,
  workspace: string,
): Promise<Sandbox> {
  const bounded = options.filesystem === 'workspace';
  // A path that leads out of the workspace would be bound read-only over whatever it names there.
  const outside = options.readOnly.find((path) => relative(workspace, join(workspace, path)).startsWith('..'));
  if (outside !== undefined)
    throw new Error(`readOnly "${outside}" is not in the workspace: name a path relative to it`);
  if (bounded && (options.sandbox === 'none' || options.sandbox === 'unshare')) {
    throw new Error(`filesystem: "workspace" needs bubblewrap, and sandbox is "${options.sandbox}"`);
  }
  if (options.sandbox === 'none') return { kind: 'none', prefix: [] };
  const linux = process.platform === 'linux';
  // Only bubblewrap can make the filesystem read-only: 'auto' falls back to unshare only when that is not asked.
  const kinds: SandboxKind[] = !linux
    ? []
    : options.sandbox === 'auto'
      ? bounded
        ? ['bwrap']
        : ['bwrap', 'unshare']
      : [options.sandbox];
  const failures = linux ? [] : [`namespaces are Linux only (this is ${process.platform})`];
  for (const kind of kinds) {
    const prefix = prefixOf(kind, {
      workspace,
      filesystem: options.filesystem,
      writable: options.writable,
      readOnly: options.readOnly,
      network: options.network,
    });
    const failure = await trial(kind, prefix, workspace);
    if (failure === undefined) return { kind, prefix };
    failures.push(failure);
  }
  if (options.sandbox !== 'auto')
    throw new Error(`sandbox "${options.sandbox}" does not work here: ${failures.join('; ')}`);
  if (!options.network) throw new Error(`network: false needs a sandbox, and none works here: ${failures.join('; ')}`);
  if (bounded)
    throw new Error(`filesystem: "workspace" needs bubblewrap, which does not work here: ${failures.join('; ')}`);
  return { kind: 'none', prefix: [], unavailable: failures.join('; ') };
}
