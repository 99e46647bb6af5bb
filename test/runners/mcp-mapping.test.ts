// MCP hints ⇄ our annotations: a server's hints are read as the server sent them, nothing more.
import { expect } from 'chai';
import { fromMcpAnnotations, toMcpAnnotations } from '../../core/runners/mcp-mapping.ts';

describe('MCP annotation mapping', () => {
  it('maps hints both ways, dropping readOnlyHint from a server', () => {
    expect(
      fromMcpAnnotations({ readOnlyHint: true, destructiveHint: true, idempotentHint: false, title: 'T' }),
    ).to.deep.equal({ title: 'T', destructive: true, idempotent: false });
    expect(toMcpAnnotations({ readOnly: true, openWorld: false })).to.deep.equal({
      readOnlyHint: true,
      openWorldHint: false,
    });
    expect(fromMcpAnnotations(undefined)).to.equal(undefined);
  });

  it('takes no hint or title from Object.prototype', () => {
    const proto = Object.prototype as Record<string, unknown>;
    try {
      Object.assign(proto, { title: 'polluted', destructiveHint: false, openWorldHint: false, idempotentHint: true });
      expect(fromMcpAnnotations({})).to.equal(undefined);
      expect(fromMcpAnnotations({ destructiveHint: true })).to.deep.equal({ destructive: true });
    } finally {
      for (const key of ['title', 'destructiveHint', 'openWorldHint', 'idempotentHint']) delete proto[key];
    }
  });
});
