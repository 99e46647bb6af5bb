// The one-way layering of core/ and what the built-in plugins may reach of it, read from the imports
// themselves: a layer imports its own files and layers of a lower rank, never one above it or a
// sibling of the same rank (the loader and the dispatcher know the registry, not each other).
import { expect } from 'chai';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { ROOT } from './helpers.ts';

interface Layer {
  name: string;
  rank: number;
  /** Files (`core/x.ts`) or folders (`core/x/`) it holds. */
  holds: readonly string[];
}

/**
 * Lowest first. A file of core/ listed nowhere is `shared`: the vocabulary every layer speaks (the
 * contract, errors, types, logs, JSON and schema checks, the policy and the audit the dispatcher
 * consults), which imports nothing of the layers above it.
 */
const LAYERS: readonly Layer[] = [
  { name: 'shared', rank: 0, holds: [] },
  { name: 'config', rank: 1, holds: ['core/config.ts'] },
  { name: 'runners', rank: 1, holds: ['core/runners/'] },
  { name: 'registry', rank: 2, holds: ['core/registry.ts'] },
  { name: 'result', rank: 2, holds: ['core/output.ts'] },
  { name: 'loader', rank: 3, holds: ['core/loader.ts', 'core/reload.ts'] },
  {
    name: 'dispatcher',
    rank: 3,
    holds: ['core/dispatch.ts', 'core/approval.ts', 'core/call-input.ts', 'core/guarded-run.ts'],
  },
  { name: 'host', rank: 4, holds: ['core/host.ts', 'core/watch.ts'] },
  { name: 'agent', rank: 5, holds: ['core/agent/'] },
  { name: 'mcp', rank: 5, holds: ['core/mcp/'] },
  { name: 'cli', rank: 6, holds: ['core/cli/'] },
  { name: 'entry', rank: 7, holds: ['core/index.ts'] },
];

/**
 * What of core/ a built-in plugin may import besides the public contract (`rousseau-host`): modules
 * with no host state that the plugin must agree with the host on, each importing only `shared`.
 */
const CORE_FOR_PLUGINS: Readonly<Record<string, string>> = {
  'core/config-names.ts': 'the config files the file tools refuse to write and the sandbox keeps read-only',
  'core/linear-regex.ts': "grep's patterns run on the same linear-time engine as the host's",
  'core/abortable.ts': "grep's regex worker waits the way the host waits",
  'core/runners/watchdog.ts': "the shell tool's process groups die with the host, through the host's one watchdog",
};

const SHARED = LAYERS[0] as Layer;

function layerOf(file: string): Layer {
  return LAYERS.find((l) => l.holds.some((h) => (h.endsWith('/') ? file.startsWith(h) : file === h))) ?? SHARED;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))
    .map((f) => join(dir, f).split('\\').join('/'));
}

// Statements at the start of a line (the formatter puts them there), so an import quoted in a comment
// or a template does not count; `import('./x.ts')` loads a file of the repo lazily and counts too.
const STATIC = /^(?:import|export)\s+(?:type\s+)?[\w\s{},*$]*?\bfrom\s*['"]([^'"]+)['"]|^import\s*['"]([^'"]+)['"]/gm;
const DYNAMIC = /\bimport\(\s*['"](\.[^'"]+)['"]\s*\)/g;

/** Each relative import of `file`, as a path from the repo's root; bare ones are packages. */
function importsOf(file: string, text: string): string[] {
  const found = [...text.matchAll(STATIC)].map((m) => (m[1] ?? m[2]) as string);
  for (const m of text.matchAll(DYNAMIC)) found.push(m[1] as string);
  return found
    .filter((s) => s.startsWith('.'))
    .map((s) =>
      normalize(join(dirname(file), s))
        .split('\\')
        .join('/'),
    );
}

