import { expect } from 'chai';
import type { CallPlaces } from '../../core/mcp/caller-limits.ts';
import { authInfoOf, callerOf, placesOf, sessionTag, withPlaces } from '../../core/mcp/request-identity.ts';
import type { Caller } from '../../core/types.ts';

describe('mcp/request-identity: who a request is, through the SDK', () => {
  const caller: Caller = { name: 'ci', scopes: ['read'], via: 'token' };

  it('hands the caller through AuthInfo without a token, and reads back only a caller with a name', () => {
    const auth = authInfoOf(caller);
    expect(auth.token).to.equal('');
    expect(auth.clientId).to.equal('ci');
    expect(callerOf(auth)).to.equal(caller);
    expect(callerOf(undefined)).to.equal(undefined);
    expect(callerOf({ token: '', clientId: '', scopes: [], extra: { caller: { scopes: [] } } })).to.equal(undefined);
  });

  it("adds the call places to a request's AuthInfo and keeps its caller", () => {
    const places = { enter: () => undefined } as unknown as CallPlaces;
    const auth = withPlaces(authInfoOf(caller), places);
    expect(placesOf(auth)).to.equal(places);
    expect(callerOf(auth)).to.equal(caller);
    expect(placesOf(authInfoOf(caller))).to.equal(undefined);
  });

  it('tags a session by a digest of its id, never the id, the same each time', () => {
    const id = '5f0c3a9e-0d3c-4a57-9d7e-0c2b8a1e4f11';
    const tag = sessionTag(id);
    expect(tag).to.match(/^mcp-[0-9a-f]{32}$/);
    expect(tag).to.not.include(id.slice(0, 8));
    expect(sessionTag(id)).to.equal(tag);
    expect(sessionTag(`${id}x`)).to.not.equal(tag);
  });
});
