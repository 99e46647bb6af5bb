// jiti's stand-in built-ins (core/jiti.ts), in the thread where they matter: a worker that imports a
// TypeScript plugin through jiti. The plugin's own imports of the same built-ins get the real ones.
import { createHash } from 'node:crypto';
import { expect } from 'chai';
import fc from 'fast-check';
import { createHost } from '../core/index.ts';
import { md5Hex } from '../core/jiti.ts';
import { tempDir } from './helpers.ts';

const STOOD_IN = ['assert', 'crypto', 'perf_hooks', 'tty', 'v8'];

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
        const crypto = await import('node:crypto');
        return [typeof v8.getHeapStatistics().used_heap_size, typeof monitorEventLoopDelay, typeof performance.now(), typeof tty.isatty, crypto.createHash('md5').update('a').digest('hex')].join(',');
      },
    },
  ],
};
`;

describe('jiti in a worker (core/jiti.ts)', function () {
  this.timeout(60_000);

  it("loads a TypeScript plugin from jiti's cache without the built-ins jiti reads only for errors, debug lines and its cache key, which the plugin itself still gets", async () => {
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
          content: 'number,function,number,function,0cc175b9c0f1b6a831c399e269772661',
        });
      } finally {
        await host.close();
      }
    } finally {
      dir.cleanup();
    }
  });

  it("computes the MD5 that names jiti's cache files as node:crypto does, for any text and across block edges", () => {
    const md5 = (text: string) => createHash('md5').update(text).digest('hex');
    for (const length of [0, 1, 55, 56, 63, 64, 65, 119, 120, 128])
      expect(md5Hex('x'.repeat(length))).to.equal(md5('x'.repeat(length)));
    const long = 'é€𝄞x'.repeat(30_000); // multi-byte UTF-8, and a length in bits over 2^20
    expect(md5Hex(long)).to.equal(md5(long));
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 300 }), (text) => md5Hex(text) === md5(text)),
      { numRuns: 500 },
    );
  });
});
