import { Resolver } from 'node:dns/promises';
import { isIP } from 'node:net';
import type { Config } from '../config.js';
import { ipLiteral, isLocalhostName, isPublicAddress } from '../domain/network/addresses.js';

/**
 * The SSRF guard at delivery: the callback host is resolved (through DNS_SERVERS, as the MX checks
 * are), refused when any address it resolves to is not public, and the one checked address is
 * what the request then connects to (send.ts pins it), so a name cannot resolve to a public
 * address for the check and to a private one for the connection (DNS rebinding).
 */

export interface Target {
  url: URL;
  /** The checked address the connection goes to. */
  address: string;
  family: 4 | 6;
}

/** A refusal of the target itself (not a network failure): logged and retried like any failure. */
export class TargetRefused extends Error {
  override readonly name = 'TargetRefused';
}

export type TargetSettings = Pick<Config, 'dnsServers' | 'dnsTimeoutMs'> & {
  allowPrivate: boolean;
  /** What the URL is, in refusals: "callback" (webhooks, the default) or "push service". */
  label?: string;
};

export function createTargetResolver(settings: TargetSettings): (raw: string) => Promise<Target> {
  const resolver = new Resolver({ timeout: settings.dnsTimeoutMs, tries: 2 });
  const label = settings.label ?? 'callback';
  if (settings.dnsServers.length > 0) resolver.setServers(settings.dnsServers);

  async function addressesOf(hostname: string): Promise<string[]> {
    const results = await Promise.allSettled([resolver.resolve4(hostname), resolver.resolve6(hostname)]);
    const found = results.flatMap((r) => (r.status === 'fulfilled' ? r.value : []));
    if (found.length > 0) return found;
    const reason = results.find((r) => r.status === 'rejected')?.reason as { code?: string } | undefined;
    throw new Error(`the ${label} host could not be resolved (${reason?.code ?? 'no address'})`);
  }

  return async (raw) => {
    const url = new URL(raw);
    if (url.protocol !== 'https:' && !(settings.allowPrivate && url.protocol === 'http:')) {
      throw new TargetRefused(`the ${label} URL scheme ${url.protocol} is not allowed`);
    }
    const hostname = url.hostname;
    const literal = ipLiteral(hostname);
    let addresses: string[];
    if (literal !== null) addresses = [literal];
    else if (isLocalhostName(hostname)) addresses = settings.allowPrivate ? ['127.0.0.1'] : [];
    else addresses = await addressesOf(hostname.replace(/\.$/, ''));
    if (!settings.allowPrivate && (addresses.length === 0 || !addresses.every(isPublicAddress))) {
      // Every address, not just the first: a name with one public and one private address is refused.
      throw new TargetRefused(`refused: the ${label} host is, or resolves to, a loopback, private or reserved address`);
    }
    const address = addresses[0] ?? '127.0.0.1';
    return { url, address, family: isIP(address) === 6 ? 6 : 4 };
  };
}
