// The typing helpers: they return what they are given, and their types carry the contract. The
// `@ts-expect-error` lines are the type tests: `npm run typecheck` fails if one of them compiles.
import { expect } from 'chai';
import Type from 'typebox';
import { definePlugin, defineTool } from '../core/contract.ts';
import { toolContext } from './plugins/tool-context.ts';

describe('contract helpers', () => {
  it('type ctx.options: untyped options are unknown values, a plugin with an options schema gives its own type', async () => {
    const options = Type.Object({ units: Type.String({ description: 'Units.' }) });
    const plain = defineTool({
      name: 'plain',
      description: 'Reads an option it does not know the type of.',
      inputSchema: Type.Object({}),
      execute: (_input, ctx) => {
        // @ts-expect-error an option of unknown type cannot be read through
        return String(ctx.options.nonexistent.deeply);
      },
    });
    const plugin = definePlugin({
      name: 'typed',
      version: '1.0.0',
      options,
      setup: ({ options: given }) => [
        defineTool({
          name: 'typed',
          description: 'Reads its typed option.',
          inputSchema: Type.Object({}),
          execute: () => given.units.toUpperCase(),
        }),
      ],
    });
    expect(plugin.name).to.equal('typed');
    const tools = await plugin.setup!({
      options: { units: 'si' },
      log: toolContext('/').log,
      workspace: '/',
      signal: new AbortController().signal,
    });
    expect(await tools[0]!.execute({}, toolContext('/'))).to.equal('SI');
    expect(() => plain.execute({}, toolContext('/'))).to.throw(TypeError);
  });
});
