/**
 * Which IP addresses http_get may connect to: public unicast only. The ranges come from ipaddr.js
 * (a maintained list) rather than from hand-written CIDRs. The rule is an allow-list ("unicast"),
 * not a deny-list of named ranges: NAT64 (64:ff9b::/96, 64:ff9b:1::/48), 6to4, Teredo and any range
 * named later are refused without being listed here. IPv6 must also lie in 2000::/3, the only block
 * IANA hands out as global unicast: ipaddr.js calls anything it has no name for "unicast", which
 * took in the IPv4-compatible form (::127.0.0.1 is ::7f00:1) and every other reserved block.
 * IPv4-mapped IPv6 (::ffff:a.b.c.d) is judged as its IPv4, since the kernel connects to that.
 */
import ipaddr from 'ipaddr.js';

export interface AddressVerdict {
  allowed: boolean;
  /** The address in canonical form (IPv4-mapped IPv6 unwrapped). */
  address: string;
  /** ipaddr.js's range name: unicast, private, loopback, linkLocal, uniqueLocal, carrierGradeNat, rfc6052… or ipv4Compatible, reserved. */
  range: string;
  /** The IPv4 address an IPv6 one carries (IPv4-compatible, rfc6145, NAT64 /96, 6to4, Teredo), for messages. */
  embeddedIPv4?: string;
}

const GLOBAL_UNICAST = ipv6Cidr('2000::/3');
/** ::a.b.c.d, deprecated (RFC 4291); ipaddr.js has no name for it. */
const IPV4_COMPATIBLE = ipv6Cidr('::/96');

const low32 = (p: number[]) => p[6]! * 0x10000 + p[7]!;
/** IPv6 blocks that carry an IPv4 address, and where: only to say which one, as all are refused. */
const CARRIERS: [string, [ipaddr.IPv6, number], (parts: number[]) => number][] = [
  ['ipv4Compatible', IPV4_COMPATIBLE, low32],
  ['rfc6145', ipv6Cidr('::ffff:0:0:0/96'), low32],
  ['rfc6052', ipv6Cidr('64:ff9b::/96'), low32],
  ['6to4', ipv6Cidr('2002::/16'), (p) => p[1]! * 0x10000 + p[2]!],
  // Teredo keeps the client's address with every bit flipped.
  ['teredo', ipv6Cidr('2001::/32'), (p) => ~low32(p) >>> 0],
];

/**
 * Judges one address, as connected or as resolved (never a hostname). `allowForTests` lists exact
 * addresses a test server listens on; a real configuration leaves it empty.
 */
export function judgeAddress(address: string, allowForTests: readonly string[] = []): AddressVerdict {
  const ip = parse(address);
  if (!ip) return { allowed: false, address, range: 'invalid' };
  const canonical = ip.toNormalizedString();
  const testAllowed = allowForTests.some(
    (a) => ipaddr.isValid(a) && ipaddr.process(a).toNormalizedString() === canonical,
  );
  if (ip.kind() === 'ipv4') {
    const range = ip.range();
    return { allowed: range === 'unicast' || testAllowed, address: ip.toString(), range };
  }
  const v6 = ip as ipaddr.IPv6;
  let range: string = v6.range();
  if (range === 'unicast' && !v6.match(GLOBAL_UNICAST))
    range = v6.match(IPV4_COMPATIBLE) ? 'ipv4Compatible' : 'reserved';
  const carrier = CARRIERS.find(([name, cidr]) => name === range && v6.match(cidr));
  return {
    allowed: range === 'unicast' || testAllowed,
    address: v6.toString(),
    range,
    ...(carrier ? { embeddedIPv4: ipaddr.fromByteArray(toBytes(carrier[2](v6.parts))).toString() } : {}),
  };
}

/**
 * The address, IPv4-mapped IPv6 unwrapped; undefined when it is not one. IPv6 text is first put in
 * WHATWG canonical form: ipaddr.js reads `::1.2.3.4` as mapped (`::ffff:1.2.3.4`), not as the
 * IPv4-compatible `::102:304` it is.
 */
function parse(address: string): ipaddr.IPv4 | ipaddr.IPv6 | undefined {
  let text = address.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  try {
    if (text.includes(':')) text = new URL(`https://[${text}]/`).hostname.slice(1, -1);
    const ip = ipaddr.parse(text);
    return ip.kind() === 'ipv6' && (ip as ipaddr.IPv6).isIPv4MappedAddress() ? (ip as ipaddr.IPv6).toIPv4Address() : ip;
  } catch {
    return undefined;
  }
}

/** `169.254.169.254 (linkLocal address)`, `::7f00:1 (ipv4Compatible address, carrying 127.0.0.1)`: for refusals. */
export function describeVerdict(verdict: AddressVerdict): string {
  return `${verdict.address} (${verdict.range} address${verdict.embeddedIPv4 ? `, carrying ${verdict.embeddedIPv4}` : ''})`;
}

function ipv6Cidr(cidr: string): [ipaddr.IPv6, number] {
  return ipaddr.IPv6.parseCIDR(cidr);
}

function toBytes(n: number): number[] {
  return [n >>> 24, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff];
}
