// Plumbing for the scaffolder tests: run a command for real, with none of the outer npm's settings.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { ROOT } from '../helpers.ts';

export const SCAFFOLDER = join(ROOT, 'scripts', 'create-rousseau-tool', 'index.js');

export interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The environment of a child that must not inherit the outer `npm test`'s npm settings. */
function cleanEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !/^npm_/i.test(key)));
  return {
    ...env,
    NO_COLOR: '1',
    npm_config_update_notifier: 'false',
    npm_config_fund: 'false',
    npm_config_audit: 'false',
    ...extra,
  };
}

/** Runs a command to its end and collects its output; stdin is closed (not a terminal). */
export function run(
  command: string,
  args: string[],
  options: { cwd: string; env?: NodeJS.ProcessEnv; timeoutMs?: number },
): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: options.cwd,
      env: cleanEnv(options.env),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const limit = options.timeoutMs ?? 15_000;
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(
        new Error(`${command} ${args.join(' ')} did not exit within ${limit} ms\nstdout: ${stdout}\nstderr: ${stderr}`),
      );
    }, limit);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/**
 * `create-rousseau-tool ...args`, run as a real process, with this repo as the new plugin's host
 * (`--host`). `lookUp` leaves the host to the scaffolder's own look-up on the registry instead, which
 * runs `npm view` (~0.7 s of CPU): offline, so it fails at once and falls back to this repo.
 */
export function scaffold(
  args: string[],
  cwd: string,
  { env, lookUp = false }: { env?: NodeJS.ProcessEnv; lookUp?: boolean } = {},
): Promise<RunResult> {
  const host = lookUp || args.includes('--host') ? [] : ['--host', ROOT];
  return run(process.execPath, [SCAFFOLDER, ...args, ...host], { cwd, env: { npm_config_offline: 'true', ...env } });
}
