import Type from 'typebox';
import { definePlugin, defineTool } from '../core/contract.ts';
const Options = Type.Object({ units: Type.Union([Type.Literal('si'), Type.Literal('us')]) });
export default definePlugin({
  name: 'w', version: '1.0.0', options: Options,
  tools: [defineTool({ name: 't', description: 'd', inputSchema: Type.Object({}), execute: (_i, ctx) => { const u: 'si' | 'us' = ctx.options.units; return u; } })],
});
