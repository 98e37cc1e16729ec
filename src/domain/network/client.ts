import { createHmac } from 'node:crypto';
import { isIPv4, isIPv6 } from 'node:net';
import { embeddedIPv4, ipv4ToNumber, ipv6Groups } from './addresses.js';

/**
 * Who a client is. One function, `clientKey`, turns any spelling of a client's address into its
 * key, which limits, blocks and auto-block all count by (request.ip already honours TRUST_PROXY
 * hops, but takes the X-Forwarded-For entry as written):
 *
 * - a port and brackets are removed (`198.51.100.7:5000`, `[2001:db8::1]:443`), and an IPv6 zone;
 * - an IPv4-mapped IPv6 address in any spelling (`::ffff:c633:6452`, `0:0:0:0:0:ffff:1.2.3.4`) is
 *   the IPv4 address;
 * - IPv4 is the whole address; IPv6 is its /64 prefix, written `g0:g1:g2:g3::/64` (lower-case hex,
 *   no leading zeros), since one subscriber usually holds a whole /64;
 * - anything that is not an address (`unknown`, an empty or garbled entry) is the one key
 *   `unknown`, so a proxy's placeholder cannot mint fresh identities.
 *
 * Blocks may name networks (`198.51.100.0/24`, `2001:db8::/32`): `networkKey` writes them in the
 * same canonical form, and `clientKeys` lists the key of every network a client is in that a
 * block may name, so a block matches by equality of keyed hashes: no address is ever stored.
 */

export const UNKNOWN_CLIENT = 'unknown';

/** Shortest prefixes a block may name: broader ones would block whole providers or regions. */
export const MIN_PREFIX = { 4: 8, 6: 16 } as const;

type Address = { family: 4; value: number } | { family: 6; groups: number[] };

/** The address a spelling names, without brackets, port or zone; IPv4-mapped IPv6 as IPv4. */
function parseAddress(spelling: string): Address | null {
  let text = spelling.trim();
  const bracketed = /^\[([^\]]+)\](?::\d{1,5})?$/.exec(text);
  if (bracketed?.[1] !== undefined) text = bracketed[1];
  else {
    const withPort = /^(\d{1,3}(?:\.\d{1,3}){3}):\d{1,5}$/.exec(text);
    if (withPort?.[1] !== undefined) text = withPort[1];
  }
  if (isIPv4(text)) return { family: 4, value: ipv4ToNumber(text) };
  if (!isIPv6(text)) return null;
  const groups = ipv6Groups(text);
  if (!groups) return null;
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) {
    return { family: 4, value: ipv4ToNumber(embeddedIPv4(groups[6] ?? 0, groups[7] ?? 0)) };
  }
  return { family: 6, groups };
}

function v4Text(value: number): string {
  return [value >>> 24, (value >>> 16) & 0xff, (value >>> 8) & 0xff, value & 0xff].join('.');
}

/** The canonical key of an address's network of `prefix` bits (IPv4 /32 and IPv6 /64: the client key). */
function keyOf(address: Address, prefix: number): string {
  if (address.family === 4) {
    if (prefix >= 32) return v4Text(address.value);
    const mask = prefix === 0 ? 0 : (0xffffffff << (32 - prefix)) >>> 0;
    return `${v4Text((address.value & mask) >>> 0)}/${prefix}`;
  }
  const bits = Math.min(prefix, 64);
  const head = address.groups.slice(0, 4).map((g, i) => {
    const keep = Math.max(0, Math.min(16, bits - i * 16));
    return (keep === 0 ? 0 : g & ((0xffff << (16 - keep)) & 0xffff)).toString(16);
  });
  return `${head.join(':')}::/${bits}`;
}

/** The canonical client key of any spelling of an address (see above). */
export function clientKey(spelling: string): string {
  const address = parseAddress(spelling);
  return address === null ? UNKNOWN_CLIENT : keyOf(address, address.family === 4 ? 32 : 64);
}

/** The client's key, then the key of every enclosing network a block may name (longest first). */
export function clientKeys(spelling: string): string[] {
  const address = parseAddress(spelling);
  if (address === null) return [UNKNOWN_CLIENT];
  const keys: string[] = [];
  for (let prefix = fullPrefix(address); prefix >= MIN_PREFIX[address.family]; prefix--) keys.push(keyOf(address, prefix));
  return keys;
}

/** The prefix of a client key: IPv4 /32, IPv6 /64. */
function fullPrefix(address: Address): number {
  return address.family === 4 ? 32 : 64;
}

/**
 * The key of the client's enclosing network of `prefix` bits, when a block may name one (shorter
 * than the client's own key, not shorter than MIN_PREFIX, the client's family); otherwise null.
 * A block names one prefix: a submission hashes only the prefixes active blocks name, not every
 * network it is in (24 of them for IPv4, 48 for IPv6).
 */
export function networkKeyAt(spelling: string, prefix: number): string | null {
  const address = parseAddress(spelling);
  if (address === null || prefix >= fullPrefix(address) || prefix < MIN_PREFIX[address.family]) return null;
  return keyOf(address, prefix);
}

/** The prefix a block's canonical key (networkKey) names: null for one client (IPv4 /32, IPv6 /64). */
export function blockPrefix(key: string): number | null {
  const slash = key.lastIndexOf('/');
  if (slash < 0) return null;
  const bits = Number(key.slice(slash + 1));
  return key.includes(':') && bits >= 64 ? null : bits;
}

/**
 * The canonical key of a block's value: an address, or a network `address/prefix` of either
 * family (host bits are dropped; an IPv6 prefix longer than /64 is its /64), or null when the
 * value is neither or the prefix is shorter than MIN_PREFIX.
 */
export function networkKey(value: string): string | null {
  const m = /^(.+?)(?:\/(\d{1,3}))?$/.exec(value.trim());
  if (!m?.[1]) return null;
  const address = parseAddress(m[1]);
  if (address === null) return null;
  // A prefix written on an IPv4-mapped address counts the mapped 96 bits.
  const mapped = address.family === 4 && !isIPv4(m[1].replace(/^\[|\]$/g, ''));
  let prefix = m[2] === undefined ? 128 : Number(m[2]);
  if (mapped) prefix -= 96;
  const max = address.family === 4 ? 32 : 128;
  if (m[2] !== undefined && (prefix > max || prefix < MIN_PREFIX[address.family])) return null;
  return keyOf(address, Math.min(prefix, max));
}

/** Keyed hash of a client key: counters and blocks need identity, not the address. */
export function keyHash(secret: Buffer, key: string): string {
  return createHmac('sha256', secret).update(key).digest('hex').slice(0, 40);
}

/** Keyed hash of the client's canonical key. */
export function clientHash(secret: Buffer, ip: string): string {
  return keyHash(secret, clientKey(ip));
}
