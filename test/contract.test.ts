// The typing helpers: they return what they are given, and their types carry the contract. The
// `@ts-expect-error` lines are the type tests: `npm run typecheck` fails if one of them compiles.
import { expect } from 'chai';
import Type from 'typebox';
import { definePlugin, defineTool, defineToolFor } from '../core/contract.ts';
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

  it('types ctx.options from the options schema for a tool made with defineToolFor', async () => {
    const Options = Type.Object({ units: Type.Union([Type.Literal('si'), Type.Literal('us')]) });
    const tool = defineToolFor(Options);
    const plugin = definePlugin({
      name: 'units',
      version: '1.0.0',
      options: Options,
      tools: [
        tool({
          name: 'units',
          description: 'Says the units it was configured with.',
          inputSchema: Type.Object({ n: Type.Number({ description: 'A number.' }) }),
          execute: ({ n }, ctx) => {
            const units: 'si' | 'us' = ctx.options.units;
            // @ts-expect-error the schema has no such option
            void ctx.options.nonexistent;
            return `${n} ${units}`;
          },
        }),
      ],
    });
    const ctx = { ...toolContext('/'), options: { units: 'si' as const } };
    expect(await plugin.tools![0]!.execute({ n: 3 }, ctx)).to.equal('3 si');
  });

  it('types the data a tool returns from its outputSchema; without one, data is any value', async () => {
    const Rgb = Type.Object({ r: Type.Integer({ description: 'Red.' }), hex: Type.String({ description: 'Hex.' }) });
    const typed = defineTool({
      name: 'rgb',
      description: 'A colour as data.',
      inputSchema: Type.Object({}),
      outputSchema: Rgb,
      execute: () => ({ content: '', data: { r: 255, hex: '#ff0000' } }),
    });
    defineTool({
      name: 'rgb_wrong',
      description: 'Data that does not match its outputSchema.',
      inputSchema: Type.Object({}),
      outputSchema: Rgb,
      // @ts-expect-error r must be a number, as the outputSchema says
      execute: () => ({ content: '', data: { r: '255', hex: '#ff0000' } }),
    });
    const made = defineToolFor(Type.Object({}));
    made({
      name: 'rgb_for',
      description: 'The same through defineToolFor.',
      inputSchema: Type.Object({}),
      outputSchema: Rgb,
      // @ts-expect-error hex is missing
      execute: () => ({ content: '', data: { r: 1 } }),
    });
    const free = defineTool({
      name: 'free',
      description: 'No outputSchema: data is not checked, so not typed.',
      inputSchema: Type.Object({}),
      execute: () => ({ content: 'x', data: [1, 'two'] }),
    });
    const plugin = definePlugin({ name: 'colours', version: '1.0.0', tools: [typed, free] });
    expect(await plugin.tools![0]!.execute({}, toolContext('/'))).to.deep.equal({
      content: '',
      data: { r: 255, hex: '#ff0000' },
    });
    expect(await plugin.tools![1]!.execute({}, toolContext('/'))).to.deep.equal({ content: 'x', data: [1, 'two'] });
  });
});
