import { isIPv4, isIPv6 } from 'node:net';

/**
 * Is an IP address one a webhook may be sent to? Only globally routable unicast addresses are:
 * loopback, private, link-local, CGNAT, multicast, unspecified, documentation and other reserved
 * ranges are refused (IANA special-purpose registries). IPv6 addresses that embed an IPv4 address
 * (IPv4-mapped, IPv4-compatible, NAT64, 6to4) are judged by the IPv4 address they carry, so
 * `::ffff:127.0.0.1` is loopback. Pure: the SSRF guard at submission and at delivery both use it.
 */

/** [first octets as a 32-bit number, prefix length] of every IPv4 range that is not public. */
const IPV4_RESERVED: readonly [string, number][] = [
  ['0.0.0.0', 8], // "this network", including 0.0.0.0 itself
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // CGNAT
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, and the broadcast address
];

export function ipv4ToNumber(address: string): number {
  return address.split('.').reduce((n, part) => n * 256 + Number(part), 0);
}

const IPV4_RANGES = IPV4_RESERVED.map(([base, bits]) => ({ base: ipv4ToNumber(base), size: 2 ** (32 - bits) }));

function isPublicIPv4(address: string): boolean {
  const n = ipv4ToNumber(address);
  return !IPV4_RANGES.some((range) => n >= range.base && n < range.base + range.size);
}

/** The eight 16-bit groups of an IPv6 address (a trailing dotted IPv4 part is converted). */
export function ipv6Groups(address: string): number[] | null {
  let text = address.toLowerCase();
  const zone = text.indexOf('%');
  if (zone >= 0) text = text.slice(0, zone);
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted?.[1]) {
    if (!isIPv4(dotted[1])) return null;
    const n = ipv4ToNumber(dotted[1]);
    text = `${text.slice(0, dotted.index)}${(n >>> 16).toString(16)}:${(n & 0xffff).toString(16)}`;
  }
  const halves = text.split('::');
  if (halves.length > 2) return null;
  const parse = (part: string | undefined) => (part === undefined || part === '' ? [] : part.split(':').map((g) => Number.parseInt(g, 16)));
  const head = parse(halves[0]);
  const tail = parse(halves[1]);
  const missing = 8 - head.length - tail.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return null;
  const groups = [...head, ...new Array<number>(halves.length === 1 ? 0 : missing).fill(0), ...tail];
  return groups.length === 8 && groups.every((g) => Number.isInteger(g) && g >= 0 && g <= 0xffff) ? groups : null;
}

export function embeddedIPv4(high: number, low: number): string {
  return [high >> 8, high & 0xff, low >> 8, low & 0xff].join('.');
}

function isPublicIPv6(address: string): boolean {
  const g = ipv6Groups(address);
  if (!g) return false;
  const [g0 = 0, g1 = 0, g2 = 0, g3 = 0, g4 = 0, g5 = 0, g6 = 0, g7 = 0] = g;
  // ::/96 (unspecified, loopback, IPv4-compatible) and ::ffff:0:0/96 (IPv4-mapped): the IPv4 inside decides,
  // and ::, ::1 are never public whatever that says.
  if (g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0 && g4 === 0 && (g5 === 0 || g5 === 0xffff)) {
    if (g5 === 0 && g6 === 0) return false;
    return isPublicIPv4(embeddedIPv4(g6, g7));
  }
  // NAT64 (64:ff9b::/96) reaches the IPv4 address it embeds; 64:ff9b:1::/48 is local-use NAT64.
  if (g0 === 0x64 && g1 === 0xff9b) return g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0 && isPublicIPv4(embeddedIPv4(g6, g7));
  // 6to4 (2002::/16) carries an IPv4 address in its next 32 bits.
  if (g0 === 0x2002) return isPublicIPv4(embeddedIPv4(g1, g2));
  // Only global unicast (2000::/3) can be public: this excludes ULA fc00::/7, link-local fe80::/10,
  // site-local fec0::/10, multicast ff00::/8, discard 100::/64 and everything unassigned.
  if ((g0 & 0xe000) !== 0x2000) return false;
  // 2001::/23 (IETF protocol assignments, Teredo included), 2001:db8::/32 and 3fff::/20 (documentation).
  if (g0 === 0x2001 && g1 < 0x200) return false;
  if (g0 === 0x2001 && g1 === 0xdb8) return false;
  if (g0 === 0x3fff && g1 < 0x1000) return false;
  return true;
}

/** True only for a well-formed, globally routable unicast IPv4 or IPv6 address. */
export function isPublicAddress(address: string): boolean {
  if (isIPv4(address)) return isPublicIPv4(address);
  if (isIPv6(address)) return isPublicIPv6(address);
  return false;
}

/** Is a URL host (WHATWG-normalised: IPv4 forms already dotted-decimal, IPv6 in brackets) an IP literal? */
export function ipLiteral(hostname: string): string | null {
  const bare = hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
  return isIPv4(bare) || isIPv6(bare) ? bare : null;
}

/** `localhost`, `localhost.` and anything under it (RFC 6761): always loopback, never resolved. */
export function isLocalhostName(hostname: string): boolean {
  const name = hostname.toLowerCase().replace(/\.+$/, '');
  return name === 'localhost' || name.endsWith('.localhost');
}
