// Plumbing for the scaffolder tests: run a command for real, and give a scaffolded plugin a
// node_modules made of links into this repo (the host itself, and the repo's installed copies of
// the template's dev dependencies), the way `npm install` would lay it out, minus the network.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
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

/** `create-rousseau-tool ...args`, run as a real process. */
export function scaffold(args: string[], cwd: string, env?: NodeJS.ProcessEnv): Promise<RunResult> {
  return run(process.execPath, [SCAFFOLDER, ...args], { cwd, ...(env ? { env } : {}) });
}

/**
 * Links every dev and peer dependency of the plugin in `dir` to this repo: `rousseau-host` to the
 * repo itself, the others to the repo's node_modules. Bins get shell shims, as npm makes them.
 */
export function linkDependencies(dir: string): void {
  const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as Record<
    string,
    Record<string, string> | undefined
  >;
  const names = new Set([...Object.keys(pkg.devDependencies ?? {}), ...Object.keys(pkg.peerDependencies ?? {})]);
  const modules = join(dir, 'node_modules');
  mkdirSync(join(modules, '.bin'), { recursive: true });
  for (const name of names) {
    const source = name === 'rousseau-host' ? ROOT : join(ROOT, 'node_modules', name);
    if (!existsSync(join(source, 'package.json'))) throw new Error(`cannot link ${name}: ${source} is not installed`);
    const link = join(modules, name);
    mkdirSync(dirname(link), { recursive: true });
    symlinkSync(source, link, 'dir');
    const { bin } = JSON.parse(readFileSync(join(source, 'package.json'), 'utf8')) as {
      bin?: string | Record<string, string>;
    };
    const bins = typeof bin === 'string' ? { [name.replace(/^@[^/]+\//, '')]: bin } : (bin ?? {});
    for (const [command, file] of Object.entries(bins)) {
      writeFileSync(
        join(modules, '.bin', command),
        `#!/bin/sh\nexec "${process.execPath}" "${join(link, file)}" "$@"\n`,
        { mode: 0o755 },
      );
    }
  }
}
