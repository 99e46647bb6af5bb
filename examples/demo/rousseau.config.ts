// The offline demo that `npm start` runs: the built-in fs and shell plugins, a policy, and the
// replay provider playing demo.json, so every tool call below is real but no model or key is needed.
import { defineConfig } from 'rousseau-host';

export default defineConfig({
  builtins: ['fs', 'shell'],
  policy: {
    default: 'ask', // without a terminal, `ask` is a denial
    allow: [{ tool: 'bash' }],
    deny: [{ tool: 'bash', match: 'rm -rf', reason: 'the demo never deletes files' }],
  },
  provider: { name: 'replay', file: './demo.json' },
  agent: { maxTurns: 8 },
  log: { level: 'warn', audit: false },
});
