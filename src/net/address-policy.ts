import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/** Why an address is no place for a fetch made on a model's behalf. */
export type AddressRefusalReason =
  | 'invalid'
  | 'unspecified'
  | 'loopback'
  | 'private'
  | 'link-local'
  | 'carrier-grade-nat'
  | 'multicast'
  | 'broadcast'
  | 'benchmarking'
  | 'documentation'
  | 'reserved'
  | 'unique-local'
  | 'site-local';

export type AddressVerdict =
  | { readonly allowed: true; readonly address: string; readonly family: 4 | 6 }
  | {
      readonly allowed: false;
      readonly address: string;
      readonly reason: AddressRefusalReason;
      /** The IPv4 address an IPv6 form carries (mapped, NAT64, 6to4 …), when that is what was refused. */
      readonly embeddedIpv4?: string;
      /** A sentence a model or a person can act on: "127.0.0.1 is a loopback address". */
      readonly explanation: string;
    };

interface Range<T> {
  readonly network: [T, number];
  readonly reason: AddressRefusalReason;
  readonly label: string;
}

function ipv4Range(cidr: string, reason: AddressRefusalReason, label: string): Range<ipaddr.IPv4> {
  return { network: ipaddr.IPv4.parseCIDR(cidr), reason, label };
}

function ipv6Range(cidr: string, reason: AddressRefusalReason, label: string): Range<ipaddr.IPv6> {
  return { network: ipaddr.IPv6.parseCIDR(cidr), reason, label };
}

// Spelled out rather than taken from ipaddr's `range()` so each refusal names its range;
// ipaddr's verdict is still consulted afterwards as a fail-closed backstop.
const IPV4_RANGES: readonly Range<ipaddr.IPv4>[] = [
  ipv4Range('0.0.0.0/8', 'unspecified', 'an unspecified ("this network", 0.0.0.0/8) address'),
  ipv4Range('10.0.0.0/8', 'private', 'a private (10.0.0.0/8) address'),
  ipv4Range('100.64.0.0/10', 'carrier-grade-nat', 'a carrier-grade NAT (100.64.0.0/10) address'),
  ipv4Range('127.0.0.0/8', 'loopback', 'a loopback address'),
  ipv4Range('169.254.0.0/16', 'link-local', 'a link-local address (169.254.0.0/16, where cloud metadata services live)'),
  ipv4Range('172.16.0.0/12', 'private', 'a private (172.16.0.0/12) address'),
  ipv4Range('192.0.0.0/24', 'reserved', 'a reserved (IETF protocol assignments, 192.0.0.0/24) address'),
  ipv4Range('192.0.2.0/24', 'documentation', 'a documentation (TEST-NET-1) address'),
  ipv4Range('192.88.99.0/24', 'reserved', 'a reserved (6to4 relay anycast) address'),
  ipv4Range('192.168.0.0/16', 'private', 'a private (192.168.0.0/16) address'),
  ipv4Range('198.18.0.0/15', 'benchmarking', 'a benchmarking (198.18.0.0/15) address'),
  ipv4Range('198.51.100.0/24', 'documentation', 'a documentation (TEST-NET-2) address'),
  ipv4Range('203.0.113.0/24', 'documentation', 'a documentation (TEST-NET-3) address'),
  ipv4Range('224.0.0.0/4', 'multicast', 'a multicast address'),
  ipv4Range('255.255.255.255/32', 'broadcast', 'the broadcast address'),
  ipv4Range('240.0.0.0/4', 'reserved', 'a reserved (240.0.0.0/4) address'),
];

const IPV6_RANGES: readonly Range<ipaddr.IPv6>[] = [
  ipv6Range('::/128', 'unspecified', 'the unspecified address'),
  ipv6Range('::1/128', 'loopback', 'a loopback address'),
  ipv6Range('::/96', 'reserved', 'a deprecated IPv4-compatible IPv6 address'),
  ipv6Range('64:ff9b:1::/48', 'private', 'a local-use NAT64 (64:ff9b:1::/48) address'),
  ipv6Range('100::/64', 'reserved', 'a discard-only (100::/64) address'),
  ipv6Range('fe80::/10', 'link-local', 'a link-local address'),
  ipv6Range('fec0::/10', 'site-local', 'a deprecated site-local address'),
  ipv6Range('fc00::/7', 'unique-local', 'a unique-local (fc00::/7, private) address'),
  ipv6Range('ff00::/8', 'multicast', 'a multicast address'),
  ipv6Range('2001::/32', 'reserved', 'a Teredo tunnel address'),
  ipv6Range('2001:2::/48', 'benchmarking', 'a benchmarking (2001:2::/48) address'),
  ipv6Range('2001:db8::/32', 'documentation', 'a documentation (2001:db8::/32) address'),
  ipv6Range('3fff::/20', 'documentation', 'a documentation (3fff::/20) address'),
  ipv6Range('2001::/23', 'reserved', 'a reserved (IETF protocol assignments, 2001::/23) address'),
];

