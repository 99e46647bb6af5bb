// The stdio hot path reads plain messages with checks in plain code (core/mcp/shapes.ts) instead of
// the SDK's zod schemas: each check must accept only what the schema accepts, and read it the same.
import { expect } from 'chai';
import fc from 'fast-check';
import {
  CallToolRequestSchema,
  JSONRPCErrorResponseSchema,
  JSONRPCRequestSchema,
  JSONRPCResultResponseSchema,
  RELATED_TASK_META_KEY,
} from '@modelcontextprotocol/sdk/types.js';
import * as shapes from '../../core/mcp/shapes.ts';

const { isPlainRequest, plainCallParams } = shapes;

/** Values a JSON-RPC message's fields take, the awkward ones included. */
const field = fc.oneof(
  fc.constantFrom('2.0', '1.0', 'tools/call', 'echo', '', 1, 1.5, -0, 2 ** 60, null, true, [], {}),
  fc.string(),
  fc.integer(),
  fc.dictionary(fc.constantFrom('text', '__proto__', 'progressToken', RELATED_TASK_META_KEY), fc.jsonValue()),
);
/** Mostly `good`, sometimes any field: most messages come close to plain, and many are. */
const mostly = <T>(good: fc.Arbitrary<T>) =>
  fc.oneof({ arbitrary: good, weight: 4 }, { arbitrary: field as fc.Arbitrary<unknown>, weight: 1 });
/** Keys that are present now and then. */
const sometimes = <T>(arbitrary: fc.Arbitrary<T>) => fc.option(arbitrary, { nil: undefined, freq: 3 });
const meta = mostly(
  fc.record({
    progressToken: sometimes(mostly(fc.oneof(fc.integer(), fc.string()))),
    [RELATED_TASK_META_KEY]: sometimes(fc.constant({ taskId: 't' })),
    other: sometimes(field),
  }),
);
const params = mostly(
  fc.record({
    name: mostly(fc.string()),
    arguments: sometimes(mostly(fc.dictionary(fc.constantFrom('text', '__proto__', 'n'), fc.jsonValue()))),
    _meta: sometimes(meta),
    task: sometimes(fc.constant({ ttl: 1 })),
    extra: sometimes(field),
  }),
);
const message = fc.record({
  jsonrpc: mostly(fc.constant('2.0')),
  id: mostly(fc.oneof(fc.integer(), fc.string())),
  method: mostly(fc.string()),
  params: sometimes(params),
  result: sometimes(field),
  error: sometimes(field),
});
/** As a message arrives: parsed from its JSON text (an own `__proto__` key stays a key). */
const arriving = message.map((m) => JSON.parse(JSON.stringify(m)) as unknown);

describe('MCP plain-message checks (stdio hot path)', () => {
  it('names the related-task key as the SDK does (shapes.ts imports nothing of the SDK)', () => {
    expect(shapes.RELATED_TASK_META_KEY).to.equal(RELATED_TASK_META_KEY);
  });

  it('a plain request is a JSON-RPC request to the SDK, and no response', () => {
    fc.assert(
      fc.property(arriving, (m) => {
        if (!isPlainRequest(m)) return;
        expect(JSONRPCRequestSchema.safeParse(m).success, JSON.stringify(m)).to.equal(true);
        expect(JSONRPCResultResponseSchema.safeParse(m).success).to.equal(false);
        expect(JSONRPCErrorResponseSchema.safeParse(m).success).to.equal(false);
      }),
      { numRuns: 2000 },
    );
  });

  it('plain tools/call params are read as the SDK reads them', () => {
    fc.assert(
      fc.property(arriving, (m) => {
        const plain = plainCallParams(m);
        if (!plain) return;
        const parsed = CallToolRequestSchema.safeParse({ ...(m as object), method: 'tools/call' });
        expect(parsed.success, JSON.stringify(m)).to.equal(true);
        expect(plain).to.deep.equal(parsed.data!.params);
      }),
      { numRuns: 2000 },
    );
  });

  it('recognises the requests clients send', () => {
    const call = { name: 'echo', arguments: { text: 'hi' }, _meta: { progressToken: 7 } };
    expect(isPlainRequest({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: call })).to.equal(true);
    expect(isPlainRequest({ jsonrpc: '2.0', id: 'a', method: 'tools/list' })).to.equal(true);
    expect(plainCallParams({ method: 'tools/call', params: call })).to.deep.equal(call);
    expect(plainCallParams({ method: 'tools/call', params: { name: 'echo' } })).to.deep.equal({ name: 'echo' });
  });

  it('leaves to the SDK what it does not recognise', () => {
    for (const m of [
      { jsonrpc: '2.0', id: 1.5, method: 'ping' },
      { jsonrpc: '2.0', id: 1, method: 'ping', extra: true },
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { jsonrpc: '2.0', id: 1, result: {} },
      { jsonrpc: '2.0', id: 1, method: 'ping', params: [] },
      { jsonrpc: '2.0', id: 1, method: 'ping', params: { _meta: { [RELATED_TASK_META_KEY]: { taskId: 't' } } } },
    ])
      expect(isPlainRequest(m), JSON.stringify(m)).to.equal(false);
    for (const p of [
      { name: 'echo', task: { ttl: 1 } },
      { name: 'echo', arguments: [] },
      { name: 'echo', arguments: JSON.parse('{"__proto__": {"x": 1}}') },
      // zod drops an own `__proto__` key wherever it rebuilds an object: the meta, the params themselves
      { name: 'echo', _meta: JSON.parse('{"__proto__": {}}') },
      JSON.parse('{"name": "echo", "__proto__": {"name": "other"}}'),
      { name: 1 },
      { name: 'echo', _meta: { progressToken: 1.5 } },
    ])
      expect(plainCallParams({ params: p }), JSON.stringify(p)).to.equal(undefined);
  });
});
