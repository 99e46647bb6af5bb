// jiti's stand-in built-ins (core/jiti.ts), in the thread where they matter: a worker that imports a
// TypeScript plugin through jiti. The plugin's own imports of the same built-ins get the real ones.
import { expect } from 'chai';
import { createHost } from '../core/index.ts';
import { tempDir } from './helpers.ts';

const STOOD_IN = ['assert', 'perf_hooks', 'tty', 'v8'];

/** A plugin that reports which of those built-ins its thread had loaded when it was imported. */
const PROBE = `import Type from 'typebox';
const loaded = (process as unknown as { moduleLoadList: string[] }).moduleLoadList;
const atImport = ${JSON.stringify(STOOD_IN)}.filter((m) => loaded.includes('NativeModule ' + m));
export default {
  name: 'probe',
  version: '1.0.0',
  tools: [
    {
      name: 'loaded',
      description: 'The stood-in built-ins loaded by the time the plugin was imported.',
      inputSchema: Type.Object({}),
      execute: () => atImport.join(','),
    },
    {
      name: 'use',
      description: 'Uses the real modules, imported by the plugin itself.',
      inputSchema: Type.Object({}),
      execute: async () => {
        const v8 = await import('node:v8');
        const { performance, monitorEventLoopDelay } = await import('node:perf_hooks');
        const tty = await import('node:tty');
        return [typeof v8.getHeapStatistics().used_heap_size, typeof monitorEventLoopDelay, typeof performance.now(), typeof tty.isatty].join(',');
      },
    },
  ],
};
`;

describe('jiti in a worker (core/jiti.ts)', function () {
  this.timeout(60_000);

  it('loads a TypeScript plugin without the built-ins jiti reads only for errors and debug lines, which the plugin itself still gets', async () => {
    const dir = tempDir();
    dir.write('probe.ts', PROBE);
    const load = () =>
      createHost({
        cwd: dir.dir,
        audit: false,
        logLevel: 'error',
        config: {
          builtins: false,
          policy: { default: 'allow' },
          plugins: [{ module: './probe.ts', isolation: 'worker' }],
        },
      });
    try {
      // The first load transforms the plugin with Babel, which needs them all; the second takes
      // jiti's transform cache, as every later start of an unchanged plugin does.
      await (await load()).close();
      const host = await load();
      try {
        expect(host.plugins()[0]).to.include({ status: 'loaded', loader: 'jiti' });
        expect(await host.call('loaded', {})).to.deep.include({ isError: false, content: '' });
        expect(await host.call('use', {})).to.deep.include({
          isError: false,
          content: 'number,function,number,function',
        });
      } finally {
        await host.close();
      }
    } finally {
      dir.cleanup();
    }
  });
});
