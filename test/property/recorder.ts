// A plugin for the property suites: its tools hand back, as `data`, the input they received, so a
// test can compare what a tool got with what the policy and the audit trail saw, in every isolation.
import Type from 'typebox';

const execute = (input: unknown) => ({ content: 'recorded', data: input });

export default {
  name: 'recorder',
  version: '1.0.0',
  tools: [
    {
      name: 'record',
      description: 'Returns its input unchanged as data; the schema takes any object.',
      inputSchema: Type.Object({}),
      execute,
    },
    {
      name: 'record_defaults',
      description: 'Returns its input as data; the schema fills defaults that NFC and the canonical form change.',
      inputSchema: Type.Object({
        mode: Type.Optional(Type.String({ description: 'A mode.', default: 'cafe\u0301' })),
        n: Type.Optional(Type.Number({ description: 'A number.', default: -0 })),
        list: Type.Optional(
          Type.Array(Type.Object({ flag: Type.Optional(Type.Boolean({ description: 'A flag.', default: true })) }), {
            description: 'Items.',
          }),
        ),
      }),
      execute,
    },
  ],
};
