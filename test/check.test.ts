import { expect } from 'chai';
import { join } from 'node:path';
import Type from 'typebox';
import { checkPlugin } from '../core/check.ts';
import { describePlugin, describeTool } from '../core/plugin-report.ts';
import { compileLinear } from '../core/schema-patterns.ts';
import { runCli, tempDir } from './helpers.ts';

const FILE = '/plugins/p.ts';

/** Runs the check on a live export, the way the loader does (describe, then check). */
function check(exported: unknown, options = {}) {
  const plugin = describePlugin(exported);
  const tools = plugin.toolsType === 'array' ? (exported as { tools: unknown[] }).tools.map(describeTool) : null;
  return checkPlugin(FILE, plugin, tools, options);
}

const goodTool = () => ({
  name: 'get_weather',
  description: 'Current weather for a city.',
  inputSchema: Type.Object({ city: Type.String({ description: 'City name.' }) }, { additionalProperties: false }),
  execute: () => 'sunny',
});
const plugin = (over: Record<string, unknown> = {}) => ({
  name: 'weather',
  version: '1.0.0',
  tools: [goodTool()],
  ...over,
});
const errors = (exported: unknown, options = {}) => check(exported, options).filter((v) => v.severity === 'error');
const pointers = (exported: unknown) => errors(exported).map((v) => v.pointer);

