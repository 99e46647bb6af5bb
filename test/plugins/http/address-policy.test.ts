import { expect } from 'chai';
import type { LookupFunction } from 'node:net';
import { judgeAddress } from '../../../plugins/http/address-policy.ts';
import { guardLookup } from '../../../plugins/http/guarded-agent.ts';

describe('plugins/http address policy', () => {
  // Addresses in every spelling that reach a private, loopback or metadata host: each is refused
  // without any socket being opened.
  const blocked: [string, string][] = [
    ['127.0.0.1', 'loopback'],
    ['::1', 'loopback'],
    ['0.0.0.0', 'unspecified'],
    ['::', 'unspecified'],
    ['169.254.169.254', 'linkLocal'],
    ['::ffff:169.254.169.254', 'linkLocal'],
    ['::ffff:a9fe:a9fe', 'linkLocal'],
    ['fd00:ec2::254', 'uniqueLocal'],
    ['fe80::1', 'linkLocal'],
    ['fc00::1', 'uniqueLocal'],
    ['64:ff9b::a9fe:a9fe', 'rfc6052'],
    ['64:ff9b::7f00:1', 'rfc6052'],
    ['2002:a9fe:a9fe::1', '6to4'],
    ['100.64.0.1', 'carrierGradeNat'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['192.168.1.1', 'private'],
    ['224.0.0.1', 'multicast'],
    ['ff02::1', 'multicast'],
    ['255.255.255.255', 'broadcast'],
    ['192.0.0.170', 'reserved'],
    ['198.18.0.1', 'reserved'],
  ];
  for (const [address, range] of blocked) {
    it(`refuses ${address} (${range})`, () => {
      const verdict = judgeAddress(address);
      expect(verdict.allowed).to.equal(false);
      expect(verdict.range).to.equal(range);
    });
  }

  it('allows public unicast addresses, IPv4 and IPv6', () => {
    expect(judgeAddress('93.184.216.34').allowed).to.equal(true);
    expect(judgeAddress('2606:4700:4700::1111').allowed).to.equal(true);
  });

  // IPv4 carried in IPv6, however written: refused, even when the IPv4 is public (each is a way
  // through a translator or a tunnel), except the mapped form, which the kernel connects as IPv4.
  const carried: [spelling: string, range: string, embeddedIPv4: string | undefined][] = [
    ['::127.0.0.1', 'ipv4Compatible', '127.0.0.1'],
    ['::7f00:1', 'ipv4Compatible', '127.0.0.1'],
    ['0:0:0:0:0:0:127.0.0.1', 'ipv4Compatible', '127.0.0.1'],
    ['::169.254.169.254', 'ipv4Compatible', '169.254.169.254'],
    ['::93.184.216.34', 'ipv4Compatible', '93.184.216.34'],
    ['::ffff:0:127.0.0.1', 'rfc6145', '127.0.0.1'],
    ['::ffff:0:5db8:d822', 'rfc6145', '93.184.216.34'],
    ['64:ff9b::127.0.0.1', 'rfc6052', '127.0.0.1'],
    ['64:ff9b::5db8:d822', 'rfc6052', '93.184.216.34'],
    ['64:ff9b:1::a9fe:a9fe', 'rfc6052', undefined],
    ['2002:7f00:1::1', '6to4', '127.0.0.1'],
    ['2002:5db8:d822::1', '6to4', '93.184.216.34'],
    ['2001:0:4136:e378:8000:63bf:80ff:fffe', 'teredo', '127.0.0.1'],
    ['::1:7f00:1', 'reserved', undefined],
    ['1::7f00:1', 'reserved', undefined],
    ['4000::1', 'reserved', undefined],
    ['100::7f00:1', 'discard', undefined],
  ];
  for (const [spelling, range, embeddedIPv4] of carried) {
    it(`refuses ${spelling} (${range}${embeddedIPv4 ? `, carrying ${embeddedIPv4}` : ''}), as written and as a URL host`, () => {
      for (const address of [spelling, new URL(`https://[${spelling}]/`).hostname]) {
        const verdict = judgeAddress(address, ['127.0.0.1']);
        expect(verdict.allowed, address).to.equal(false);
        expect(verdict.range, address).to.equal(range);
        expect(verdict.embeddedIPv4, address).to.equal(embeddedIPv4);
      }
    });
  }

  it('judges IPv4-mapped IPv6 as its IPv4, in every spelling', () => {
    for (const spelling of [
      '::ffff:127.0.0.1',
      '::ffff:7f00:1',
      '0:0:0:0:0:ffff:127.0.0.1',
      '0::FFFF:7F00:0001',
      '[::ffff:127.0.0.1]',
    ]) {
      expect(judgeAddress(spelling), spelling).to.include({ allowed: false, address: '127.0.0.1', range: 'loopback' });
    }
    expect(judgeAddress('::ffff:93.184.216.34')).to.include({ allowed: true, address: '93.184.216.34' });
  });

  it('judges the metadata address however the URL spells it (decimal, octal, hex, short, mapped)', () => {
    for (const spelling of [
      '2852039166',
      '0251.0376.0251.0376',
      '0xA9FEA9FE',
      '0xa9.0xfe.0xa9.0xfe',
      '169.254.43518',
      '[::ffff:169.254.169.254]',
      '[0:0:0:0:0:ffff:a9fe:a9fe]',
    ]) {
      const host = new URL(`https://${spelling}/`).hostname;
      const verdict = judgeAddress(host);
      expect(verdict.allowed, spelling).to.equal(false);
      expect(verdict.address, spelling).to.equal('169.254.169.254');
    }
  });

  it('lets through only the exact addresses a test allows', () => {
    expect(judgeAddress('127.0.0.1', ['127.0.0.1']).allowed).to.equal(true);
    expect(judgeAddress('::ffff:127.0.0.1', ['127.0.0.1']).allowed).to.equal(true);
    expect(judgeAddress('127.0.0.2', ['127.0.0.1']).allowed).to.equal(false);
  });

  describe('guardLookup', () => {
    const answering = (answers: { address: string; family: number }[]): LookupFunction =>
      ((_host: string, options: { all?: boolean }, cb: (...a: unknown[]) => void) => {
        if (options.all) cb(null, answers);
        else cb(null, answers[0]!.address, answers[0]!.family);
      }) as unknown as LookupFunction;
    const resolve = (lookup: LookupFunction, all: boolean) =>
      new Promise<unknown>((done, fail) =>
        lookup('metadata.test', { all } as never, (error: Error | null, address: unknown) =>
          error ? fail(error) : done(address),
        ),
      );

    it('refuses a name that resolves to a metadata or private address', async () => {
      for (const address of ['169.254.169.254', '10.0.0.5', 'fd00:ec2::254']) {
        const guarded = guardLookup(answering([{ address, family: address.includes(':') ? 6 : 4 }]), []);
        for (const all of [false, true]) {
          const error = await resolve(guarded, all).then(
            () => undefined,
            (e: Error) => e,
          );
          expect(error, `${address} all=${all}`).to.be.instanceOf(Error);
          expect((error as Error & { code: string }).code).to.equal('blocked_address');
        }
      }
    });

    it('refuses a mixed answer of public and private addresses as a whole', async () => {
      const guarded = guardLookup(
        answering([
          { address: '93.184.216.34', family: 4 },
          { address: '10.0.0.1', family: 4 },
        ]),
        [],
      );
      const error = await resolve(guarded, true).then(
        () => undefined,
        (e: Error) => e,
      );
      expect((error as Error & { code: string }).code).to.equal('blocked_address');
    });

    it('passes an all-public answer through unchanged', async () => {
      const answers = [
        { address: '93.184.216.34', family: 4 },
        { address: '2606:4700:4700::1111', family: 6 },
      ];
      expect(await resolve(guardLookup(answering(answers), []), true)).to.deep.equal(answers);
      expect(await resolve(guardLookup(answering(answers), []), false)).to.equal('93.184.216.34');
    });
  });
});