/** IPv6 forms whose traffic ends at the IPv4 address they carry; that address decides. */
const IPV4_CARRIERS: readonly { readonly network: [ipaddr.IPv6, number]; readonly form: string; readonly extract: (parts: readonly number[]) => readonly number[] }[] = [
  { network: ipaddr.IPv6.parseCIDR('::ffff:0:0/96'), form: 'an IPv4-mapped', extract: (parts) => parts.slice(6, 8) },
  { network: ipaddr.IPv6.parseCIDR('::ffff:0:0:0/96'), form: 'an IPv4-translated', extract: (parts) => parts.slice(6, 8) },
  { network: ipaddr.IPv6.parseCIDR('64:ff9b::/96'), form: 'a NAT64', extract: (parts) => parts.slice(6, 8) },
  { network: ipaddr.IPv6.parseCIDR('2002::/16'), form: 'a 6to4', extract: (parts) => parts.slice(1, 3) },
];

const GLOBAL_UNICAST = ipaddr.IPv6.parseCIDR('2000::/3');

/**
 * Decides whether an IP address is a public internet address a fetch may connect to.
 * Only canonical literals are accepted (what `dns.lookup` returns and what the WHATWG URL
 * parser leaves in a hostname); anything else is refused as `invalid` rather than guessed
 * at, because `0177.0.0.1` means 127.0.0.1 to some parsers and nothing to others.
 */
export function classifyAddress(address: string): AddressVerdict {
  const bare = address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address;
  const family = isIP(bare);
  if (family === 4) return classifyIpv4(address, ipaddr.IPv4.parse(bare));
  if (family === 6) return classifyIpv6(address, parseIpv6(bare));
  return { allowed: false, address, reason: 'invalid', explanation: `"${address}" is not an IP address` };
}

function classifyIpv4(address: string, ip: ipaddr.IPv4): AddressVerdict {
  const refusal = ipv4Refusal(ip);
  if (refusal === undefined) return { allowed: true, address, family: 4 };
  return refuse(address, refusal.reason, `${address} is ${refusal.label}`);
}

function ipv4Refusal(ip: ipaddr.IPv4): { readonly reason: AddressRefusalReason; readonly label: string } | undefined {
  for (const range of IPV4_RANGES) {
    if (ip.match(range.network)) return range;
  }
  const range = ip.range();
  if (range !== 'unicast') return { reason: 'reserved', label: `a special-purpose (${range}) address` };
  return undefined;
}

function classifyIpv6(address: string, ip: ipaddr.IPv6): AddressVerdict {
  for (const carrier of IPV4_CARRIERS) {
    if (!ip.match(carrier.network)) continue;
    const [high = 0, low = 0] = carrier.extract(ip.parts);
    const embedded = new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff]);
    const refusal = ipv4Refusal(embedded);
    if (refusal === undefined) return { allowed: true, address, family: 6 };
    return {
      allowed: false,
      address,
      reason: refusal.reason,
      embeddedIpv4: embedded.toString(),
      explanation: `${address} is ${carrier.form} IPv6 form of ${embedded.toString()}, which is ${refusal.label}`,
    };
  }
  for (const range of IPV6_RANGES) {
    if (ip.match(range.network)) return refuse(address, range.reason, `${address} is ${range.label}`);
  }
  if (!ip.match(GLOBAL_UNICAST)) {
    return refuse(address, 'reserved', `${address} is outside the global unicast range (2000::/3)`);
  }
  const range = ip.range();
  if (range !== 'unicast') return refuse(address, 'reserved', `${address} is a special-purpose (${range}) address`);
  return { allowed: true, address, family: 6 };
}

/**
 * ipaddr.js reads every dotted tail as IPv4-mapped (`::1.2.3.4` becomes `::ffff:1.2.3.4`), so
 * the literal is first rewritten in pure hex by the WHATWG URL serializer; a zone (`%eth0`)
 * does not change which range an address is in and is dropped.
 */
function parseIpv6(literal: string): ipaddr.IPv6 {
  const withoutZone = literal.split('%', 1)[0] ?? literal;
  const hex = new URL(`http://[${withoutZone}]/`).hostname.slice(1, -1);
  return ipaddr.IPv6.parse(hex);
}

function refuse(address: string, reason: AddressRefusalReason, explanation: string): AddressVerdict {
  return { allowed: false, address, reason, explanation };
}
