import { expect } from 'chai';
import { isLoopbackName, rebindingRefusal } from '../../core/mcp/rebinding.ts';

describe('mcp/rebinding: the Origin and Host a server answers', () => {
  it('knows the loopback names: localhost, 127/8, ::1 bracketed or not, and IPv4-mapped loopback', () => {
    for (const name of ['localhost', '127.0.0.1', '127.9.8.7', '::1', '[::1]', '::ffff:127.0.0.1'])
      expect(isLoopbackName(name), name).to.equal(true);
    for (const name of ['10.0.0.1', 'localhost.example', '0.0.0.0', '[::]', 'rebind.example'])
      expect(isLoopbackName(name), name).to.equal(false);
  });

  it('refuses an origin that is not loopback, wherever the server listens', () => {
    expect(rebindingRefusal({ origin: 'https://evil.example', host: '127.0.0.1:7331' }, true, undefined)).to.equal(
      'Origin https://evil.example is not allowed: only loopback origins may call this server',
    );
    expect(rebindingRefusal({ origin: 'null', host: 'tools.example.com' }, false, undefined)).to.match(/^Origin null /);
    expect(rebindingRefusal({ origin: 'http://localhost:3000', host: '127.0.0.1:7331' }, true, undefined)).to.equal(
      undefined,
    );
  });

  it('on loopback, answers loopback names and the public name only; elsewhere, any Host', () => {
    expect(rebindingRefusal({ host: 'rebind.example:7331' }, true, undefined))
      .to.include('Host rebind.example:7331 is not allowed')
      .and.include('loopback names only');
    expect(rebindingRefusal({}, true, undefined)).to.include('Host (none) is not allowed');
    expect(rebindingRefusal({ host: 'tools.example.com' }, true, 'tools.example.com')).to.equal(undefined);
    expect(rebindingRefusal({ host: 'other.example' }, true, 'tools.example.com')).to.include(
      'loopback names and tools.example.com only',
    );
    expect(rebindingRefusal({ host: 'rebind.example' }, false, undefined)).to.equal(undefined);
  });
});
