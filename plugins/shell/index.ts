/**
 * The built-in shell tool, `bash`. Written exactly as a third-party plugin is. `setup` finds the
 * sandbox commands run in (sandbox.ts) and gives each host its own set of process groups, ended when
 * that host closes (or the process exits).
 */
import { definePlugin } from 'rousseau-host';
import { createBashTool } from './bash.ts';
import { limitsOf, ShellOptions } from './options.ts';
import { ProcessGroups } from './process-groups.ts';
import { chooseSandbox } from './sandbox.ts';

export default definePlugin({
  name: 'shell',
  version: '1.0.0',
  description: 'Run shell commands in the workspace, each in its own process group.',
  options: ShellOptions,
  async setup({ options, signal, workspace, log }) {
    const limits = limitsOf(options);
    const sandbox = await chooseSandbox(limits, workspace);
    if (sandbox.unavailable)
      log.warn(
        `bash runs commands without a sandbox, so they can read the environment of the host's processes (API keys): ${sandbox.unavailable}`,
      );
    // The host may have closed (or reloaded) while the sandbox was tried: an `abort` listener added
    // now would never run, and the `exit` one would stay for the life of the process.
    signal.throwIfAborted();
    const groups = new ProcessGroups();
    const killOnExit = () => groups.killAll();
    process.once('exit', killOnExit);
    signal.addEventListener(
      'abort',
      () => {
        process.off('exit', killOnExit);
        groups.terminateAll(limits.killGraceMs);
      },
      { once: true },
    );
    return [createBashTool(groups, sandbox, limits)];
  },
});
