import { iso } from '../../domain/time.js';
import { deletePushConfigsOf } from '../../store/a2a/push-configs-repo.js';
import { deleteExpiredBlocks } from '../../store/abuse-control/blocklist-repo.js';
import { sweepExpiredCounters } from '../../store/abuse-control/counters-repo.js';
import { sweepExpiredIdempotencyKeys } from '../../store/abuse-control/idempotency-repo.js';
import { deleteAttachmentsOfTask } from '../../store/attachments/attachments-repo.js';
import { type Db, type DialectName, withExclusiveLock, withTransaction } from '../../store/db.js';
import { deleteSentOutboxBefore } from '../../store/delivery/outbox-repo.js';
import { deleteFinishedWebhooksBefore } from '../../store/delivery/webhooks-repo.js';
import { eraseMessagesBefore } from '../../store/messages/messages-repo.js';
import { deleteSupersededCheckpoints } from '../../store/receipt-log/receipt-log-repo.js';
import { readSetting, writeSetting } from '../../store/settings-repo.js';
import { eraseTaskPrivateFields, finalTasksToErase } from '../../store/tasks/tasks-repo.js';
import { sweepChallenges } from '../../store/team/operators-repo.js';
import { sweepNotices } from '../../store/team/push-repo.js';
import { sweepRevokedSessions } from '../../store/team/sessions-repo.js';
import { sweepFailures } from '../../store/team/signin-failures-repo.js';
import type { ServiceDeps } from '../context.js';

/** What one retention run did; the last one is kept in the store and shown in the admin stats. */
export interface RetentionRun {
  ran_at: string;
  retention_days: number;
  erased_tasks: number;
  erased_messages: number;
  deleted_sent_mail: number;
  deleted_finished_webhooks: number;
  deleted_idempotency_records: number;
  deleted_counters: number;
  deleted_revoked_sessions: number;
  deleted_expired_blocks: number;
  deleted_push_notices: number;
  deleted_log_checkpoints: number;
  duration_ms: number;
}

/** Rows per statement: small enough that no batch holds a lock long under traffic. */
const BATCH = 500;
const LOCK_KEY = 'retention';
const LAST_RUN_KEY = 'retention_last_run';
const DAY_MS = 86_400_000;
/** How long a push claim row is kept. */
const PUSH_NOTICE_DAYS = 7;

type RetentionDeps = Pick<ServiceDeps, 'store' | 'clock' | 'log' | 'config'>;

/**
 * One retention run (contract "Operations"): tasks final for more than RETENTION_DAYS lose their
 * private fields, messages older than that lose their text and addresses, sent mail older than
 * SENT_MAIL_RETENTION_DAYS, delivered webhook events as old, and expired idempotency records, rate counters, revoked sessions,
 * blocklist entries and superseded receipt-log checkpoints are deleted. Receipts stay verifiable: nothing they bind is touched. One instance at a time (an
 * advisory lock on PostgreSQL): returns undefined when another instance is running it. Works in
 * batches of BATCH rows, each its own transaction, so it never holds a long lock, and stops between
 * batches when `stopping()` says the process is shutting down (the next run continues).
 */
export async function runRetention(deps: RetentionDeps, options: { stopping?: () => boolean } = {}): Promise<RetentionRun | undefined> {
  const started = Date.now();
  const stopping = options.stopping ?? (() => false);
  /** Repeats a batch until one comes back short (or the process is stopping); returns the total. */
  const inBatches = async (batch: () => Promise<number>): Promise<number> => {
    let total = 0;
    while (!stopping()) {
      const count = await batch();
      total += count;
      if (count < BATCH) break;
    }
    return total;
  };
  const now = deps.clock.now();
  const at = iso(now);
  const { days, sentMailDays } = deps.config.retention;
  const cutoff = iso(new Date(now.getTime() - days * DAY_MS));
  const sentCutoff = iso(new Date(now.getTime() - sentMailDays * DAY_MS));

  const locked = await withExclusiveLock(deps.store, LOCK_KEY, async (db) => {
    const erased_tasks = await inBatches(async () => {
      const ids = await finalTasksToErase(db, cutoff, BATCH);
      return withTransaction(db, (trx) => eraseTasks(trx, deps.store.dialect, ids, at));
    });
    const run: RetentionRun = {
      ran_at: at,
      retention_days: days,
      erased_tasks,
      erased_messages: await inBatches(() => eraseMessagesBefore(db, cutoff, at, BATCH)),
      deleted_sent_mail: await inBatches(() => deleteSentOutboxBefore(db, sentCutoff, BATCH)),
      deleted_finished_webhooks: await inBatches(() => withTransaction(db, (trx) => deleteFinishedWebhooksBefore(trx, sentCutoff, BATCH))),
      deleted_idempotency_records: await inBatches(() => sweepExpiredIdempotencyKeys(db, at, BATCH)),
      deleted_counters: await inBatches(() => sweepExpiredCounters(db, at, BATCH)),
      deleted_revoked_sessions: await inBatches(() => sweepRevokedSessions(db, at, BATCH)),
      deleted_expired_blocks: await inBatches(() => deleteExpiredBlocks(db, at, BATCH)),
      // Push claims only need to outlive the change they dedupe across instances.
      deleted_push_notices: await inBatches(() => sweepNotices(db, iso(new Date(now.getTime() - PUSH_NOTICE_DAYS * DAY_MS)), BATCH)),
      // The receipt log's checkpoints but the latest: nothing reads them (docs/receipt-log.md, "Retention").
      deleted_log_checkpoints: await inBatches(() => deleteSupersededCheckpoints(db, BATCH)),
      duration_ms: 0,
    };
    // Team (docs/team.md): ceremonies never finished and failed sign-in windows long closed. The audit
    // log is kept like receipts: never erased while its task exists (and tasks are never deleted).
    await sweepChallenges(db, at);
    await sweepFailures(db, iso(new Date(now.getTime() - DAY_MS)));
    run.duration_ms = Date.now() - started;
    await writeSetting(db, LAST_RUN_KEY, JSON.stringify(run));
    return run;
  });
  if (!locked) {
    deps.log.info('retention: another instance is running it; skipped');
    return undefined;
  }
  deps.log.info({ retention: locked.value }, 'retention run finished');
  return locked.value;
}

/**
 * Erases one batch of tasks in one transaction: contact e-mail, callback URL and A2A push configs
 * (their URLs and credentials), and the attached files with the blobs no other task shares. The
 * receipt keeps the files' hashes and names.
 */
async function eraseTasks(trx: Db, dialect: DialectName, ids: string[], at: string): Promise<number> {
  for (const id of ids) await deleteAttachmentsOfTask(trx, dialect, id);
  await deletePushConfigsOf(trx, ids);
  return eraseTaskPrivateFields(trx, ids, at);
}

/** The last run of any instance, or null before the first. */
export async function lastRetentionRun(deps: Pick<ServiceDeps, 'store'>): Promise<RetentionRun | null> {
  const raw = await readSetting(deps.store.db, LAST_RUN_KEY);
  if (raw === undefined) return null;
  try {
    // A run stored before a count existed shows it as 0.
    const run = JSON.parse(raw) as Partial<RetentionRun>;
    return { ...run, deleted_log_checkpoints: run.deleted_log_checkpoints ?? 0 } as RetentionRun;
  } catch {
    return null;
  }
}
