import { expect } from 'chai';
import Type from 'typebox';
import { checkPlugin } from '../core/check.ts';
import { describePlugin, describeTool } from '../core/plugin-report.ts';
import { SchemaCache, schemaKey, tooCostlyToCheck, validatorFor } from '../core/shared-validators.ts';

describe('core/shared-validators', () => {
  it('compiles a schema once per JSON text: equal schemas share a validator, others do not', () => {
    const a = validatorFor(Type.Object({ city: Type.String({ description: 'City.' }) }));
    const b = validatorFor(JSON.parse(JSON.stringify(Type.Object({ city: Type.String({ description: 'City.' }) }))));
    const c = validatorFor(Type.Object({ town: Type.String({ description: 'City.' }) }));
    expect(a).to.equal(b);
    expect(c).to.not.equal(a);
    expect(a.Check({ city: 'Oslo' })).to.equal(true);
    expect(a.Check({ city: 1 })).to.equal(false);
    expect(c.Check({ town: 'Oslo' })).to.equal(true);
  });

  it('keeps no schema whose text is over 256 Ki characters', () => {
    const big = Type.Object({ text: Type.String({ description: 'x'.repeat(300 * 1024) }) });
    expect(schemaKey(big)).to.equal(undefined);
    expect(validatorFor(big)).to.not.equal(validatorFor(big));
    expect(validatorFor(big).Check({ text: 'a' })).to.equal(true);
  });

  it('makes regexes linear before compiling, whether it was given the rewrite or not', () => {
    const schema = { type: 'object', properties: { id: { type: 'string', pattern: '^(a+)+$' } } };
    const validator = validatorFor(schema);
    expect(validator.Check({ id: 'aaa' })).to.equal(true);
    expect(validator.Check({ id: `${'a'.repeat(40)}!` })).to.equal(false);
  });
});

describe('the contract check, a schema repeated across plugins', () => {
  it('reports each tool that repeats a broken schema, under its own name and file', () => {
    const broken = { type: 'object', properties: { n: { type: 'integer', description: 'N.', minimum: 'one' } } };
    const run = (file: string, name: string) => {
      const exported = {
        name: 'p',
        version: '1.0.0',
        tools: [{ name, description: 'D.', inputSchema: broken, execute: () => 1 }],
      };
      return checkPlugin(file, describePlugin(exported), exported.tools.map(describeTool)).filter(
        (v) => v.pointer === '/tools/0/inputSchema/properties/n/minimum',
      );
    };
    const first = run('/a.ts', 'one');
    const second = run('/b.ts', 'two');
    expect(first).to.have.length(1);
    expect(second).to.deep.equal([{ ...first[0], file: '/b.ts', tool: 'two' }]);
  });

  it('words a property without a description by where the schema sits, for the same text', () => {
    const schema = { type: 'object', properties: { n: { type: 'string' } } };
    const exported = {
      name: 'p',
      version: '1.0.0',
      tools: [{ name: 't', description: 'D.', inputSchema: schema, outputSchema: schema, execute: () => 1 }],
    };
    const messages = checkPlugin('/p.ts', describePlugin(exported), exported.tools.map(describeTool))
      .filter((v) => v.pointer.endsWith('/properties/n/description'))
      .map((v) => `${v.pointer} ${v.severity}: ${v.message}`);
    expect(messages).to.deep.equal([
      '/tools/0/inputSchema/properties/n/description error: property "n" has no description: the model cannot know what to put there',
      '/tools/0/outputSchema/properties/n/description warning: property "n" has no description: the model cannot know what the value means',
    ]);
  });
});

describe('SchemaCache', () => {
  it('drops the oldest entries past 512, and past 4 Mi characters of keys', () => {
    const count = new SchemaCache<number>();
    for (let i = 0; i < 600; i++) count.set(`k${i}`, i);
    expect(count.get('k0')).to.equal(undefined);
    expect(count.get('k87')).to.equal(undefined);
    expect(count.get('k88')).to.equal(88);
    expect(count.get('k599')).to.equal(599);

    const size = new SchemaCache<number>();
    const key = (i: number) => `${i}`.padEnd(200 * 1024, 'x');
    for (let i = 0; i < 30; i++) size.set(key(i), i);
    // 20 keys of 200 Ki characters fit in 4 Mi: the 10 oldest were dropped.
    expect(size.get(key(9))).to.equal(undefined);
    expect(size.get(key(10))).to.equal(10);
    expect(size.get(key(29))).to.equal(29);
  });
});

describe('tooCostlyToCheck, uniqueItems over nested arrays', () => {
  // Each level of nested arrays hashes every value below it again: 400 levels over 20,000 numbers
  // took 3.5 s when each value was counted once (20,400 values, well within the bound).
  const validator = validatorFor({
    type: 'array',
    uniqueItems: true,
    items: { anyOf: [{ type: 'number' }, { $ref: '#' }] },
  });
  const nested = (levels: number, width: number) => {
    let value: unknown = Array.from({ length: width }, (_, i) => i);
    for (let level = 0; level < levels; level++) value = [value, level];
    return value;
  };

  it('counts a value once for each array it sits in', () => {
    expect(tooCostlyToCheck(validator, nested(400, 20_000))).to.match(
      /^it holds over [\d,]+ values in arrays \(each 100 characters of a string or key counting as one more\), each counted once for each array it sits in, which uniqueItems hashes at the cost of 1,000 schemas each time/,
    );
  });

  it('still checks a flat array of 40,000 distinct numbers, and nesting that stays within the bound', () => {
    expect(
      tooCostlyToCheck(
        validator,
        Array.from({ length: 40_000 }, (_, i) => i),
      ),
    ).to.equal(undefined);
    expect(tooCostlyToCheck(validator, nested(10, 4_000))).to.equal(undefined);
    expect(validator.Check(nested(10, 4_000))).to.equal(true);
  });
});
