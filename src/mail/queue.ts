import type { Insertable } from 'kysely';
import { iso } from '../domain/time.js';
import { extendLease as extendQueueLease, extendLeases as extendQueueLeases } from '../store/delivery/leased-queue.js';
import { claimDueOutbox, markClaimedOutboxSent, type OutboxRow, replaceClaimedOutbox, updateClaimedOutbox } from '../store/delivery/outbox-repo.js';
import type { OutboxTable } from '../store/schema.js';
import type { MailDeps } from './context.js';
import { CLAIM_RANKS, claimRank } from './priority.js';

/**
 * The mail worker's view of the outbox: claims under a lease and the outcome of each claimed mail
 * (the queries themselves are in store/delivery/outbox-repo.ts and store/delivery/leased-queue.ts). Every write names the claim token, so a
 * worker that lost its lease cannot overwrite the new holder's outcome.
 */

export type { OutboxRow } from '../store/delivery/outbox-repo.js';

type QueueDeps = Pick<MailDeps, 'store' | 'clock'>;

/** Claims up to `limit` due mails under this worker's token for `leaseMs`: requester mail before operator notifications. */
export async function claimDue(deps: QueueDeps, token: string, limit: number, leaseMs: number, onlyKinds?: readonly string[]): Promise<OutboxRow[]> {
  const now = deps.clock.now();
  const lease = { locked_until: iso(new Date(now.getTime() + leaseMs)), claim_token: token };
  if (onlyKinds === undefined) return claimDueOutbox(deps.store, iso(now), lease, limit, { ranks: CLAIM_RANKS });
  const ranks = CLAIM_RANKS.filter((rank) => onlyKinds.some((kind) => claimRank(kind) === rank));
  return claimDueOutbox(deps.store, iso(now), lease, limit, { ranks, onlyKinds });
}

/** The heartbeat: while a mail is being sent its lease is renewed, so only a dead worker's claim expires. */
export function extendLease(deps: QueueDeps, row: OutboxRow, token: string, leaseMs: number): Promise<boolean> {
  return extendQueueLease(deps.store.db, 'outbox', row.id, token, iso(new Date(deps.clock.now().getTime() + leaseMs)));
}

/** Renews the claims of mails claimed but not started yet, in one statement; the ids still held. */
export function extendLeases(deps: QueueDeps, rows: OutboxRow[], token: string, leaseMs: number): Promise<Set<string>> {
  return extendQueueLeases(
    deps.store.db,
    'outbox',
    rows.map((r) => r.id),
    token,
    iso(new Date(deps.clock.now().getTime() + leaseMs)),
  );
}

/** Replaces claimed notifications by one digest row, in one transaction (see replaceClaimedOutbox). */
export function bundleIntoDigest(deps: QueueDeps, token: string, rows: OutboxRow[], digest: Insertable<OutboxTable>): Promise<void> {
  return replaceClaimedOutbox(
    deps.store.db,
    token,
    rows.map((r) => r.id),
    digest,
    iso(deps.clock.now()),
    `bundled into digest ${digest.id}`,
  );
}

function update(deps: QueueDeps, row: OutboxRow, token: string, changes: Partial<OutboxTable>): Promise<boolean> {
  return updateClaimedOutbox(deps.store.db, row.id, token, changes);
}

/**
 * How long a sent mail waits for others to share its mark, and how many share one at most. Nothing
 * waits on the mark (the sending slot goes on), so the window costs no throughput; it bounds what a
 * crash could send twice, as the claim's lease did before.
 */
const MARK_DELAY_MS = 50;
const MARK_BATCH = 256;

/**
 * Marks sent mails in batches: the mails sent within MARK_DELAY_MS are marked together in one
 * statement (a store write per mail was a commit per mail, an fsync each on SQLite). Those sent
 * while a batch is being written wait for a window of their own, unless they fill a batch: written
 * as soon as the batch before was, on PostgreSQL a flood's marks became a statement and a commit
 * per round trip, a few mails each. Each caller learns whether its mail's claim held.
 */
export class SentMarks {
  private waiting: { id: string; done: (marked: boolean) => void; failed: (error: unknown) => void }[] = [];
  private timer: NodeJS.Timeout | undefined;
  private writing: Promise<void> | undefined;

  constructor(
    private readonly deps: QueueDeps,
    private readonly token: string,
  ) {}

  mark(row: OutboxRow): Promise<boolean> {
    return new Promise((done, failed) => {
      this.waiting.push({ id: row.id, done, failed });
      if (this.waiting.length >= MARK_BATCH) this.flush();
      else this.timer ??= setTimeout(() => this.flush(), MARK_DELAY_MS);
    });
  }

  /** Writes what waits now; resolves when every mark asked for so far is written. */
  async drain(): Promise<void> {
    for (;;) {
      this.flush();
      if (this.writing === undefined) return;
      await this.writing;
    }
  }

  /**
   * Starts a write unless one is running (it takes what waits when its batch is done). Nothing to
   * write starts nothing: an empty write finishing synchronously inside `??=` was once recorded as
   * a write in progress for ever, and no later mark was written.
   */
  private flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.writing !== undefined || this.waiting.length === 0) return;
    this.writing = this.write().finally(() => {
      this.writing = undefined;
      // Marks asked for while that batch was written: a full batch at once, else in their window.
      if (this.waiting.length >= MARK_BATCH) this.flush();
      else if (this.waiting.length > 0) this.timer ??= setTimeout(() => this.flush(), MARK_DELAY_MS);
    });
  }

  private async write(): Promise<void> {
    const batch = this.waiting.splice(0, MARK_BATCH);
    try {
      const marked = await markClaimedOutboxSent(
        this.deps.store.db,
        batch.map((b) => b.id),
        this.token,
        iso(this.deps.clock.now()),
      );
      for (const b of batch) b.done(marked.has(b.id));
    } catch (error) {
      for (const b of batch) b.failed(error);
    }
  }
}

export function scheduleRetry(deps: QueueDeps, row: OutboxRow, token: string, error: string, dueAt: Date): Promise<boolean> {
  return update(deps, row, token, { attempts: Number(row.attempts) + 1, last_error: error, next_attempt_at: iso(dueAt) });
}

export function markFailed(deps: QueueDeps, row: OutboxRow, token: string, error: string): Promise<boolean> {
  return update(deps, row, token, { status: 'failed', attempts: Number(row.attempts) + 1, last_error: error });
}

/** Not an attempt: the mail waits (e.g. for tomorrow's e-mail cap) with its attempt count intact. */
export function postpone(deps: QueueDeps, row: OutboxRow, token: string, dueAt: Date): Promise<boolean> {
  return update(deps, row, token, { next_attempt_at: iso(dueAt) });
}

/** Gives a claimed mail back untouched (the worker is stopping before it got to it). */
export function release(deps: QueueDeps, row: OutboxRow, token: string): Promise<boolean> {
  return update(deps, row, token, {});
}
