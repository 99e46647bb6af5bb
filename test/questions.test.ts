// What ctx.elicit and ctx.sample may ask and what may come back: MCP's restricted form schema (every
// field kind it defines, nothing else) and its answers, checked with a message naming what is wrong.
import { expect } from 'chai';
import type { ElicitSchema } from '../core/contract.ts';
import { readElicitRequest, readElicitResult, readSampleRequest, readSampleResult } from '../core/questions.ts';

const EVERY_KIND: ElicitSchema = {
  type: 'object',
  properties: {
    email: { type: 'string', format: 'email', title: 'Email', description: 'Where to write' },
    site: { type: 'string', format: 'uri' },
    born: { type: 'string', format: 'date' },
    at: { type: 'string', format: 'date-time' },
    nick: { type: 'string', minLength: 2, maxLength: 4, default: 'ada' },
    age: { type: 'integer', minimum: 0, maximum: 150 },
    ratio: { type: 'number', default: 0.5 },
    ok: { type: 'boolean', default: false },
    plain: { type: 'string', enum: ['a', 'b'], default: 'a' },
    legacy: { type: 'string', enum: ['x', 'y'], enumNames: ['Ex', 'Why'] },
    titled: { type: 'string', oneOf: [{ const: 'r', title: 'Red' }] },
    many: { type: 'array', items: { type: 'string', enum: ['p', 'q'] }, minItems: 1, default: ['p'] },
    manyTitled: { type: 'array', items: { anyOf: [{ const: 'm', title: 'Milk' }] }, maxItems: 1 },
  },
  required: ['email'],
};

describe('ctx.elicit: the form', () => {
  it("accepts every field kind of MCP's schema, with titles, descriptions, formats, ranges and defaults", () => {
    expect(readElicitRequest({ message: 'Tell me', requestedSchema: EVERY_KIND })).to.deep.equal({
      message: 'Tell me',
      requestedSchema: EVERY_KIND,
    });
  });

  it('refuses what MCP does not allow, saying which field and why', () => {
    const form = (properties: object, extra: object = {}) => ({
      message: 'Q',
      requestedSchema: { type: 'object', properties, ...extra },
    });
    const cases: [unknown, RegExp][] = [
      [{ message: '', requestedSchema: EVERY_KIND }, /message must be a non-empty string/],
      [{ message: 'Q', requestedSchema: { type: 'array' } }, /requestedSchema must be \{ type: "object"/],
      [form({ a: { type: 'object', properties: {} } }), /field "a" must be a string, number.*forms do not nest/],
      [form({ a: { type: 'string', pattern: '^x' } }), /field "a" may not have "pattern"/],
      [form({ a: { type: 'string', format: 'ipv4' } }), /field "a" format must be one of email, uri, date, date-time/],
      [form({ a: { type: 'integer', default: 1.5 } }), /field "a" has a default that is not an integer/],
      [form({ a: { type: 'string', enum: ['x'], default: 'y' } }), /field "a" has a default that is not one of x/],
      [form({ a: { type: 'string', enum: [] } }), /field "a" must offer at least one choice/],
      [form({ a: { type: 'array', items: { type: 'number' } } }), /field "a" must be a string, number/],
      [form({ a: { type: 'string' } }, { required: ['b'] }), /required names "b", which is not one of its fields/],
      [form({ a: { type: 'string' } }, { additionalProperties: false }), /may not have "additionalProperties"/],
    ];
    for (const [request, why] of cases) expect(() => readElicitRequest(request)).to.throw(why);
  });
});

describe('ctx.elicit: the answer', () => {
  const valid = {
    email: 'ada@example.org',
    site: 'https://example.org/x',
    born: '1815-12-10',
    at: '2026-01-02T03:04:05Z',
    nick: 'ada',
    age: 36,
    ratio: 0.25,
    ok: true,
    plain: 'b',
    legacy: 'y',
    titled: 'r',
    many: ['p', 'q'],
    manyTitled: ['m'],
  };

  it('passes a fitting accepted answer, and decline and cancel without content', () => {
    expect(readElicitResult({ action: 'accept', content: valid }, EVERY_KIND)).to.deep.equal({
      action: 'accept',
      content: valid,
    });
    expect(readElicitResult({ action: 'decline', content: { x: 1 } }, EVERY_KIND)).to.deep.equal({ action: 'decline' });
    expect(readElicitResult({ action: 'cancel' }, EVERY_KIND)).to.deep.equal({ action: 'cancel' });
  });

  it('refuses values that do not fit, naming the field', () => {
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ email: 'not-mail' }, /"email" that is not a valid email/],
      [{ site: 'no scheme' }, /"site" that is not a valid uri/],
      [{ born: '2026-02-30' }, /"born" that is not a valid date/],
      [{ at: '2026-01-02 03:04' }, /"at" that is not a valid date-time/],
      [{ nick: 'a' }, /"nick" that is shorter than 2 characters/],
      [{ age: -1 }, /"age" that is below the minimum 0/],
      [{ ok: 'yes' }, /"ok" that is not true or false/],
      [{ many: ['p', 'p'] }, /"many" that names a choice twice/],
      [{ many: [] }, /"many" that has fewer than 1 choices/],
      [{ manyTitled: ['m', 'x'] }, /"manyTitled" that is not a list of choices among m/],
    ];
    for (const [change, why] of cases) {
      expect(() => readElicitResult({ action: 'accept', content: { ...valid, ...change } }, EVERY_KIND)).to.throw(why);
    }
    expect(() => readElicitResult({ action: 'accept', content: {} }, EVERY_KIND)).to.throw(
      'the accepted answer to ctx.elicit has no value for required field "email"',
    );
    // The host's own questions (the approval) are named as what they are.
    expect(() => readElicitResult({ action: 'accept', content: {} }, EVERY_KIND, 'the approval question')).to.throw(
      'the accepted answer to the approval question has no value for required field "email"',
    );
    expect(() => readElicitResult({ action: 'maybe' }, EVERY_KIND)).to.throw(/action "maybe"; one of accept/);
  });
});

describe('ctx.sample: the request and the answer', () => {
  it('caps maxTokens, and refuses a request or an answer of the wrong shape', () => {
    const messages = [{ role: 'user', content: { type: 'text', text: 'hi' } }];
    expect(readSampleRequest({ messages, maxTokens: 10 ** 9 }).maxTokens).to.equal(4096);
    expect(() => readSampleRequest({ messages: [], maxTokens: 5 })).to.throw(/messages must be a non-empty array/);
    expect(() => readSampleRequest({ messages, maxTokens: 0 })).to.throw(/maxTokens must be a whole number/);
    expect(() =>
      readSampleRequest({ messages: [{ role: 'system', content: { type: 'text', text: 'x' } }], maxTokens: 5 }),
    ).to.throw(/messages\[0\] must be \{ role: "user" \| "assistant"/);
    expect(() =>
      readSampleResult({ role: 'assistant', model: 'm', content: { type: 'audio', data: '', mimeType: 'audio/wav' } }),
    ).to.throw(/has type "audio"; text or image/);
    expect(
      readSampleResult({
        role: 'assistant',
        model: 'm',
        content: { type: 'image', data: 'AA==', mimeType: 'image/png' },
      }),
    ).to.deep.equal({ role: 'assistant', model: 'm', content: { type: 'image', data: 'AA==', mimeType: 'image/png' } });
  });
});
