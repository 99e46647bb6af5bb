/**
 * The built-in shell tool, `bash`. Written exactly as a third-party plugin is. `setup` gives each
 * host its own set of process groups, ended when that host closes (or the process exits).
 */
import { definePlugin } from 'rousseau-host';
import { createBashTool } from './bash.ts';
import { limitsOf, ShellOptions } from './options.ts';
import { ProcessGroups } from './process-groups.ts';

export default definePlugin({
  name: 'shell',
  version: '1.0.0',
  description: 'Run shell commands in the workspace, each in its own process group.',
  options: ShellOptions,
  setup({ options, signal }) {
    const groups = new ProcessGroups();
    const killOnExit = () => groups.killAll();
    process.once('exit', killOnExit);
    signal.addEventListener(
      'abort',
      () => {
        process.off('exit', killOnExit);
        groups.terminateAll(limitsOf(options).killGraceMs);
      },
      { once: true },
    );
    return [createBashTool(groups)];
  },
});
