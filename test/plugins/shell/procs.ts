// Looks for live processes in /proc (Linux), to show that nothing a test started is left running.
import { readdirSync, readFileSync } from 'node:fs';

/** Alive and not a zombie (one that ended and waits only to be reaped). */
export function running(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

/** Pids of live (non-zombie) processes whose command line contains `needle`. */
export function processesMatching(needle: string): number[] {
  return livePids((cmdline) => cmdline.includes(needle));
}

/** Pids of live processes whose command line starts with `command`: the command itself, not a sandbox or shell that runs it. */
export function processesRunning(command: string): number[] {
  return livePids((cmdline) => cmdline.startsWith(command));
}

function livePids(test: (cmdline: string) => boolean): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8').replaceAll('\0', ' ');
      if (!test(cmdline)) continue;
      const state = readFileSync(`/proc/${entry}/stat`, 'utf8').replace(/^.*\) /s, '')[0];
      if (state !== 'Z') found.push(Number(entry));
    } catch {
      // the process ended while we looked
    }
  }
  return found;
}
