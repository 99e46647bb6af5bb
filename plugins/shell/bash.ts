/** `bash`: one shell command in the workspace, with a timeout, a scrubbed environment and capped output. */
import Type from 'typebox';
import { defineTool } from 'rousseau-host';
import { CONFIG_FILES } from '../../core/config-names.ts';
import { BASE_ENV, limitsOf, type ShellOptions } from './options.ts';
import { scrubEnv } from './env.ts';
import type { ProcessGroups } from './process-groups.ts';
import { runCommand, type RunResult } from './run.ts';
import type { Sandbox } from './sandbox.ts';

export const MAX_TIMEOUT_MS = 600_000;

export function createBashTool(groups: ProcessGroups, sandbox: Sandbox, boundary: Boundary) {
  return defineTool({
    name: 'bash',
    description: [
      'Run a command with /bin/bash -c in the workspace root and return its output.',
      `Inputs: command (bash source; pipes, &&, redirections work); timeout_ms (default 120000, at most ${MAX_TIMEOUT_MS}).`,
      'Output: stdout and stderr merged in the order written, then a last line "[exit code N]", or "[killed: …]" when the command was stopped,',
      'or "[terminated by SIGNAME]". A non-zero exit or a kill makes the result an error, with the output kept.',
      'Limits: the output keeps its first and last 16 000 bytes with a marker between; a command printing more than 8 MiB, or running past its timeout,',
      'is killed with its whole process group (SIGTERM, then SIGKILL 2 s later), background jobs included.',
      'stdin is closed (/dev/null), so interactive commands fail instead of waiting; the environment holds only PATH, HOME, locale and a configured allow-list.',
      'The call returns when the shell exits: a background job ("server &") keeps running without its output being collected, and is killed when the host closes;',
      'redirect its output to a file to keep it.',
      sandboxLine(sandbox, boundary),
    ].join(' '),
    inputSchema: Type.Object(
      {
        command: Type.String({
          minLength: 1,
          maxLength: 100_000,
          description: 'The bash command line to run, e.g. "npm test 2>&1 | tail -20".',
        }),
        timeout_ms: Type.Optional(
          Type.Integer({
            minimum: 1,
            maximum: MAX_TIMEOUT_MS,
            description: 'Kill the command after this many milliseconds. Default 120000.',
          }),
        ),
      },
      { additionalProperties: false },
    ),
    annotations: {
      title: 'Run a shell command',
      readOnly: false,
      destructive: true,
      idempotent: false,
      openWorld: true,
    },
    // The command's own timeout governs (timeout_ms); the host's only backs it up.
    timeoutMs: MAX_TIMEOUT_MS + 30_000,
    async execute({ command, timeout_ms }, ctx) {
      const limits = limitsOf(ctx.options);
      groups.prune();
      const result = await runCommand({
        command,
        cwd: ctx.workspace,
        env: scrubEnv(process.env, [...BASE_ENV, ...limits.env]),
        timeoutMs: timeout_ms ?? limits.defaultTimeoutMs,
        signal: ctx.signal,
        maxOutputBytes: limits.maxOutputBytes,
        killAfterOutputBytes: limits.killAfterOutputBytes,
        killGraceMs: limits.killGraceMs,
        groups,
        sandbox,
      });
      const failed = result.exitCode !== 0 || result.killedFor !== undefined;
      return {
        content: `${result.output === '' ? '(no output)' : result.output.replace(/\n$/, '')}\n${statusLine(result, timeout_ms ?? limits.defaultTimeoutMs, limits.killAfterOutputBytes)}`,
        isError: failed,
        data: {
          exitCode: result.exitCode,
          signal: result.signal,
          ...(result.killedFor ? { killedFor: result.killedFor } : {}),
          outputBytes: result.outputBytes,
          truncated: result.truncated,
          ...(result.lingering ? { backgroundGroup: result.pgid } : {}),
        },
      };
    },
  });
}

function statusLine(r: RunResult, timeoutMs: number, killAfter: number): string {
  const lines: string[] = [];
  if (r.killedFor === 'timeout') lines.push(`[killed: timed out after ${timeoutMs} ms]`);
  else if (r.killedFor === 'output') lines.push(`[killed: printed more than ${killAfter} bytes]`);
  else if (r.killedFor === 'abort') lines.push('[killed: the call was cancelled]');
  else if (r.signal) lines.push(`[terminated by ${r.signal}]`);
  else lines.push(`[exit code ${r.exitCode}]`);
  if (r.lingering)
    lines.push(
      `[background processes still run in process group ${r.pgid}; their output is not collected; they end when the host closes]`,
    );
  return lines.join('\n');
}

type Boundary = Pick<ShellOptions, 'network' | 'filesystem' | 'writable' | 'readOnly'>;

/** What the model (and `tools` output) is told of the sandbox: what a command can and cannot reach. */
function sandboxLine(sandbox: Sandbox, { network, filesystem, writable, readOnly }: Boundary): string {
  const net = network ? '' : ' There is no network but loopback.';
  if (sandbox.kind === 'bwrap') {
    // The config's files are named as one: there are 25 of them.
    const kept = readOnly.filter((p) => !CONFIG_FILES.includes(p));
    if (kept.length < readOnly.length) kept.push("the host's config files");
    const files =
      filesystem === 'open'
        ? 'the filesystem is not restricted'
        : `the filesystem is read-only except the workspace${kept.length ? ` (but ${kept.join(', ')})` : ''}, the temp directory${writable.map((p) => `, ${p}`).join('')}`;
    return `Sandbox (bubblewrap): the command sees only its own processes; ${files}.${net}`;
  }
  if (sandbox.kind === 'unshare')
    return `Sandbox (unshare): the command sees only its own processes; the filesystem is not restricted.${net}`;
  return `No sandbox${sandbox.unavailable ? ` (none works here: ${sandbox.unavailable})` : ''}: the command can read the host's files and the environment of the host's processes, API keys included.`;
}