describe('contract check', () => {
  it('passes a good plugin and a plain-object plugin with no host imports', () => {
    expect(errors(plugin())).to.deep.equal([]);
    const plain = {
      name: 'plain',
      version: '0.0.1',
      tools: [
        {
          name: 'x',
          description: 'X.',
          inputSchema: { type: 'object', properties: {} },
          execute() {
            return '';
          },
        },
      ],
    };
    expect(errors(plain)).to.deep.equal([]);
  });

  it('checks an outputSchema: an object schema (MCP serves structuredContent as one), regexes that compile, plain JSON', () => {
    const withOutput = (outputSchema: unknown) => plugin({ tools: [{ ...goodTool(), outputSchema }] });
    expect(errors(withOutput(Type.Object({ temp: Type.Number() })))).to.deep.equal([]);
    // Undescribed output properties only warn: the model reads the data, it never writes it.
    expect(check(withOutput(Type.Object({ temp: Type.Number() }))).map((v) => v.severity)).to.not.include('error');
    // And the warning says why for a value the model reads, not one it would write.
    expect(check(withOutput(Type.Object({ temp: Type.Number() }))).map((v) => v.message)).to.deep.equal([
      'property "temp" has no description: the model cannot know what the value means',
    ]);
    const [array] = errors(withOutput(Type.Array(Type.String())));
    expect(array).to.deep.include({ pointer: '/tools/0/outputSchema/type' });
    expect(array?.message).to.match(
      /outputSchema must have type "object" \(MCP's structuredContent is an object\), got "array"/,
    );
    expect(errors(withOutput('nope'))[0]?.message).to.match(/outputSchema must be a JSON-Schema object/);
    expect(pointers(withOutput({ type: 'object', properties: { s: { type: 'string', pattern: '(' } } }))).to.include(
      '/tools/0/outputSchema/properties/s/pattern',
    );
    expect(errors(withOutput({ type: 'object', default: 1n }))[0]).to.deep.include({
      pointer: '/tools/0/outputSchema',
    });
    expect(check(withOutput(Type.Object({}))).filter((v) => /unknown tool key/.test(v.message))).to.deep.equal([]);
  });

  it('says an undescribed option leaves users guessing, and an undescribed input leaves the model guessing', () => {
    const messages = check(
      plugin({
        options: Type.Object({ units: Type.String() }),
        tools: [{ ...goodTool(), inputSchema: Type.Object({ city: Type.String() }, { additionalProperties: false }) }],
      }),
    ).map((v) => v.message);
    expect(messages).to.include('property "units" has no description: users cannot know what to set there');
    expect(messages).to.include('property "city" has no description: the model cannot know what to put there');
  });

  it('requires the default export to be an object', () => {
    for (const bad of [null, 42, 'x', [], () => {}]) {
      const [v] = errors(bad);
      expect(v?.pointer).to.equal('');
      expect(v?.message).to.match(/default export must be a plugin object/);
    }
  });

  it('says once, and only, that a module has no default export', () => {
    const found = check(undefined);
    expect(found).to.have.length(1);
    expect(found[0]).to.include({ pointer: '', severity: 'error' });
    expect(found[0]!.message).to.match(/^the module has no default export: export the plugin with `export default/);
  });

  it('warns about a plugin with no tools', () => {
    const found = check(plugin({ tools: [] }));
    expect(found.filter((v) => v.severity === 'error')).to.deep.equal([]);
    expect(found).to.deep.include({
      file: FILE,
      pointer: '/tools',
      severity: 'warning',
      message: 'the plugin has no tools: it loads, and serves nothing (did setup() return an empty list?)',
    });
  });

  it('warns about a schema open to anything: Type.Any, Type.Unknown, objects that take undeclared keys', () => {
    const open = (inputSchema: unknown) => check(plugin({ tools: [{ ...goodTool(), inputSchema }] }));
    const found = open(
      Type.Object({
        any: Type.Any({ description: 'A.' }),
        unknown: Type.Unknown({ description: 'U.' }),
        nested: Type.Object({ a: Type.String({ description: 'A.' }) }, { description: 'N.' }),
        list: Type.Array(Type.Object({}, { additionalProperties: true }), { description: 'L.' }),
        map: Type.Record(Type.String(), Type.Number(), { description: 'M.' }),
        closed: Type.Object({}, { description: 'C.', additionalProperties: false }),
        typed: Type.Object({}, { description: 'T.', additionalProperties: Type.String() }),
      }),
    );
    expect(found.filter((v) => v.severity === 'error')).to.deep.equal([]);
    const warned = (text: RegExp) => found.filter((v) => text.test(v.message)).map((v) => v.pointer);
    expect(warned(/^accepts any value \(Type\.Any or Type\.Unknown\)/)).to.have.members([
      '/tools/0/inputSchema/properties/any',
      '/tools/0/inputSchema/properties/unknown',
    ]);
    expect(warned(/^object accepts keys it does not declare: add \{ additionalProperties: false \}/)).to.have.members([
      '/tools/0/inputSchema',
      '/tools/0/inputSchema/properties/nested',
      '/tools/0/inputSchema/properties/list/items',
    ]);
    expect(found.every((v) => v.tool === 'get_weather' && v.severity === 'warning')).to.equal(true);
    // A closed schema, the good tool's, warns about nothing; nor does an MCP server's open one.
    expect(check(plugin())).to.deep.equal([]);
    const mcp = check(plugin({ tools: [{ ...goodTool(), inputSchema: Type.Object({ a: Type.Any() }) }] }), {
      lenient: true,
    });
    expect(mcp.filter((v) => /accepts/.test(v.message))).to.deep.equal([]);
  });

  it('checks the plugin name and version', () => {
    expect(pointers(plugin({ name: 'Weather!' }))).to.deep.equal(['/name']);
    expect(pointers(plugin({ name: undefined }))).to.deep.equal(['/name']);
    expect(pointers(plugin({ version: '1.0' }))).to.deep.equal(['/version']);
    expect(pointers(plugin({ version: '1.2.3-beta.1+build.5' }))).to.deep.equal([]);
  });

  it('requires tools or setup, of the right types', () => {
    expect(pointers({ name: 'p', version: '1.0.0' })).to.deep.equal(['/tools']);
    expect(pointers({ name: 'p', version: '1.0.0', tools: {} })).to.deep.equal(['/tools']);
    expect(pointers({ name: 'p', version: '1.0.0', setup: 'no' })).to.deep.equal(['/setup']);
    expect(pointers({ name: 'p', version: '1.0.0', setup: () => [], dispose: 1 })).to.deep.equal(['/dispose']);
    expect(pointers({ name: 'p', version: '1.0.0', setup: () => [] })).to.deep.equal([]);
  });

  it('checks tool names: valid and unique within the plugin', () => {
    const v = errors(plugin({ tools: [{ ...goodTool(), name: 'bad name' }, goodTool(), goodTool()] }));
    expect(v.map((x) => x.pointer)).to.deep.equal(['/tools/0/name', '/tools/2/name']);
    expect(v[1]!.message).to.match(/duplicate tool name "get_weather" \(also \/tools\/1\)/);
    expect(v[1]!.tool).to.equal('get_weather');
    expect(errors(plugin({ tools: [{ ...goodTool(), name: 'x'.repeat(65) }] }))[0]!.pointer).to.equal('/tools/0/name');
  });

  it('requires a non-empty description and a function execute', () => {
    expect(pointers(plugin({ tools: [{ ...goodTool(), description: '  ' }] }))).to.deep.equal(['/tools/0/description']);
    expect(pointers(plugin({ tools: [{ ...goodTool(), execute: undefined }] }))).to.deep.equal(['/tools/0/execute']);
  });

  it('requires inputSchema to be an object schema that compiles', () => {
    expect(pointers(plugin({ tools: [{ ...goodTool(), inputSchema: undefined }] }))).to.deep.equal([
      '/tools/0/inputSchema',
    ]);
    expect(pointers(plugin({ tools: [{ ...goodTool(), inputSchema: Type.String() }] }))).to.deep.equal([
      '/tools/0/inputSchema/type',
    ]);
    const badPattern = { type: 'object', properties: { q: { type: 'string', description: 'Q.', pattern: '(' } } };
    expect(pointers(plugin({ tools: [{ ...goodTool(), inputSchema: badPattern }] }))).to.deep.equal([
      '/tools/0/inputSchema/properties/q/pattern',
    ]);
    const badType = { type: 'object', properties: { q: { type: 'strin', description: 'Q.' } } };
    expect(pointers(plugin({ tools: [{ ...goodTool(), inputSchema: badType }] }))).to.deep.equal([
      '/tools/0/inputSchema/properties/q/type',
    ]);
  });

  it('requires every property, nested ones too, to have a description', () => {
    const schema = Type.Object({
      city: Type.String(),
      where: Type.Object(
        { lat: Type.Number({ description: 'Latitude.' }), lon: Type.Number() },
        { description: 'Position.' },
      ),
    });
    expect(pointers(plugin({ tools: [{ ...goodTool(), inputSchema: schema }] }))).to.deep.equal([
      '/tools/0/inputSchema/properties/city/description',
      '/tools/0/inputSchema/properties/where/properties/lon/description',
    ]);
  });

  it('requires `required` to name only existing properties', () => {
    const schema = { type: 'object', properties: { a: { type: 'string', description: 'A.' } }, required: ['a', 'b'] };
    const [v] = errors(plugin({ tools: [{ ...goodTool(), inputSchema: schema }] }));
    expect(v?.pointer).to.equal('/tools/0/inputSchema/required/1');
    expect(v?.message).to.contain('"b"');
  });

  it('refuses a $ref to nothing in the schema, which would refuse every call as invalid input', () => {
    const inputSchema = (ref: string) => ({
      type: 'object',
      properties: { q: { $ref: ref, description: 'Q.' } },
      $defs: { Query: { type: 'string' } },
      // Data that looks like a schema is not one: its $ref is not followed.
      default: { q: { $ref: '#/nowhere' } },
    });
    const [v, ...rest] = errors(plugin({ tools: [{ ...goodTool(), inputSchema: inputSchema('#/$defs/Qeury') }] }));
    expect(rest).to.deep.equal([]);
    expect(v?.pointer).to.equal('/tools/0/inputSchema/properties/q/$ref');
    expect(v?.message).to.contain('"#/$defs/Qeury"').and.contain('points to no schema');
    expect(errors(plugin({ tools: [{ ...goodTool(), inputSchema: inputSchema('#/$defs/Query') }] }))).to.deep.equal([]);
  });

  it("resolves a nested resource's #/… pointer inside that resource, as the check does", () => {
    const inputSchema = (ref: string) => ({
      type: 'object',
      properties: {
        p: {
          $id: 'http://schemas.test/p',
          description: 'P.',
          type: 'object',
          properties: { q: { $ref: ref, description: 'Q.' } },
          $defs: { Inner: { type: 'string' } },
        },
      },
      $defs: { Outer: { type: 'string' } },
    });
    // Refused before as pointing to nothing (it was looked up from the root); it loads and checks.
    expect(errors(plugin({ tools: [{ ...goodTool(), inputSchema: inputSchema('#/$defs/Inner') }] }))).to.deep.equal([]);
    const [v] = errors(plugin({ tools: [{ ...goodTool(), inputSchema: inputSchema('#/$defs/Outer') }] }));
    expect(v?.pointer).to.equal('/tools/0/inputSchema/properties/p/properties/q/$ref');
    expect(compileLinear(inputSchema('#/$defs/Inner')).Check({ p: { q: 1 } })).to.equal(false);
    expect(compileLinear(inputSchema('#/$defs/Inner')).Check({ p: { q: 's' } })).to.equal(true);
  });

  it('refuses a limit of the wrong type, which would limit nothing', () => {
    const inputSchema = {
      type: 'object',
      properties: {
        q: { type: 'string', description: 'Q.', minLength: '3', maxLength: 1.5 },
        n: { type: 'number', description: 'N.', maximum: '10', exclusiveMinimum: true, minimum: 0 },
      },
    };
    expect(pointers(plugin({ tools: [{ ...goodTool(), inputSchema }] }))).to.deep.equal([
      '/tools/0/inputSchema/properties/q/minLength',
      '/tools/0/inputSchema/properties/q/maxLength',
      '/tools/0/inputSchema/properties/n/maximum',
    ]);
  });

  it('checks timeoutMs and annotations', () => {
    expect(pointers(plugin({ tools: [{ ...goodTool(), timeoutMs: -5 }] }))).to.deep.equal(['/tools/0/timeoutMs']);
    // Past 2^31 − 1 ms a Node timer fires at once: a "week-long" timeout would time every call out.
    expect(pointers(plugin({ tools: [{ ...goodTool(), timeoutMs: 2 ** 31 }] }))).to.deep.equal(['/tools/0/timeoutMs']);
    expect(pointers(plugin({ tools: [{ ...goodTool(), timeoutMs: 2 ** 31 - 1 }] }))).to.deep.equal([]);
    expect(pointers(plugin({ tools: [{ ...goodTool(), annotations: { readOnly: 'yes' } }] }))).to.deep.equal([
      '/tools/0/annotations/readOnly',
    ]);
  });

  it('checks the options schema', () => {
    expect(pointers(plugin({ options: { type: 'object', properties: { k: { type: 'nope' } } } }))).to.deep.equal([
      '/options/properties/k/type',
    ]);
  });

  it('reports every violation at once, each with the file, the tool and a pointer', () => {
    const v = errors({
      name: 'Bad',
      version: 'x',
      tools: [
        {
          name: 'a b',
          description: '',
          inputSchema: { type: 'object', properties: { c: { type: 'string' } }, required: ['d'] },
          execute: 1,
        },
        { name: 'fine', description: 'Fine.', inputSchema: { type: 'array' }, execute() {} },
      ],
    });
    expect(v.map((x) => x.pointer)).to.deep.equal([
      '/name',
      '/version',
      '/tools/0/name',
      '/tools/0/description',
      '/tools/0/inputSchema/properties/c/description',
      '/tools/0/inputSchema/required/0',
      '/tools/0/execute',
      '/tools/1/inputSchema/type',
    ]);
    expect(v.every((x) => x.file === FILE)).to.equal(true);
    expect(v[7]!.tool).to.equal('fine');
  });

  it('only warns about style for lenient (MCP) tools, but still fails a schema that cannot compile', () => {
    const tools = [
      { name: 'srv_a', description: '', inputSchema: { type: 'object', properties: { x: { type: 'string' } } } },
      {
        name: 'srv_b',
        description: 'B.',
        inputSchema: { type: 'object', properties: { y: { type: 'string', pattern: '[' } } },
      },
    ];
    const all = check({ name: 'srv', version: '1.0.0', tools }, { lenient: true });
    expect(all.filter((v) => v.severity === 'warning').map((v) => v.pointer)).to.include.members([
      '/tools/0/description',
      '/tools/0/inputSchema/properties/x/description',
    ]);
    expect(all.filter((v) => v.severity === 'error').map((v) => v.pointer)).to.deep.equal([
      '/tools/1/inputSchema/properties/y/pattern',
    ]);
  });

  describe('property names that reach a prototype (__proto__, constructor, prototype)', () => {
    // JSON.parse makes `__proto__` an own key, as it arrives from a worker, a process or an MCP server.
    const schema = (json: string) => JSON.parse(json) as Record<string, unknown>;
    const described = (name: string) => `{"type":"string","description":"${name}."}`;

    it('refuses each as a property name, at any depth, with a pointer to it', () => {
      for (const key of ['__proto__', 'constructor', 'prototype']) {
        const inputSchema = schema(
          `{"type":"object","properties":{"outer":{"type":"object","description":"Outer.","properties":{"${key}":${described('Inner')}}}}}`,
        );
        const v = errors(plugin({ tools: [{ ...goodTool(), inputSchema }] }));
        expect(
          v.map((x) => x.pointer),
          key,
        ).to.deep.equal([`/tools/0/inputSchema/properties/outer/properties/${key}`]);
        expect(v[0]!.message).to.contain(`"${key}" is not allowed`);
      }
    });

    it('refuses them anywhere else in a schema too: $defs, patternProperties, inside a default', () => {
      const inputSchema = schema(
        `{"type":"object","$defs":{"constructor":{"type":"string"}},"patternProperties":{"prototype":{"type":"string"}},"properties":{"o":{"type":"object","description":"O.","default":{"a":{"__proto__":{"polluted":true}}}}}}`,
      );
      expect(pointers(plugin({ tools: [{ ...goodTool(), inputSchema }] }))).to.deep.equal([
        '/tools/0/inputSchema/$defs/constructor',
        '/tools/0/inputSchema/patternProperties/prototype',
        '/tools/0/inputSchema/properties/o/default/a/__proto__',
      ]);
    });

    it('refuses them in the options schema', () => {
      const options = schema(
        `{"type":"object","properties":{"__proto__":{"type":"object","properties":{"polluted":{"type":"boolean","default":true}}}}}`,
      );
      expect(pointers(plugin({ options }))).to.deep.equal(['/options/properties/__proto__']);
    });

    it('is an error, not a style warning, for the tools of an MCP server (lenient)', () => {
      const inputSchema = schema(
        `{"type":"object","properties":{"__proto__":{"type":"object","properties":{"command":{"type":"string","default":"echo pwned"}}}}}`,
      );
      const v = check(
        { name: 'srv', version: '1.0.0', tools: [{ name: 'srv_a', description: 'A.', inputSchema }] },
        { lenient: true },
      );
      expect(v.filter((x) => x.severity === 'error').map((x) => x.pointer)).to.deep.equal([
        '/tools/0/inputSchema/properties/__proto__',
      ]);
    });
  });

  describe('what the compiler would throw on, refused at load with a clear message', () => {
    /** `{ a: <schema nested depth levels> }`: each level an array whose items are the next. */
    const nested = (depth: number) => {
      let inner: Record<string, unknown> = { type: 'string', description: 'Leaf.' };
      for (let i = 1; i < depth; i++) inner = { type: 'array', description: 'Level.', items: inner };
      return { type: 'object', properties: { a: inner }, additionalProperties: false };
    };
    const withSchema = (inputSchema: unknown) => plugin({ tools: [{ ...goodTool(), inputSchema }] });

    it('refuses a schema nested past the limit at the pointer where it goes too deep; one within it compiles', () => {
      const v = errors(withSchema(nested(400))); // typebox's compiler runs out of stack on this one
      expect(v).to.have.length(1);
      expect(v[0]!.pointer).to.equal(`/tools/0/inputSchema/properties/a${'/items'.repeat(126)}`);
      expect(v[0]!.message).to.contain('nests deeper than 128 levels');
      const within = nested(120);
      expect(errors(withSchema(within))).to.deep.equal([]);
      expect(compileLinear(within).Check({ a: [] })).to.equal(true);
    });

    it('refuses a $ref or $dynamicRef elsewhere whose fragment does not decode', () => {
      const inputSchema = {
        type: 'object',
        properties: {
          a: { $ref: 'other.json#%zz', description: 'A.' },
          b: { $dynamicRef: '#/%E0', description: 'B.' },
        },
        additionalProperties: false,
      };
      expect(() => compileLinear(inputSchema)).to.throw(/URI malformed/);
      const v = errors(withSchema(inputSchema));
      expect(v.map((x) => x.pointer)).to.deep.equal([
        '/tools/0/inputSchema/properties/a/$ref',
        '/tools/0/inputSchema/properties/b/$dynamicRef',
      ]);
      expect(v[0]!.message).to.equal(
        '$ref "other.json#%zz" has a fragment that does not decode: a % must be followed by two hex digits',
      );
    });

    it('compiles each schema at load: what only the compiler finds fails the load, not every call', () => {
      const bigEnum = {
        type: 'object',
        properties: {
          lang: { type: 'string', description: 'L.', enum: Array.from({ length: 2000 }, (_, i) => `v${i}`) },
        },
        additionalProperties: false,
      };
      const badBase = {
        type: 'object',
        properties: { p: { description: 'P.', $id: 'http://x/', $ref: '//' } },
        additionalProperties: false,
      };
      const refChain = {
        type: 'object',
        properties: { a: { description: 'A.', $ref: '#/$defs/d0' } },
        $defs: {
          ...Object.fromEntries(
            Array.from({ length: 1000 }, (_, i) => [`d${i}`, { type: 'array', items: { $ref: `#/$defs/d${i + 1}` } }]),
          ),
          d1000: { type: 'string' },
        },
        additionalProperties: false,
      };
      const compileFails = /^schema does not compile: /;
      for (const [what, inputSchema, refused] of [
        ['an enum of 2000 values', bigEnum, compileFails],
        ['a $ref the compiler cannot resolve against its $id', badBase, compileFails],
        // Refused before the compile, by the bound on $refs (below), which it would overflow.
        ['a chain of 1000 $refs', refChain, /^the schema has 1001 \$refs in /],
      ] as const) {
        const v = errors(withSchema(inputSchema));
        expect(v, what).to.have.length(1);
        expect(v[0]!.pointer, what).to.equal('/tools/0/inputSchema');
        expect(v[0]!.message, what).to.match(refused);
        // The same for an MCP server's tools (lenient): a style rule, not this, is what leniency relaxes.
        expect(errors(withSchema(inputSchema), { lenient: true }).map((x) => x.message)[0], what).to.match(refused);
      }
    });

    it('refuses a schema whose $refs the host would resolve by walking a large schema again and again', () => {
      // Each $ref is resolved by walking the whole schema: compiling, and telling what is wrong with
      // an input, cost their product (this shape stalled the host 5.7 s on one invalid input).
      const refsIn = (refs: number, filler: number) => ({
        type: 'object',
        properties: {
          a: {
            type: 'array',
            description: 'A.',
            items: { allOf: Array.from({ length: refs }, () => ({ $ref: '#/$defs/n' })) },
          },
        },
        $defs: { n: { type: 'number' } },
        examples: Array.from({ length: filler }, () => []),
        additionalProperties: false,
      });
      // $recursiveRef and $dynamicRef are resolved the same way, and count the same.
      for (const keyword of ['$recursiveRef', '$dynamicRef']) {
        const schema = refsIn(0, 2_000) as Record<string, unknown> & { properties: { a: { items: unknown } } };
        schema.properties.a.items = { allOf: Array.from({ length: 100 }, () => ({ [keyword]: '#' })) };
        expect(errors(withSchema(schema)).map((x) => x.message)[0], keyword).to.match(/^the schema has 100 \$refs/);
      }
      const v = errors(withSchema(refsIn(50, 20_000)));
      expect(v).to.have.length(1);
      expect(v[0]!.pointer).to.equal('/tools/0/inputSchema');
      expect(v[0]!.message).to.match(/^the schema has 50 \$refs in 200\d\d objects, arrays and array entries: /);
      expect(errors(withSchema(refsIn(40, 2_000)))).to.deep.equal([]); // well within: a big real schema
      const huge = { ...refsIn(0, 60_000) };
      expect(errors(withSchema(huge)).map((x) => x.message)).to.deep.equal([
        'the schema holds over 50000 objects, arrays and array entries: the host compiles and checks it on its own thread, and one this big stalls every other call',
      ]);
    });

    it('vets the regexes of a map of schemas written as an array, which the compiler walks too', () => {
      const inputSchema = {
        type: 'object',
        properties: {},
        dependencies: [{ type: 'string', pattern: 'a]{' }],
        additionalProperties: false,
      };
      expect(pointers(withSchema(inputSchema))).to.deep.equal(['/tools/0/inputSchema/dependencies/0/pattern']);
    });

    it('refuses what would stall the exact check itself: a recursion that doubles per level, 65 patterns, a huge enum', () => {
      const n = {
        anyOf: [
          { type: 'array', items: { $ref: '#/$defs/n' } },
          { type: 'array', items: { $ref: '#/$defs/n' } },
          { type: 'string' },
        ],
      };
      const doubling = errors(
        withSchema({ type: 'object', properties: { a: { $ref: '#/$defs/n', description: 'A.' } }, $defs: { n } }),
      );
      expect(doubling.map((v) => v.pointer)).to.deep.equal(['/tools/0/inputSchema/$defs/n/anyOf/1/items']);
      expect(doubling[0]!.message).to.match(/^the schema recurses through more than one path per level of the value/);
      // References that fan out without recursing: 2^30 checks of one string, seconds per call.
      const $defs: Record<string, unknown> = { d30: { type: 'string' } };
      for (let i = 0; i < 30; i++)
        $defs[`d${i}`] = { allOf: [{ $ref: `#/$defs/d${i + 1}` }, { $ref: `#/$defs/d${i + 1}` }] };
      const fan = errors(
        withSchema({ type: 'object', properties: { a: { $ref: '#/$defs/d0', description: 'A.' } }, $defs }),
      );
      expect(fan.map((v) => v.pointer)).to.deep.equal(['/tools/0/inputSchema/$defs/d16']);
      expect(fan[0]!.message).to.match(
        /^the schema applies one schema to the same value over 50000 times through \$refs/,
      );
      // A reference back to the schema applied to the same value: every call overflowed the stack.
      const loop = errors(
        withSchema({
          type: 'object',
          properties: { a: { $ref: '#/$defs/x', description: 'A.' } },
          $defs: { x: { allOf: [{ $ref: '#/$defs/x' }] } },
        }),
      );
      expect(loop.map((v) => v.pointer)).to.deep.equal(['/tools/0/inputSchema/$defs/x/allOf/0']);
      expect(loop[0]!.message).to.match(/^the schema refers back to itself for the same value/);
      // A tree recurses once per value: it loads.
      const tree = {
        type: 'object',
        properties: { left: { $ref: '#', description: 'L.' }, right: { $ref: '#', description: 'R.' } },
      };
      expect(errors(withSchema(tree))).to.deep.equal([]);

      const patterns = (count: number) => ({
        type: 'object',
        properties: {},
        patternProperties: Object.fromEntries(Array.from({ length: count }, (_, i) => [`^k${i}$`, true])),
      });
      expect(errors(withSchema(patterns(64)))).to.deep.equal([]);
      const many = errors(withSchema(patterns(65)));
      expect(many.map((v) => v.pointer)).to.deep.equal(['/tools/0/inputSchema/patternProperties']);
      expect(many[0]!.message).to.match(/^patternProperties has 65 patterns, over the 64 the host allows: /);

      const huge = {
        type: 'object',
        properties: { e: { description: 'E.', enum: Array.from({ length: 50_001 }, String) } },
      };
      expect(errors(withSchema(huge)).map((v) => v.message)).to.deep.equal([
        'the schema holds over 50000 objects, arrays and array entries: the host compiles and checks it on its own thread, and one this big stalls every other call',
      ]);
    });
  });

  it('warns about unknown keys (likely typos) without failing', () => {
    const v = check(plugin({ tool: [] }));
    expect(v.filter((x) => x.severity === 'error')).to.deep.equal([]);
    expect(v.find((x) => x.pointer === '/tool')?.severity).to.equal('warning');
  });
});

