import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import { createAbuseState } from './abuse/state.js';
import type { Config } from './config.js';
import { loadProfileAndCatalog } from './config-files.js';
import type { DocsDeps } from './docs/context.js';
import { DocumentRegistry } from './docs/document-set.js';
import { type ApiVersion, ApiVersionRegistry } from './docs/versions.js';
import type { Clock } from './domain/time.js';
import { OutboxWake } from './mail/wake.js';
import { ensureActiveKey } from './receipts/keys.js';
import { logKey, logOrigin } from './receipts/log-note.js';
import { loadVapidKeys } from './services/alerts/push.js';
import { Metrics } from './services/runtime/metrics.js';
import { WorkerStatus } from './services/runtime/readiness.js';
import { GroupCommit, maxBatchFor } from './services/tasks/group-commit.js';
import { commitSubmissions } from './services/tasks/tasks.js';
import { createValidators } from './services/tasks/validation.js';
import { loadAdminKeyHash } from './services/team/admin-key.js';
import { maxHeldFor, TaskWaits } from './services/waiting/task-waits.js';
import { createChangeFeed } from './store/change-feed.js';
import type { Store } from './store/db.js';
import { pendingSummary } from './store/delivery/leased-queue.js';
import { getOrCreateSetting } from './store/settings-repo.js';
import { createPublicTaskCache } from './store/tasks/task-cache.js';
import { findPublicTask } from './store/tasks/tasks-repo.js';
import { Nudge } from './webhooks/nudge.js';

/**
 * The composition root: every dependency of the application is built here, once, as an explicit
 * field (no registries keyed by the deps object, no module globals). It may import from any layer;
 * nothing imports it but the entry points (server.ts, the CLI, tests) and app.ts for the type.
 */

export type { Caller } from './domain/caller.js';
export type { ServiceDeps } from './services/context.js';

/** Everything the app needs: the service dependencies plus what the documents and pages use. */
export type AppDeps = DocsDeps;

export interface InitOptions {
  clock: Clock;
  log: Logger;
  version: string;
  /** API versions served beside v1 (a future /api/v2, or a test-only deprecated one). */
  apiVersions?: readonly ApiVersion[];
}

/** Loads or creates what must persist across restarts and be shared by every instance, and builds the rest. */
export async function initDeps(config: Config, store: Store, options: InitOptions): Promise<AppDeps> {
  const secret = await getOrCreateSetting(store.db, 'server_secret', () => randomBytes(32).toString('base64'));
  const adminKey = await loadAdminKeyHash(store.db, config.adminKey, options.log);
  // The receipt-signing key: created on first start (race-safe across instances), then reused.
  await ensureActiveKey(store.db, options.clock.now());
  const loaded = loadProfileAndCatalog(config);
  const catalog = loaded.catalog;
  // One response target for the queue's overdue flag, the published figures and every document.
  const profile = config.responseTargetHours === undefined ? loaded.profile : { ...loaded.profile, response_target_hours: config.responseTargetHours };
  const changes = createChangeFeed({ store, databaseUrl: config.databaseUrl, log: options.log });
  // Subscribed before anything else listens to the feed: a change drops the cached task before a
  // woken long-poll reads it again (listeners run in subscription order). The feed's close() ends it.
  const { cache: taskCache } = createPublicTaskCache(store, changes);
  const waits = new TaskWaits({
    changes,
    read: (taskId) => findPublicTask(store, taskCache, taskId),
    log: options.log,
    maxHeld: maxHeldFor(config.server.maxConnections),
  });
  const metrics = new Metrics(store, options.clock);
  metrics.countHeldLongPolls(() => waits.size);
  metrics.addOutbox({ name: 'webhooks', pending: () => pendingSummary(store.db, 'webhook_outbox') });
  const deps: AppDeps = {
    config,
    store,
    clock: options.clock,
    log: options.log,
    validators: createValidators(config.limits, { allowPrivateCallbacks: config.webhooks.allowPrivate }),
    secret: Buffer.from(secret, 'base64'),
    version: options.version,
    adminKeyHash: adminKey.hash,
    generatedAdminKey: adminKey.generated,
    profile,
    catalog,
    abuse: createAbuseState(config, store, options.clock, options.log, Buffer.from(secret, 'base64')),
    outboxWake: new OutboxWake(),
    webhookNudge: new Nudge(),
    apiVersions: new ApiVersionRegistry(options.apiVersions),
    documents: new DocumentRegistry(),
    metrics,
    workers: new WorkerStatus(),
    changes,
    taskCache,
    waits,
    vapid: await loadVapidKeys(store.db),
    receiptLog: await logKey(store.db, logOrigin(config.baseUrl)),
    timestamps: { enabled: config.tsa.url !== undefined, failure: undefined },
    submissions: new GroupCommit((submissions) => commitSubmissions(deps, submissions), maxBatchFor(store.dialect)),
  };
  return deps;
}
