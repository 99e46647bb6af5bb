// A plugin for the property suites: its one tool hands back, as `data`, the input it received, so a
// test can compare what the tool got with what the policy and the audit trail saw, in every isolation.
import Type from 'typebox';

export default {
  name: 'recorder',
  version: '1.0.0',
  tools: [
    {
      name: 'record',
      description: 'Returns its input unchanged as data; the schema takes any object.',
      inputSchema: Type.Object({}),
      execute: (input: unknown) => ({ content: 'recorded', data: input }),
    },
  ],
};
