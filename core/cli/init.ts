/** `rousseau-host init`: writes a commented rousseau.config.ts. */
import { closeSync, existsSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { EXIT, print, printJson, UsageError, type Command } from './command.ts';
import { messageOf } from '../errors.ts';
import { openHostFile } from '../paths.ts';
import { hostCommand } from './host-command.ts';

export const CONFIG_TEMPLATE = `import { defineConfig } from 'rousseau-host';

// rousseau-host config. Reference: "Config reference" in node_modules/rousseau-host/README.md.
export default defineConfig({
  // Plugins: a path (relative to this file) or a package name; an object for settings.
  plugins: [
    // './my-tool',
    // { module: 'rousseau-plugin-weather', options: { units: 'si' }, timeoutMs: 5000, isolation: 'worker' },
  ],

  // Built-in plugins: fs (read, write, edit, grep, glob, ls), shell (bash), http (http_get). false for none.
  builtins: ['fs', 'shell', 'http'],

  // Who may call what. Precedence: deny, then ask, then allow, then default.
  // \`ask\` prompts on a terminal; with no terminal it is a denial unless --yes.
  policy: {
    default: 'ask',
    readOnlyDefault: 'allow',
    allow: [],
    ask: [{ tool: 'bash' }],
    deny: [],
  },

  // The model: anthropic (ANTHROPIC_API_KEY), openai or openai-responses (OPENAI_API_KEY, OPENAI_BASE_URL),
  // or replay (a script of model turns in a JSON file, provider.file: "Replay scripts" in docs/agent.md).
  // provider: { name: 'anthropic', model: 'claude-sonnet-4-5' },

  agent: { maxTurns: 32 },

  // Serving a team over HTTP (rousseau-host serve): who may call (a name and where its token is),
  // and limits per caller. "Serving a team" in node_modules/rousseau-host/docs/serve.md.
  // serve: { auth: { tokens: [{ name: 'ci', tokenEnv: 'ROUSSEAU_TOKEN_CI' }] }, limits: { callsPerSecond: 5, inFlight: 4 } },

  // Logs go to stderr; the audit trail is one JSON line per decision and per call.
  log: { level: 'info', audit: '.rousseau/audit.jsonl' },
});
`;

export const init: Command = {
  name: 'init',
  summary: 'Write a commented rousseau.config.ts in the current directory (--force to overwrite).',
  usage: 'init [--force] [--json]',
  options: { force: { type: 'boolean' } },
  async run({ values }) {
    const dir = resolve(typeof values.cwd === 'string' ? values.cwd : process.cwd());
    const file = join(dir, 'rousseau.config.ts');
    if (existsSync(file) && !values.force) {
      throw new UsageError(`${file} already exists; run with --force to overwrite it`);
    }
    let fd: number;
    try {
      fd = openHostFile(file, dir, 'replace');
    } catch (error) {
      throw new UsageError(`cannot write ${file}: ${messageOf(error)}`);
    }
    try {
      writeFileSync(fd, CONFIG_TEMPLATE);
    } finally {
      closeSync(fd);
    }
    if (values.json) printJson({ file });
    else print(`Wrote ${file}\nNext: add your plugins to it, then run: ${hostCommand(dir)} tools`);
    return EXIT.ok;
  },
};