/** One line per import that breaks the layering, naming the file, the import and both layers. */
function violations(graph: ReadonlyMap<string, readonly string[]>): string[] {
  const found: string[] = [];
  for (const [file, targets] of graph) {
    for (const target of targets) {
      if (file.startsWith('plugins/')) {
        const own = file.split('/').slice(0, 2).join('/');
        if (target.startsWith(`${own}/`) || target in CORE_FOR_PLUGINS) continue;
        found.push(
          `${file} imports ${target}: a plugin imports its own folder, the public contract and ${Object.keys(CORE_FOR_PLUGINS).join(', ')}`,
        );
        continue;
      }
      if (target.startsWith('plugins/')) {
        found.push(`${file} imports ${target}: core never imports a plugin`);
        continue;
      }
      const from = layerOf(file);
      const to = layerOf(target);
      if (from === to || to.rank < from.rank) continue;
      const how = to.rank === from.rank ? 'a sibling of the same rank' : 'a layer above it';
      found.push(`${file} (${from.name}, rank ${from.rank}) imports ${target} (${to.name}, rank ${to.rank}): ${how}`);
    }
  }
  return found;
}

describe('layers: imports point down', () => {
  const files = [...sourceFiles('core'), ...sourceFiles('plugins')];
  const graph = new Map(files.map((f) => [f, importsOf(f, readFileSync(join(ROOT, f), 'utf8'))]));

  it('reads every import of core/ and plugins/, each a file that exists', () => {
    const all = new Set(files);
    const missing = [...graph].flatMap(([f, ts]) => ts.filter((t) => !all.has(t)).map((t) => `${f} -> ${t}`));
    expect(missing, 'imports that name no source file (the reader misread one)').to.deep.equal([]);
    // Multi-line, type-only, re-exported and lazy imports are all read.
    expect(graph.get('core/host.ts')).to.include('core/dispatch.ts');
    expect(graph.get('core/types.ts')).to.include('core/policy.ts');
    expect(graph.get('core/index.ts')).to.include('core/agent/agent.ts');
    expect(graph.get('core/cli/command.ts')).to.include('core/host.ts');
  });

  it('has no import from a layer above or a sibling, and plugins reach only what they share with the host', () => {
    expect(violations(graph)).to.deep.equal([]);
  });

  it('names the file, the import and both layers when one points up', () => {
    const planted = new Map([
      ['core/registry.ts', ['core/dispatch.ts']],
      ['core/loader.ts', ['core/guarded-run.ts']],
      ['core/errors.ts', ['core/registry.ts']],
      ['plugins/fs/read.ts', ['core/registry.ts', 'plugins/http/url.ts', 'core/linear-regex.ts']],
      ['core/host.ts', ['plugins/fs/read.ts']],
    ]);
    const found = violations(planted);
    expect(found).to.have.length(6);
    expect(found[0]).to.equal(
      'core/registry.ts (registry, rank 2) imports core/dispatch.ts (dispatcher, rank 3): a layer above it',
    );
    expect(found[1]).to.include('(loader, rank 3)').and.include('(dispatcher, rank 3): a sibling of the same rank');
    expect(found[2]).to.include('core/errors.ts (shared, rank 0)');
    expect(found[3]).to.match(/^plugins\/fs\/read\.ts imports core\/registry\.ts: /);
    expect(found[4]).to.match(/^plugins\/fs\/read\.ts imports plugins\/http\/url\.ts: /);
    expect(found[5]).to.equal('core/host.ts imports plugins/fs/read.ts: core never imports a plugin');
  });

  it('keeps its map true: every file or folder it names exists, and what plugins share imports only shared', () => {
    const all = new Set(files);
    for (const h of LAYERS.flatMap((l) => l.holds)) {
      expect(h.endsWith('/') ? files.some((f) => f.startsWith(h)) : all.has(h), h).to.equal(true);
    }
    for (const shared of Object.keys(CORE_FOR_PLUGINS)) {
      expect(all.has(shared), shared).to.equal(true);
      const above = (graph.get(shared) ?? []).filter((t) => layerOf(t) !== SHARED);
      expect(above, `${shared} imports`).to.deep.equal([]);
    }
  });

  it('reads a statement only at the start of a line, and a lazy import only of a relative path', () => {
    const text = [
      'import {',
      '  a,',
      '  type B,',
      "} from './a.ts';",
      "export * from '../b.ts';",
      "import './c.ts';",
      " * import { x } from './in-a-comment.ts';",
      "const d = await import('./d.ts');",
      "const e = await import('got');",
      "import { f } from 'typebox';",
    ].join('\n');
    expect(importsOf('core/x/y.ts', text)).to.deep.equal(['core/x/a.ts', 'core/b.ts', 'core/x/c.ts', 'core/x/d.ts']);
  });
});
