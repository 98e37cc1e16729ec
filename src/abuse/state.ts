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
  /** Keyed hashes of the networks enclosing the client that a block may name (not cached: submissions only). */
  networkHashes(ip: string): string[];
}

/** How many addresses' hashes are remembered (the map is emptied when full). */
const HASH_CACHE_MAX = 10_000;

export function createAbuseState(config: Config, store: Pick<Store, 'db'>, clock: Clock, log: Logger, secret: Buffer): AbuseState {
  const hashes = new Map<string, string>();
  return {
    clientHash: (ip) => {
      let hash = hashes.get(ip);
      if (hash === undefined) {
        if (hashes.size >= HASH_CACHE_MAX) hashes.clear();
        hash = clientHash(secret, ip);
        hashes.set(ip, hash);
      }
      return hash;
    },
    networkHashes: (ip) =>
      clientKeys(ip)
        .slice(1)
        .map((key) => keyHash(secret, key)),
    policies: policiesFor(config.limits),
    email: new EmailChecker(config, clock),
    reads: new ReadLimiter(store.db, clock, log, config.limits.readsPerMinute),
    adminThrottle: new AdminThrottle(config.adminThrottle),
  };
}
