import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { NetworkHashes } from '../domain/caller.js';
import { clientHash, clientKeys, keyHash, networkKeyAt } from '../domain/network/client.js';
import type { Clock } from '../domain/time.js';
import type { Store } from '../store/db.js';
import { createTargetResolver } from '../webhooks/target.js';
import { AdminThrottle } from './admin-throttle.js';
import { AgentDirectories } from './agent-directories.js';
import { AgentVerifier } from './agent-signatures.js';
import { EmailChecker } from './email.js';
import { type Policies, policiesFor } from './limits.js';
import { ReadLimiter } from './reads.js';

/**
 * Per-application abuse-control state: the quota policies, the e-mail checker (with its DNS cache)
 * and the in-memory read limiter. Built once by the composition root (src/deps.ts) and carried in
 * the dependencies as `abuse`.
 */
export interface AbuseState {
  /** The policies of clients counted by address. */
  policies: Policies;
  /** The policies of verified agents, counted by key (VERIFIED_*; policiesOf picks one). */
  verified: Policies;
  email: EmailChecker;
  reads: ReadLimiter;
  /** Verifies Web Bot Auth request signatures (agent-signatures.ts), with its directory cache. */
  agents: AgentVerifier;
  directories: AgentDirectories;
  /** Throttle of failed operator-key attempts (admin API and console sign-in). */
  adminThrottle: AdminThrottle;
  /** The keyed hash of a client address (domain/network/client.ts), remembered for recent addresses. */
  clientHash(ip: string): string;
  /** The client hash of a verified agent: the keyed hash of `key:<key id>` (its address does not count). */
  agentHash(keyId: string): string;
  /** Keyed hashes of the networks enclosing the client, each worked out when first asked for and remembered. */
  networks(ip: string): NetworkHashes;
}

/** The policies that apply to a caller: a verified agent's own, or its address's. */
export function policiesOf(abuse: Pick<AbuseState, 'policies' | 'verified'>, caller: { agent?: unknown }): Policies {
  return caller.agent === undefined ? abuse.policies : abuse.verified;
}

/** How many addresses' hashes are remembered (the map is emptied when full). */
const HASH_CACHE_MAX = 10_000;

export function createAbuseState(config: Config, store: Store, clock: Clock, log: Logger, secret: Buffer): AbuseState {
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
  const agentHashes = new Map<string, string>();
  // Key directories are fetched under the webhook SSRF guard (WEBHOOK_ALLOW_PRIVATE lifts it).
  const resolveTarget = createTargetResolver({ dnsServers: config.dnsServers, dnsTimeoutMs: config.dnsTimeoutMs, allowPrivate: config.webhooks.allowPrivate });
  const directories = new AgentDirectories({ resolveTarget, clock, log });
  return {
    clientHash: (ip) => entry(ip).client,
    agentHash: (keyId) => {
      const name = `key:${keyId}`;
      let hashed = agentHashes.get(name);
      if (hashed === undefined) {
        if (agentHashes.size >= HASH_CACHE_MAX) agentHashes.clear();
        hashed = keyHash(secret, name);
        agentHashes.set(name, hashed);
      }
      return hashed;
    },
    agents: new AgentVerifier({ baseUrl: config.baseUrl, store, clock, log, directories }),
    directories,
    networks: (ip) => entry(ip).networks,
    policies: policiesFor(config.limits),
    verified: policiesFor(config.limits, 'verified'),
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
