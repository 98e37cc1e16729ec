import type { Logger } from 'pino';
import type { Config } from '../config.js';
import { clientHash, clientKeys, keyHash } from '../domain/client.js';
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
  /** The keyed hash of a client address (domain/client.ts), remembered for recent addresses. */
  clientHash(ip: string): string;
  /** Keyed hashes of the networks enclosing the client that a block may name, remembered with its own. */
  networkHashes(ip: string): readonly string[];
}

/** How many addresses' hashes are remembered (the map is emptied when full). */
const HASH_CACHE_MAX = 10_000;

export function createAbuseState(config: Config, store: Pick<Store, 'db'>, clock: Clock, log: Logger, secret: Buffer): AbuseState {
  // An HMAC is a few microseconds; a submission needs its client's and two or three networks'.
  const hashes = new Map<string, { client: string; networks?: string[] }>();
  const entry = (ip: string) => {
    let hashed = hashes.get(ip);
    if (hashed === undefined) {
      if (hashes.size >= HASH_CACHE_MAX) hashes.clear();
      hashed = { client: clientHash(secret, ip) };
      hashes.set(ip, hashed);
    }
    return hashed;
  };
  return {
    clientHash: (ip) => entry(ip).client,
    networkHashes: (ip) => {
      const hashed = entry(ip);
      hashed.networks ??= clientKeys(ip)
        .slice(1)
        .map((key) => keyHash(secret, key));
      return hashed.networks;
    },
    policies: policiesFor(config.limits),
    email: new EmailChecker(config, clock),
    reads: new ReadLimiter(store.db, clock, log, config.limits.readsPerMinute),
    adminThrottle: new AdminThrottle(config.adminThrottle),
  };
}
