import { createHmac } from 'node:crypto';
import { isIPv6 } from 'node:net';

/**
 * The client is its address: the whole IPv4 address, or the /64 prefix of an IPv6 one.
 * (request.ip already honours TRUST_PROXY hops through Fastify's trustProxy.)
 */
export function clientAddress(ip: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  if (mapped?.[1]) return mapped[1];
  if (!isIPv6(ip)) return ip;
  return `${expandIPv6(ip).slice(0, 4).join(':')}::/64`;
}

function expandIPv6(ip: string): string[] {
  const [head = '', tail = ''] = ip.split('%')[0]!.split('::') as [string?, string?];
  const h = head ? head.split(':') : [];
  const t = tail ? tail.split(':') : [];
  const groups = ip.includes('::') ? [...h, ...Array<string>(8 - h.length - t.length).fill('0'), ...t] : h;
  return groups.map((g) => g.toLowerCase().replace(/^0+(?=.)/, ''));
}

/** Keyed hash of the client address: counters and blocks need identity, not the address. */
export function clientHash(secret: Buffer, ip: string): string {
  return createHmac('sha256', secret).update(clientAddress(ip)).digest('hex').slice(0, 40);
}
