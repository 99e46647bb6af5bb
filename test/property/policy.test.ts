// Properties of the policy on real calls (host.call through the whole pipeline): for random inputs
// spelled every way JSON allows, (a) what the policy decided on, the approval prompt and the audit
// line show the input the tool received, in every isolation; (b) a deny rule written on a value
// matches every spelling of that value, or the input is refused as invalid JSON.
import { expect } from 'chai';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { canonicalJson, normalizeValue } from '../../core/canonical-json.ts';
import type { PolicyRuleConfig } from '../../core/config-schema.ts';
import { createHost } from '../../core/host.ts';
import { compilePolicy, type Policy } from '../../core/policy.ts';
import { MAX_DEPTH, parseStrictJson } from '../../core/safe-json.ts';
import type { Isolation } from '../../core/types.ts';
import { tempDir } from '../helpers.ts';
import { expectedInput, jsonObject, key, literal, RUNS, setOwn, spell } from './json.ts';

const RECORDER = fileURLToPath(new URL('recorder.ts', import.meta.url));
const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

describe('property: the policy sees what the tool gets', () => {
  let t: ReturnType<typeof tempDir>;
  beforeEach(() => (t = tempDir()));
  afterEach(() => t.cleanup());

  const runs: Record<Isolation, number> = { inline: RUNS, worker: RUNS / 2, process: RUNS / 2 };
  for (const isolation of ['inline', 'worker', 'process'] as const) {
    it(`${isolation}: the approval prompt, host.decide and the audit line show the canonical form of exactly the input the tool received`, async () => {
      const audit = join(t.dir, 'audit.jsonl');
      const prompted = new Map<string, string>();
      const host = await createHost({
        cwd: t.dir,
        audit,
        logLevel: 'error',
        approve: (request) => {
          prompted.set(request.callId, request.input);
          return true;
        },
        config: {
          builtins: false,
          plugins: [{ module: RECORDER, isolation }],
          policy: { default: 'allow', ask: [{ tool: 'record' }] },
        },
      });
      const ran = new Map<string, string>();
      let n = 0;
      try {
        await fc.assert(
          fc.asyncProperty(jsonObject, fc.integer(), fc.boolean(), async (value, seed, asText) => {
            const callId = `c${n++}`;
            const raw = asText ? spell(value, seed).text : value;
            const result = await host.call('record', raw, { callId });
            const expected = expectedInput(value);
            if (expected === undefined) {
              expect(result.code, result.content).to.equal('invalid_json');
              expect(prompted.has(callId)).to.equal(false);
              return;
            }
            expect(result.isError, result.content).to.equal(false);
            expect(result.data).to.deep.equal(expected); // -0 and 0 differ for deep.equal
            const canonical = canonicalJson(result.data);
            expect(prompted.get(callId)).to.equal(canonical);
            expect(parseStrictJson(canonical)).to.deep.equal(result.data);
            const check = host.decide('record', raw);
            expect(check.ok && check.canonical).to.equal(canonical);
            ran.set(callId, canonical);
          }),
          { numRuns: runs[isolation] },
        );
      } finally {
        await host.close();
      }
      expect(ran.size).to.be.greaterThan(runs[isolation] / 2);
      const lines = readFileSync(audit, 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      for (const [callId, canonical] of ran) {
        const [decision, call] = lines.filter((l) => l.callId === callId);
        expect(decision).to.include({
          event: 'decision',
          decision: 'ask',
          answer: 'approved',
          input: canonical,
          inputSha256: sha256(canonical),
        });
        expect(call).to.include({ event: 'call', outcome: 'ok', inputSha256: sha256(canonical) });
      }
    });
  }
});

describe('property: nesting around the depth limit, through a real call', () => {
  it('up to MAX_DEPTH levels reach the tool and the policy alike, as text or as a value; deeper is invalid_json, never a crash', async () => {
    const host = await createHost({
      audit: false,
      logLevel: 'error',
      config: { builtins: false, plugins: [{ module: RECORDER, isolation: 'worker' }], policy: { default: 'allow' } },
    });
    try {
      await fc.assert(
        fc.asyncProperty(
          fc.integer({ min: MAX_DEPTH - 2, max: MAX_DEPTH + 2 }),
          key,
          fc.boolean(),
          async (levels, k, asText) => {
            let value: unknown = {};
            for (let i = 1; i < levels; i++) value = i % 2 ? [value] : setOwn({}, k, value);
            const input = levels % 2 ? value : setOwn({}, k, value); // the outermost is an object either way
            const depth = levels % 2 ? levels : levels + 1;
            const result = await host.call('record', asText ? spell(input, levels).text : input);
            const expected = expectedInput(input);
            if (depth > MAX_DEPTH || expected === undefined) {
              expect(result.code, result.content).to.equal('invalid_json');
              return;
            }
            expect(result.isError, result.content).to.equal(false);
            expect(result.data).to.deep.equal(expected);
            const check = host.decide('record', input);
            expect(check.ok && check.canonical).to.equal(canonicalJson(expected));
          },
        ),
        { numRuns: 40 },
      );
    } finally {
      await host.close();
    }
  });
});

describe('property: an "always" answer covers one canonical input', () => {
  it('every other spelling of the approved input runs without asking; any other input is asked again', async () => {
    const prompted: string[] = [];
    const host = await createHost({
      audit: false,
      logLevel: 'error',
      approve: (request) => {
        prompted.push(request.input);
        return 'always';
      },
      config: { builtins: false, plugins: [{ module: RECORDER, isolation: 'inline' }], policy: { default: 'ask' } },
    });
    let session = 0;
    try {
      await fc.assert(
        fc.asyncProperty(jsonObject, jsonObject, fc.integer(), fc.integer(), async (value, other, seed1, seed2) => {
          const expected = expectedInput(value);
          const otherExpected = expectedInput(other);
          if (expected === undefined || otherExpected === undefined) return;
          const sessionId = `s${session++}`;
          prompted.length = 0;
          expect((await host.call('record', spell(value, seed1).text, { sessionId })).isError).to.equal(false);
          expect(prompted).to.deep.equal([canonicalJson(expected)]);
          expect((await host.call('record', spell(value, seed2).text, { sessionId })).isError).to.equal(false);
          expect(prompted, 'another spelling of the approved input was asked again').to.have.length(1);
          await host.call('record', spell(other, seed2).text, { sessionId });
          expect(prompted.length, 'another input rode on the approval').to.equal(
            canonicalJson(otherExpected) === canonicalJson(expected) ? 1 : 2,
          );
        }),
        { numRuns: RUNS / 2 },
      );
    } finally {
      await host.close();
    }
  });
});

describe('property: schema defaults reach the policy and the tool alike', () => {
  it('a default filled in (at the top, in array items) is in the canonical input the policy decides on, in NFC, -0 as 0', async () => {
    const prompted = new Map<string, string>();
    const host = await createHost({
      audit: false,
      logLevel: 'error',
      approve: (request) => {
        prompted.set(request.callId, request.input);
        return true;
      },
      config: { builtins: false, plugins: [{ module: RECORDER, isolation: 'inline' }], policy: { default: 'ask' } },
    });
    const item = fc.record({ flag: fc.boolean() }, { requiredKeys: [] });
    const fields = fc.record(
      {
        mode: fc.string(),
        n: fc.double({ noNaN: true, noDefaultInfinity: true }),
        list: fc.array(item, { maxLength: 3 }),
      },
      { requiredKeys: [] },
    );
    let n = 0;
    try {
      await fc.assert(
        fc.asyncProperty(fields, fc.integer(), async (input, seed) => {
          const callId = `d${n++}`;
          const result = await host.call('record_defaults', spell(input, seed).text, { callId });
          expect(result.isError, result.content).to.equal(false);
          const filled = {
            mode: 'café',
            n: 0,
            ...input,
            ...(input.list ? { list: input.list.map((i) => ({ flag: true, ...i })) } : {}),
          };
          expect(result.data).to.deep.equal(expectedInput(filled));
          expect(prompted.get(callId)).to.equal(canonicalJson(result.data));
        }),
        { numRuns: RUNS / 2 },
      );
    } finally {
      await host.close();
    }
  });
});

describe('property: no spelling of a value gets past a deny rule on it', () => {
  /**
   * The value a rule is written on (as its author would: strings in NFC, other values as JSON), and
   * the values an input may hold that the policy must take for it (NFC twins, `-0`, `100` and `1e2`
   * are one number; spell() writes each of them many ways).
   */
  const TARGETS: [unknown, unknown[]][] = [
    ['rm -rf /', ['rm -rf /']],
    ['caf\u00e9', ['caf\u00e9', 'cafe\u0301']],
    ['\u00c5', ['\u00c5', 'A\u030a', '\u212b']],
    ['K', ['K', '\u212a']],
    ['a\tb', ['a\tb']],
    ['x\u2028y', ['x\u2028y']],
    ['\ud800', ['\ud800']],
    ['say "hi" \\ bye /', ['say "hi" \\ bye /']],
    [100, [100]],
    [0, [0, -0]],
    [1e21, [1e21]],
    [0.1, [0.1]],
    [{ a: [1, 'caf\u00e9'], b: null }, [{ b: null, a: [1, 'cafe\u0301'] }]],
  ];
  /** Per target: a `where` on a top-level field, a `match` on the canonical text, a `where` JSON pointer. */
  const rules = (value: unknown): PolicyRuleConfig[] => {
    const json = JSON.stringify(value);
    const text = typeof value === 'string' ? value : json;
    return [
      { tool: 'record', where: { command: literal(text) } },
      { tool: 'record', match: `"cmd":${literal(json)}` },
      { tool: 'record', where: { '/deep/0/x': literal(text) } },
    ];
  };
  const PLACES = ['command', 'cmd', 'deep'] as const;

  it('each value, wherever the rule reads it, spelled any way, in input of any shape: denied, or refused as invalid JSON', async () => {
    const host = await createHost({
      audit: false,
      logLevel: 'error',
      config: {
        builtins: false,
        plugins: [{ module: RECORDER, isolation: 'inline' }],
        policy: { default: 'allow', deny: TARGETS.flatMap(([value]) => rules(value)) },
      },
    });
    const target = fc.constantFrom(...TARGETS).chain(([, spellings]) => fc.constantFrom(...spellings));
    try {
      await fc.assert(
        fc.asyncProperty(
          target,
          fc.constantFrom(...PLACES),
          jsonObject,
          jsonObject,
          fc.integer(),
          fc.boolean(),
          fc.boolean(),
          async (held, place, rest, inner, seed, duplicate, asText) => {
            if (place === 'deep') setOwn(rest, 'deep', [setOwn(inner, 'x', held)]);
            else setOwn(rest, place, held);
            const { text, duplicated } = spell(rest, seed, duplicate);
            const raw = asText ? text : rest;
            const result = await host.call('record', raw);
            if ((asText && duplicated) || expectedInput(rest) === undefined) {
              expect(result.code, text).to.equal('invalid_json');
              return;
            }
            expect(result.code, `${text}\n${result.content}`).to.equal('denied');
            const check = host.decide('record', raw);
            expect(check.ok && check.decision).to.equal('deny');
          },
        ),
        { numRuns: RUNS * 2 },
      );
    } finally {
      await host.close();
    }
  });

  it('a rule written in any Unicode spelling of its value is refused at load, or denies every spelling of the input', () => {
    const spellings = fc
      .constantFrom(...TARGETS)
      .chain(([, held]) => fc.tuple(fc.constantFrom(...held), fc.constantFrom(...held)));
    fc.assert(
      fc.property(spellings, fc.nat({ max: PLACES.length - 1 }), ([written, held], place) => {
        let policy: Policy;
        try {
          policy = compilePolicy({ default: 'allow', deny: [rules(written)[place]!] });
        } catch (error) {
          expect(error).to.have.property('code', 'RH_ERR_CONFIG_INVALID');
          return;
        }
        const input = normalizeValue(PLACES[place] === 'deep' ? { deep: [{ x: held }] } : { [PLACES[place]!]: held });
        expect(
          policy.decide({ name: 'record' }, () => canonicalJson(input), input).decision,
          `rule on ${JSON.stringify(written)}, input ${JSON.stringify(held)}`,
        ).to.equal('deny');
      }),
      { numRuns: RUNS / 2 },
    );
  });
});
