import { Resolver } from 'node:dns/promises';
import type { Config } from '../config.js';
import { domainPart, isHostname, isPlaceholderDomain } from '../domain/network/email.js';
import type { Clock } from '../domain/time.js';

/**
 * Is an address a real mailbox? Syntax, then placeholder domains, then DNS through DNS_SERVERS:
 * MX present → ok; no MX but A/AAAA → ok (RFC 5321 implicit MX); null MX (RFC 7505), no mail host
 * at all, or NXDOMAIN → undeliverable; the resolver cannot answer (timeout, refused, SERVFAIL) →
 * unverified: accepted and flagged, so nothing is lost to a DNS outage. Answers are cached.
 */

export type Deliverability = 'ok' | 'unverified' | 'invalid' | 'placeholder' | 'null_mx' | 'no_mail_host' | 'no_such_domain';

/** The 422 detail for each refusal, after the field name. The address itself is never echoed. */
export const REFUSAL_TEXT: Record<Exclude<Deliverability, 'ok' | 'unverified'>, string> = {
  invalid: 'must be a valid e-mail address',
  placeholder: 'uses a placeholder domain that cannot receive mail; give a real mailbox',
  null_mx: 'has a domain that declares it accepts no mail (null MX); give a real mailbox',
  no_mail_host: 'has a domain with no mail server (no MX, A or AAAA record); give a real mailbox',
  no_such_domain: 'has a domain that does not exist; give a real mailbox',
};

/** Resolver outcomes worth caching; `unverified` is cached briefly so an outage is not hammered. */
type DnsVerdict = 'ok' | 'unverified' | 'null_mx' | 'no_mail_host' | 'no_such_domain';

const OK_TTL_MS = 60 * 60_000;
const REFUSED_TTL_MS = 10 * 60_000;
const UNVERIFIED_TTL_MS = 60_000;
const CACHE_MAX = 10_000;

function errorCode(error: unknown): string {
  return typeof error === 'object' && error !== null && 'code' in error ? String((error as { code: unknown }).code) : '';
}

export class EmailChecker {
  private readonly resolver: Resolver;
  private readonly cache = new Map<string, { verdict: DnsVerdict; expires: number }>();
  private readonly inFlight = new Map<string, Promise<DnsVerdict>>();

  constructor(
    config: Pick<Config, 'dnsServers' | 'dnsTimeoutMs'>,
    private readonly clock: Clock,
  ) {
    this.resolver = new Resolver({ timeout: config.dnsTimeoutMs, tries: 1 });
    if (config.dnsServers.length > 0) this.resolver.setServers(config.dnsServers);
  }

  /**
   * `beforeLookup` runs only when a DNS query is about to be sent (not cached, not already under
   * way for another request) and may throw to refuse it: the caller's look-up budget.
   */
  async check(address: string, beforeLookup?: () => Promise<void>): Promise<Deliverability> {
    const domain = domainPart(address);
    if (domain === null) return 'invalid';
    if (isPlaceholderDomain(domain)) return 'placeholder';
    if (!isHostname(domain)) return 'invalid';
    return this.lookup(domain, beforeLookup);
  }

  /** True when the address's domain is known to accept mail without asking DNS (a cached `ok`). */
  knownDeliverable(address: string): boolean {
    const domain = domainPart(address);
    return domain !== null && this.cached(domain) === 'ok';
  }

  /** The domain's cached verdict while it has not expired. */
  private cached(domain: string): DnsVerdict | undefined {
    const entry = this.cache.get(domain);
    return entry && entry.expires > this.clock.now().getTime() ? entry.verdict : undefined;
  }

  /**
   * The cached verdict, else the query under way for the domain (joined: it costs the joiner
   * nothing), else a new query, started under `beforeLookup`. The in-flight entry is set before
   * `beforeLookup` is awaited, so concurrent requests for one domain wait for one gate and one
   * query; if that gate refuses its own request, each waiting request tries its own.
   */
  private async lookup(domain: string, beforeLookup: (() => Promise<void>) | undefined): Promise<DnsVerdict> {
    for (;;) {
      const cached = this.cached(domain);
      if (cached !== undefined) return cached;
      const shared = this.inFlight.get(domain);
      if (shared) {
        const verdict = await shared.then(
          (v) => v,
          () => undefined,
        );
        if (verdict !== undefined) return verdict;
        continue;
      }
      const own = (async () => {
        await beforeLookup?.();
        const verdict = await this.resolve(domain);
        if (this.cache.size >= CACHE_MAX) this.cache.clear();
        const ttl = verdict === 'ok' ? OK_TTL_MS : verdict === 'unverified' ? UNVERIFIED_TTL_MS : REFUSED_TTL_MS;
        this.cache.set(domain, { verdict, expires: this.clock.now().getTime() + ttl });
        return verdict;
      })().finally(() => this.inFlight.delete(domain));
      this.inFlight.set(domain, own);
      return own;
    }
  }

  private async resolve(domain: string): Promise<DnsVerdict> {
    try {
      const records = await this.resolver.resolveMx(domain);
      // RFC 7505: a single MX whose exchange is the root ("." — reported as "") means "no mail".
      const real = records.filter((r) => r.exchange !== '' && r.exchange !== '.');
      if (real.length > 0) return 'ok';
      return records.length > 0 ? 'null_mx' : this.implicitMx(domain);
    } catch (error) {
      const code = errorCode(error);
      if (code === 'ENOTFOUND') return 'no_such_domain';
      if (code === 'ENODATA') return this.implicitMx(domain);
      return 'unverified';
    }
  }

  /** No MX: RFC 5321 falls back to the domain's own address records. */
  private async implicitMx(domain: string): Promise<DnsVerdict> {
    const results = await Promise.allSettled([this.resolver.resolve4(domain), this.resolver.resolve6(domain)]);
    if (results.some((r) => r.status === 'fulfilled' && r.value.length > 0)) return 'ok';
    const codes = results.map((r) => (r.status === 'rejected' ? errorCode(r.reason) : 'ENODATA'));
    if (codes.includes('ENOTFOUND')) return 'no_such_domain';
    if (codes.every((c) => c === 'ENODATA')) return 'no_mail_host';
    return 'unverified';
  }
}
