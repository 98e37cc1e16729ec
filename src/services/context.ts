import type { AbuseDeps } from '../abuse/context.js';
import type { CatalogEntry, Profile } from '../domain/profile.js';
import type { MailDeps } from '../mail/context.js';
import type { ChangeFeed } from '../store/change-feed.js';
import type { VapidKeys } from './push.js';
import type { Nudge } from '../webhooks/nudge.js';
import type { TaskWaits } from './task-waits.js';
import type { Validators } from './validation.js';

export type { Caller } from '../domain/caller.js';

/**
 * Everything the service layer needs, built once at start by the composition root (src/deps.ts)
 * and shared by REST, MCP and web. Types only: this module builds nothing.
 */
export interface ServiceDeps extends AbuseDeps, MailDeps {
  validators: Validators;
  /** The package version, for documents and the health record. */
  version: string;
  /** SHA-256 of the operator key (services/admin-key.ts). */
  adminKeyHash: Buffer;
  /** The deployment profile and services catalog (src/config-files.ts), loaded from config files. */
  profile: Profile;
  catalog: CatalogEntry[];
  /** Tells every instance what changed (store/change-feed.ts): long-polls, live views and caches listen. */
  changes: ChangeFeed;
  /** Held reads waiting for a task to change (REST long-poll, MCP waits), woken by `changes`. */
  waits: TaskWaits;
  /** The VAPID key pair for Web Push (services/push.ts): generated on first start, kept in the store. */
  vapid: VapidKeys;
  /** Wakes this instance's webhook worker when an event is queued (webhooks/nudge.ts). */
  webhookNudge: Nudge;
}