describe('rousseau-host check', function () {
  this.timeout(60_000);
  let tmp: ReturnType<typeof tempDir>;
  before(() => {
    tmp = tempDir('rh-check-');
    tmp.write('package.json', '{ "type": "module" }');
    tmp.write('no-default.ts', "export const plugin = { name: 'x', version: '1.0.0', tools: [] };\n");
    tmp.write('throws.ts', "const ready = false;\nif (!ready) throw new Error('no API key');\nexport default {};\n");
    tmp.write(
      'open.ts',
      `import Type from 'typebox';
export default { name: 'open', version: '1.0.0', tools: [{ name: 'grab', description: 'Grabs.', inputSchema: Type.Object({ what: Type.Any({ description: 'What.' }) }), execute: async () => 'ok' }] };
`,
    );
  });
  after(() => tmp.cleanup());

  it('prints a failure once: no log line repeating it on stderr', async () => {
    const { code, stdout, stderr } = await runCli(['check', './no-default.ts'], { cwd: tmp.dir });
    expect(code).to.equal(1);
    expect(stdout.match(/no default export/g)).to.have.length(1);
    expect(stdout).to.not.match(/\/name|\/version/); // not three messages about `undefined`
    expect(stderr).to.equal('');
  });

  it("names the plugin's file and line when it throws at import", async () => {
    const { code, stdout } = await runCli(['check', './throws.ts'], { cwd: tmp.dir });
    expect(code).to.equal(1);
    expect(stdout).to.include(`RH_ERR_PLUGIN_IMPORT: Cannot import plugin '${join(tmp.dir, 'throws.ts')}': no API key`);
    expect(stdout).to.include(`(thrown at ${join(tmp.dir, 'throws.ts')}:2:`);
  });

  it('passes an open schema with warnings, and fails it with --strict', async () => {
    const lax = await runCli(['check', './open.ts', '--json'], { cwd: tmp.dir });
    expect(lax.code, lax.stderr).to.equal(0);
    const report = JSON.parse(lax.stdout) as { ok: boolean; warnings: { pointer: string }[]; violations: unknown[] };
    expect(report.ok).to.equal(true);
    expect(report.violations).to.deep.equal([]);
    expect(report.warnings.map((w) => w.pointer)).to.have.members([
      '/tools/0/inputSchema',
      '/tools/0/inputSchema/properties/what',
    ]);

    const strict = await runCli(['check', './open.ts', '--strict'], { cwd: tmp.dir });
    expect(strict.code).to.equal(1);
    expect(strict.stdout).to.match(
      /^FAIL {2}open 1\.0\.0: 1 tool \(grab\)\n {2}error tool "grab" at \/tools\/0\/inputSchema: /,
    );
    expect(strict.stdout.match(/^ {2}error /gm)).to.have.length(2);
  });
});

