// The real CLI in a pseudo-terminal, read as a person sees it. Under tmux (when installed) the
// screen is tmux's own rendering of the pane; otherwise util-linux `script` provides the terminal
// and the screen is rebuilt from the output by `render` (the cursor moves and erases the CLI and
// readline use). Either way `raw()` is every byte the CLI wrote, escape codes included.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { BIN, until } from '../helpers.ts';

export interface Terminal {
  /** Types text as is. */
  type(text: string): void;
  press(key: 'Enter' | 'Tab' | 'C-c' | 'C-d'): void;
  /** What the terminal shows now, scrollback included, without colour. */
  screen(): string;
  /** Everything the CLI wrote. */
  raw(): string;
  /** Waits until the screen matches `pattern` (`count` times). */
  waitFor(pattern: RegExp, count?: number): Promise<void>;
  /** The CLI's exit code, once it has exited. */
  exited(): Promise<number>;
  close(): void;
}

const HAS_TMUX = process.env.RH_TEST_TERMINAL !== 'script' && spawnSync('tmux', ['-V']).status === 0;
const KEYS = { Enter: '\r', Tab: '\t', 'C-c': '\u0003', 'C-d': '\u0004' } as const;
let sockets = 0;

/** `rousseau-host ...args` on a terminal `columns` wide, in `cwd`, with `env` over this process's. */
export function openTerminal(
  args: string[],
  options: { cwd: string; env?: NodeJS.ProcessEnv; columns?: number },
): Terminal {
  const env = { ...process.env, ...options.env };
  delete env.TMUX;
  const command = [process.execPath, BIN, ...args].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
  return HAS_TMUX ? tmux(command, options.cwd, env, options.columns ?? 110) : script(command, options.cwd, env);
}

function tmux(command: string, cwd: string, env: NodeJS.ProcessEnv, columns: number): Terminal {
  const socket = `rh-test-${process.pid}-${++sockets}`;
  const rawFile = join(cwd, `.tmux-${socket}.raw`);
  const statusFile = join(cwd, `.tmux-${socket}.status`);
  // No cwd: the test may have removed its directory by the time it closes the terminal.
  const run = (...args: string[]) =>
    execFileSync('tmux', ['-L', socket, '-f', '/dev/null', ...args], { env, encoding: 'utf8' });
  // A placeholder first: the pane is kept when the CLI exits, and its output is piped to a file
  // from the first byte on, before the CLI starts.
  run('new-session', '-d', '-s', 't', '-x', String(columns), '-y', '50', '-c', cwd, 'sleep 600');
  const socketPath = run('display-message', '-p', '#{socket_path}').trim();
  run('set-option', '-t', 't', 'remain-on-exit', 'on');
  run('set-option', '-t', 't', 'history-limit', '5000');
  run('pipe-pane', '-t', 't', '-o', `cat >> '${rawFile}'`);
  // tmux does not always fill in a dead pane's exit status: the shell writes it to a file. Its
  // no-op trap keeps it alive through a Ctrl-C that reaches the whole foreground process group.
  run('respawn-pane', '-k', '-t', 't', `trap : INT; ${command}; echo $? > '${statusFile}'`);
  const screen = () => run('capture-pane', '-p', '-J', '-t', 't', '-S', '-').replace(/\n+$/, '\n');
  return {
    type: (text) => run('send-keys', '-t', 't', '-l', text),
    press: (key) => run('send-keys', '-t', 't', key),
    screen,
    raw: () => (existsSync(rawFile) ? readFileSync(rawFile, 'utf8') : ''),
    waitFor: (pattern, count) => waitOn(screen, pattern, count),
    exited: async () => {
      const status = await until(() => existsSync(statusFile) && readFileSync(statusFile, 'utf8').trim(), {
        timeoutMs: 15_000,
        intervalMs: 100,
        message: () => `the CLI to exit; the screen:\n${screen()}`,
      });
      return Number(status);
    },
    close: () => {
      try {
        run('kill-server');
      } catch {
        // already gone
      }
      rmSync(socketPath, { force: true }); // tmux leaves it behind
    },
  };
}

function script(command: string, cwd: string, env: NodeJS.ProcessEnv): Terminal {
  // `exec` makes node the terminal's foreground process, or the shell would die of a Ctrl-C itself.
  const child = spawn('script', ['-qfec', `exec ${command}`, '/dev/null'], { cwd, env });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  const code = new Promise<number>((resolve) => child.on('close', (c) => resolve(c ?? -1)));
  const screen = () => render(out);
  return {
    type: (text) => child.stdin.write(text),
    press: (key) => child.stdin.write(KEYS[key]),
    screen,
    raw: () => out,
    waitFor: (pattern, count) => waitOn(screen, pattern, count),
    exited: () => code,
    close: () => child.kill('SIGKILL'),
  };
}

function waitOn(screen: () => string, pattern: RegExp, count = 1): Promise<void> {
  let last = '';
  return until(
    () => {
      last = screen();
      return (last.match(new RegExp(pattern.source, `${pattern.flags.replace('g', '')}g`))?.length ?? 0) >= count;
    },
    { timeoutMs: 15_000, intervalMs: 100, message: () => `${count} × ${pattern} on the screen:\n${last}` },
  ).then(() => undefined);
}

/** The text a terminal shows after `raw`: lines overwritten, erased and moved over as the cursor says. */
export function render(raw: string): string {
  const lines: string[] = [''];
  let row = 0;
  let col = 0;
  const put = (c: string) => {
    const line = lines[row] ?? '';
    lines[row] = line.padEnd(col).slice(0, col) + c + line.slice(col + 1);
    col++;
  };
  const sequences = /\u001b\[([?\d;]*)([A-Za-z])|\u001b[()][A-Z0-9]|\u001b[=>]|([\s\S])/g;
  for (const [, params, final, char] of raw.matchAll(sequences)) {
    if (char === '\r') col = 0;
    else if (char === '\n') {
      row++;
      col = 0;
      lines[row] ??= '';
    } else if (char === '\b') col = Math.max(0, col - 1);
    else if (char !== undefined) {
      if (char >= ' ') put(char);
    } else if (final) {
      const n = Number.parseInt(params ?? '', 10) || 1;
      if (final === 'F') [row, col] = [Math.max(0, row - n), 0];
      else if (final === 'A') row = Math.max(0, row - n);
      else if (final === 'B') row += n;
      else if (final === 'C') col += n;
      else if (final === 'D') col = Math.max(0, col - n);
      else if (final === 'G') col = n - 1;
      else if (final === 'K') lines[row] = (lines[row] ?? '').slice(0, col);
      else if (final === 'J') {
        lines[row] = (lines[row] ?? '').slice(0, col);
        lines.length = row + 1;
      }
      for (let r = 0; r <= row; r++) lines[r] ??= '';
    }
  }
  return `${lines.join('\n')}\n`;
}
