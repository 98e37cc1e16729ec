import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { Clock } from '../domain/time.js';
import type { Source } from '../domain/task.js';
import { loadProfileAndCatalog, type CatalogEntry, type Profile } from '../docs/profile.js';
import { loadAdminKeyHash } from '../http/admin-auth.js';
import { ensureActiveKey } from '../receipts/keys.js';
import { createChangeFeed, type ChangeFeed } from '../store/change-feed.js';
import type { Store } from '../store/db.js';
import { getOrCreateSetting } from '../store/settings.js';
import { loadVapidKeys, type VapidKeys } from './push.js';
import { createValidators, type Validators } from './validation.js';

/** Everything the service layer needs, built once at start and shared by REST, MCP and web. */
export interface ServiceDeps {
  config: Config;
  store: Store;
  clock: Clock;
  log: Logger;
  validators: Validators;
  /** Server secret for keyed hashes of client addresses and for signing cursors. */
  secret: Buffer;
  /** The package version, for documents and the health record. */
  version: string;
  /** SHA-256 of the operator key (http/admin-auth.ts). */
  adminKeyHash: Buffer;
  /** The deployment profile and services catalog (docs/profile.ts), loaded from config files. */
  profile: Profile;
  catalog: CatalogEntry[];
  /** Tells every instance what changed (store/change-feed.ts): long-polls, live views and caches listen. */
  changes: ChangeFeed;
  /** The VAPID key pair for Web Push (services/push.ts): generated on first start, kept in the store. */
  vapid: VapidKeys;
}

/** Who is calling, whichever door they came in by. */
export interface Caller {
  /** HMAC of the client address (IPv4 /32, IPv6 /64); the address itself is never stored. */
  clientHash: string;
  source: Source;
  idempotencyKey?: string | undefined;
}

export interface InitOptions {
  clock: Clock;
  log: Logger;
  version: string;
}

/** Loads or creates what must persist across restarts and be shared by every instance. */
export async function initDeps(config: Config, store: Store, options: InitOptions): Promise<ServiceDeps> {
  const secret = await getOrCreateSetting(store.db, 'server_secret', () => randomBytes(32).toString('base64'));
  const adminKeyHash = await loadAdminKeyHash(store.db, config.adminKey, options.log);
  // The receipt-signing key: created on first start (race-safe across instances), then reused.
  await ensureActiveKey(store.db, options.clock.now());
  const loaded = loadProfileAndCatalog(config);
  const catalog = loaded.catalog;
  // One response target for the queue's overdue flag, the published figures and every document.
  const profile = config.responseTargetHours === undefined ? loaded.profile : { ...loaded.profile, response_target_hours: config.responseTargetHours };
  return {
    config,
    store,
    clock: options.clock,
    log: options.log,
    validators: createValidators(config.limits),
    secret: Buffer.from(secret, 'base64'),
    version: options.version,
    adminKeyHash,
    profile,
    catalog,
    vapid: await loadVapidKeys(store.db),
    changes: createChangeFeed({ store, databaseUrl: config.databaseUrl, log: options.log }),
  };
}
