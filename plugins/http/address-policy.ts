/**
 * Which IP addresses http_get may connect to: public unicast only. The ranges come from ipaddr.js
 * (a maintained list) rather than from hand-written CIDRs. The rule is an allow-list ("unicast"),
 * not a deny-list of named ranges: NAT64 (64:ff9b::/96), 6to4, Teredo and any range named later
 * are refused without being listed here. IPv4-mapped IPv6 (::ffff:a.b.c.d) is judged as its IPv4.
 */
import ipaddr from 'ipaddr.js';

export interface AddressVerdict {
  allowed: boolean;
  /** The address in canonical form (IPv4-mapped IPv6 unwrapped). */
  address: string;
  /** ipaddr.js's range name: unicast, private, loopback, linkLocal, uniqueLocal, carrierGradeNat, rfc6052… */
  range: string;
}

/**
 * Judges one address, as connected or as resolved (never a hostname). `allowForTests` lists exact
 * addresses a test server listens on; a real configuration leaves it empty.
 */
export function judgeAddress(address: string, allowForTests: readonly string[] = []): AddressVerdict {
  let ip: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    ip = ipaddr.parse(address.replace(/^\[|\]$/g, '').replace(/%.*$/, ''));
  } catch {
    return { allowed: false, address, range: 'invalid' };
  }
  if (ip.kind() === 'ipv6' && (ip as ipaddr.IPv6).isIPv4MappedAddress()) ip = (ip as ipaddr.IPv6).toIPv4Address();
  const canonical = ip.toNormalizedString();
  const range = ip.range();
  const testAllowed = allowForTests.some((a) => ipaddr.isValid(a) && ipaddr.process(a).toNormalizedString() === canonical);
  return { allowed: range === 'unicast' || testAllowed, address: ip.toString(), range };
}
