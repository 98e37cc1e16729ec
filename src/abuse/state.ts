import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { NetworkHashes } from '../domain/caller.js';
import { clientHash, clientKeys, keyHash, networkKeyAt } from '../domain/network/client.js';
import type { Clock } from '../domain/time.js';
import type { Store } from '../store/db.js';
import { AdminThrottle } from './admin-throttle.js';
import { EmailChecker } from './email.js';
import { type Policies, policiesFor } from './limits.js';
import { ReadLimiter } from './reads.js';

/**
 * Per-application abuse-control state: the quota policies, the e-mail checker (with its DNS cache)
 * and the in-memory read limiter. Built once by the composition root (src/deps.ts) and carried in
 * the dependencies as `abuse`.
 */
export interface AbuseState {
  policies: Policies;
  email: EmailChecker;
  reads: ReadLimiter;
  /** Throttle of failed operator-key attempts (admin API and console sign-in). */
  adminThrottle: AdminThrottle;
  /** The keyed hash of a client address (domain/network/client.ts), remembered for recent addresses. */
  clientHash(ip: string): string;
  /** Keyed hashes of the networks enclosing the client, each worked out when first asked for and remembered. */
  networks(ip: string): NetworkHashes;
}

/** How many addresses' hashes are remembered (the map is emptied when full). */
const HASH_CACHE_MAX = 10_000;

export function createAbuseState(config: Config, store: Pick<Store, 'db'>, clock: Clock, log: Logger, secret: Buffer): AbuseState {
  // An HMAC is a few microseconds: a client's own, and its networks' only for the prefixes blocks name.
  const hashes = new Map<string, { client: string; networks: NetworkHashes }>();
  const entry = (ip: string) => {
    let hashed = hashes.get(ip);
    if (hashed === undefined) {
      if (hashes.size >= HASH_CACHE_MAX) hashes.clear();
      hashed = { client: clientHash(secret, ip), networks: networkHashes(secret, ip) };
      hashes.set(ip, hashed);
    }
    return hashed;
  };
  return {
    clientHash: (ip) => entry(ip).client,
    networks: (ip) => entry(ip).networks,
    policies: policiesFor(config.limits),
    email: new EmailChecker(config, clock),
    reads: new ReadLimiter(store.db, clock, log, config.limits.readsPerMinute),
    adminThrottle: new AdminThrottle(config.adminThrottle),
  };
}

/** A client's network hashes, each computed on first use. */
function networkHashes(secret: Buffer, ip: string): NetworkHashes {
  const byPrefix = new Map<number, string | undefined>();
  let all: readonly string[] | undefined;
  return {
    at(prefix) {
      if (!byPrefix.has(prefix)) {
        const key = networkKeyAt(ip, prefix);
        byPrefix.set(prefix, key === null ? undefined : keyHash(secret, key));
      }
      return byPrefix.get(prefix);
    },
    all() {
      all ??= clientKeys(ip)
        .slice(1)
        .map((key) => keyHash(secret, key));
      return all;
    },
  };
}