describe('contract check: x-workspace-path marks', () => {
  const withInput = (inputSchema: unknown, outputSchema?: unknown) =>
    plugin({ tools: [{ ...goodTool(), inputSchema, ...(outputSchema ? { outputSchema } : {}) }] });
  const marked = (over: Record<string, unknown> = {}) =>
    Type.String({ 'x-workspace-path': true, description: 'A path.', ...over });

  it('passes a mark on a top-level string property', () => {
    expect(errors(withInput(Type.Object({ path: marked() })))).to.deep.equal([]);
    expect(errors(withInput(Type.Object({ path: Type.Optional(marked()) })))).to.deep.equal([]);
  });

  it('refuses a mark the host would not act on, naming where it is', () => {
    // Each was ignored: the policy read the path as written, and the mark went out to the model
    // (a strict provider refuses the keyword).
    const cases: [unknown, string, unknown?][] = [
      [
        Type.Object({ opts: Type.Object({ file: marked() }, { description: 'Options.' }) }),
        '/inputSchema/properties/opts/properties/file/x-workspace-path',
      ],
      [
        Type.Object({ files: Type.Array(marked(), { description: 'Files.' }) }),
        '/inputSchema/properties/files/items/x-workspace-path',
      ],
      [
        Type.Object({ path: Type.Union([marked(), Type.Null()], { description: 'A path.' }) }),
        '/inputSchema/properties/path/anyOf/0/x-workspace-path',
      ],
      [Type.Object({ path: marked({ 'x-workspace-path': 'yes' }) }), '/inputSchema/properties/path/x-workspace-path'],
      [
        Type.Object({ n: Type.Integer({ 'x-workspace-path': true, description: 'N.' }) }),
        '/inputSchema/properties/n/x-workspace-path',
      ],
      [
        Type.Object({ path: Type.String({ description: 'A path.' }) }),
        '/outputSchema/properties/p/x-workspace-path',
        Type.Object({ p: marked() }),
      ],
    ];
    for (const [input, pointer, output] of cases) {
      const found = errors(withInput(input, output));
      expect(
        found.map((v) => v.pointer),
        pointer,
      ).to.deep.equal(['/tools/0' + pointer]);
      expect(found[0]!.message).to.match(/x-workspace-path marks a top-level string property of inputSchema/);
    }
  });

  it('does not read a mark inside a value a schema holds', () => {
    const schema = Type.Object({ o: Type.Object({}, { description: 'O.', default: { 'x-workspace-path': true } }) });
    expect(errors(withInput(schema))).to.deep.equal([]);
  });
});
