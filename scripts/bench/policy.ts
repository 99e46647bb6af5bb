/**
 * Policy figures, each beside its floor from the same run: what a 50-rule policy adds to
 * `host.call()` on an inline echo tool (audit off), against the same host with no rules.
 * - "50 rules": a realistic policy over 20 tools; 3 rules (deny `match`, ask `where`, allow
 *   `where`) concern the called tool, which is what a call pays for: rules are indexed per tool.
 * - "50 rules on the called tool": the worst case, every rule a regex the call must test.
 * Interleaved batches, median of per-call means per batch.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { PolicyConfig } from '../../core/config-schema.ts';
import { stats, type Row } from './report.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

type Rule = NonNullable<PolicyConfig['allow']>[number];

/** 47 rules on other tools (names and globs, a third with regexes) + 3 on `echo`. */
function mixedPolicy(): PolicyConfig {
  const others: Rule[] = Array.from({ length: 47 }, (_, i): Rule => {
    const tool = i % 5 === 0 ? `ns${i}_*` : `tool_${i % 20}`;
    if (i % 3 === 0) return { tool, match: `"path":"/etc/${i}` };
    if (i % 3 === 1) return { tool, where: { command: `(ls|cat)${i}( [a-z]+)*` } };
    return { tool };
  });
  return {
    default: 'allow',
    deny: [{ tool: 'echo', match: '"text":"rm -rf', reason: 'no deletes' }, ...others.slice(0, 15)],
    ask: [{ tool: 'echo', where: { text: 'sudo .*' } }, ...others.slice(15, 30)],
    allow: [...others.slice(30), { tool: 'echo', where: { text: '[a-z ]*' } }],
  };
}

/** 50 regex rules that all concern `echo` and none matches "hello" but the last. */
function worstPolicy(): PolicyConfig {
  const rules: Rule[] = Array.from({ length: 49 }, (_, i) => ({ tool: 'echo', match: `"text":"(rm|mv|cp)${i} ` }));
  return {
    default: 'deny',
    builtinRules: false,
    deny: rules.slice(0, 20),
    ask: rules.slice(20),
    allow: [{ tool: 'echo', where: { text: '[a-z]+' } }],
  };
}

export async function run(): Promise<Row[]> {
  const { createHost } = (await import(join(ROOT, 'dist', 'index.js'))) as typeof import('../../core/index.ts');
  const dir = mkdtempSync(join(tmpdir(), 'rh-bench-policy-'));
  const file = join(dir, 'echo.mjs');
  writeFileSync(
    file,
    `export default { name: 'echo', version: '1.0.0', tools: [{ name: 'echo', description: 'Echo.', inputSchema: { type: 'object', properties: { text: { type: 'string', description: 'Text.' } }, required: ['text'], additionalProperties: false }, execute: async ({ text }) => text }] };`,
  );
  const make = (policy: PolicyConfig) =>
    createHost({
      cwd: dir,
      audit: false,
      logLevel: 'error',
      config: { builtins: false, plugins: [{ module: file, isolation: 'inline' }], policy },
    });
  const none = await make({ default: 'allow', builtinRules: false });
  const mixed = await make(mixedPolicy());
  const worst = await make(worstPolicy());
  const json = '{"text":"hello"}';
  for (const h of [none, mixed, worst]) {
    const r = await h.call('echo', json);
    if (r.isError) throw new Error(`bench setup: echo failed: ${r.content}`);
  }

  const variants = {
    none: () => none.call('echo', json),
    mixed: () => mixed.call('echo', json),
    worst: () => worst.call('echo', json),
  };
  const samples: Record<string, number[]> = { none: [], mixed: [], worst: [] };
  const batch = async (rounds: number, size: number, keep: boolean) => {
    for (let r = 0; r < rounds; r++) {
      for (const [name, fn] of Object.entries(variants)) {
        const t0 = process.hrtime.bigint();
        for (let i = 0; i < size; i++) await fn();
        if (keep) samples[name]!.push(Number(process.hrtime.bigint() - t0) / size);
      }
    }
  };
  await batch(20, 2000, false); // warm-up
  await batch(200, 500, true);
  await Promise.all([none.close(), mixed.close(), worst.close()]);
  rmSync(dir, { recursive: true, force: true });

  const us = (ns: number) => ns / 1000;
  const base = stats(samples.none!).median;
  const mix = stats(samples.mixed!).median;
  const bad = stats(samples.worst!).median;
  return [
    { name: 'host.call() echo, no policy rules: median', value: us(base), unit: 'µs' },
    {
      name: 'host.call() echo, 50 rules (3 on echo): median',
      value: us(mix),
      unit: 'µs',
      floor: { name: 'no rules', value: us(base) },
    },
    { name: 'policy cost per call, 50 rules (3 on echo)', value: us(mix - base), unit: 'µs', target: '≤ 2 µs' },
    { name: 'policy cost per call, 50 regex rules all on echo', value: us(bad - base), unit: 'µs' },
  ];
}
