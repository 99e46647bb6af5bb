// What the CLI test files share (they are split so that they run in parallel beside each other):
// the fixture plugins, and a fresh project per test.
import { join } from 'node:path';
import { FIXTURES, tempDir, tempDirPerTest } from '../helpers.ts';

export const fixture = (name: string) => join(FIXTURES, 'plugins', name);

export interface Project {
  /** The current test's project directory. */
  readonly dir: string;
  write(rel: string, text: string): string;
  /** Writes `value` as its rousseau.config.json; returns the file's path. */
  config(value: unknown): string;
}

/** A temp dir with a package.json and no config. Registers the hooks that give each test of the enclosing `describe` its own project. */
export function projectPerTest(): Project {
  const t = tempDirPerTest();
  beforeEach(() => t.write('package.json', '{"name":"cli-test"}'));
  return {
    get dir() {
      return t.dir;
    },
    write: (rel, text) => t.write(rel, text),
    config: (value) => t.write('rousseau.config.json', JSON.stringify(value)),
  };
}

/** No model keys or endpoints from the environment: a REPL test plays a replay script, or talks to its own fake server. */
export const NO_KEYS = { ANTHROPIC_API_KEY: '', OPENAI_API_KEY: '', OPENAI_BASE_URL: '', ANTHROPIC_BASE_URL: '' };

/** A temp dir whose config loads the terminal fixture plugin under `policy`, and a replay script of `turns`. */
export function replayWorkspace(turns: unknown[], policy: object = { default: 'allow' }) {
  const tmp = tempDir();
  tmp.write(
    'rousseau.config.json',
    JSON.stringify({ builtins: false, plugins: [fixture('term.ts')], policy, log: { audit: false } }),
  );
  const script = tmp.write('script.json', JSON.stringify({ turns }));
  return { tmp, script };
}
