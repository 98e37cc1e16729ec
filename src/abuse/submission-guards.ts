import type { AppError } from '../domain/errors.js';
import type { TaskInput } from '../domain/tasks/schemas.js';
import { iso } from '../domain/time.js';
import { type ActiveBlock, activeBlocksMatching } from '../store/abuse-control/blocklist-repo.js';
import { addCounts, readCounters } from '../store/abuse-control/counters-repo.js';
import { findIdempotencyRecords, type IdempotencyRow, saveIdempotencyRecords } from '../store/abuse-control/idempotency-repo.js';
import { type Db, lockKeys } from '../store/db.js';
import { type DedupeMatch, findByDedupeKeys } from '../store/tasks/tasks-repo.js';
import { blockKindFor, blockMatchOf, clientBlocked, type SubjectMatch } from './blocklist.js';
import type { AbuseDeps, Caller } from './context.js';
import { type Duplicate, duplicateWindowStart, pickDuplicate } from './duplicates.js';
import { idempotencyRecord, replayOf, type StoredResponse } from './idempotency.js';
import { capacityReached, counterExpiry, counterKey, type Quota, quotaHeaders, rateLimited, taskQuotas, type Window, windowOf } from './limits.js';
import { dailyTaskCapKey } from './quotas.js';
import { policiesOf } from './state.js';

/**
 * The guards of task submissions inside the write transaction, for a whole batch of them at once
 * (group commit: services/tasks/tasks.ts commits the submissions that arrive together in one
 * transaction). Each submission is decided exactly as if it had come alone, in the batch's order,
 * seeing every earlier one's effect:
 *
 *   idempotent replay (or 422 for another payload) → blocklist (403) → quotas and the daily cap
 *   (429) → duplicate (409) → admitted: one unit of each quota, its Idempotency-Key record.
 *
 * `load` reads in four statements what every decision needs, under every key's lock on
 * PostgreSQL (the Idempotency-Keys and dedupe keys, then the quota counters, so twin batches on
 * other instances wait until this one commits and then see it; every writer of those counters is
 * a submission batch, which takes the same locks). Deadlock-free: each batch takes its first set
 * in hash order, then its counters in hash order, and no one holds a counter lock while waiting
 * for a key lock (the counters' lock is taken last and released only by the commit). `decide` then runs in memory, and `save` writes
 * the counters and records in two statements.
 */

export interface GuardedSubmission {
  caller: Caller;
  input: TaskInput;
  /** The id the task gets if admitted (an earlier submission of the batch may be its duplicate). */
  taskId: string;
  dedupeKey: string;
  /** SHA-256 of the canonical request, compared by Idempotency-Key replays ('' without a key). */
  requestHash: string;
  /** What a replay of this submission answers. */
  response: StoredResponse;
  /**
   * The per-client quota units taken before its MX look-up (guards.ts screenTask): it is not
   * checked against its quotas again, and gives these back here unless it is admitted.
   */
  reserved?: readonly ReservedUnit[] | undefined;
}

/** One unit of a counter taken ahead of the transaction. */
export interface ReservedUnit {
  key: string;
  expiresAt: string;
}

export type Verdict =
  | { kind: 'admitted'; headers: Record<string, string> }
  | { kind: 'replay'; replay: StoredResponse; headers: Record<string, string> }
  | { kind: 'duplicate'; duplicate: Duplicate }
  | { kind: 'refused'; error: AppError };

interface Counted {
  quota: Quota;
  window: Window;
  key: string;
}

const pairKey = (clientHash: string, key: string) => `${clientHash}\n${key}`;

export class SubmissionGuards {
  private readonly added = new Map<string, { count: number; expiresAt: string }>();
  private readonly records: Map<string, Pick<IdempotencyRow, 'request_hash' | 'status_code' | 'location' | 'body'>>;
  private readonly newRecords: IdempotencyRow[] = [];
  private readonly recent = new Map<string, Pick<DedupeMatch, 'id' | 'client_hash' | 'contact_email'>[]>();

  private constructor(
    private readonly deps: AbuseDeps,
    private readonly now: Date,
    /** The quota counters each submission uses, worked out once by load. */
    private readonly quotasOf: Map<GuardedSubmission, Counted[]>,
    /** What the blocklist matches each submission by, worked out once by load. */
    private readonly matches: Map<GuardedSubmission, SubjectMatch>,
    private readonly blocks: ActiveBlock[],
    records: IdempotencyRow[],
    private readonly counts: Map<string, number>,
    recent: DedupeMatch[],
    private readonly windowStart: string | null,
  ) {
    this.records = new Map(records.map((r) => [pairKey(r.client_hash, r.key), r]));
    for (const task of recent) this.recent.set(task.dedupe_key, [...(this.recent.get(task.dedupe_key) ?? []), task]);
  }

  /**
   * What the submission would come to if it were committed now, deciding it exactly as a batch
   * does but taking no lock and writing nothing (a dry run): `save` is never called. `alsoCounters`
   * are read with the submission's own (a dry run's standing on every quota), and returned.
   */
  static async peek(
    db: Db,
    deps: AbuseDeps,
    submission: GuardedSubmission,
    alsoCounters: string[] = [],
  ): Promise<{ verdict: Verdict; counts: Map<string, number> }> {
    const guards = await SubmissionGuards.load(db, deps, [submission], false, alsoCounters);
    const counts = new Map(guards.counts);
    return { verdict: guards.decide(submission), counts };
  }

  /**
   * Locks every key of the batch and reads what its decisions need. Without the locks (`lock`
   * false: a dry run, which also reads `alsoCounters`) the reads go out at once, side by side.
   */
  static async load(trx: Db, deps: AbuseDeps, submissions: GuardedSubmission[], lock = true, alsoCounters: string[] = []): Promise<SubmissionGuards> {
    const now = deps.clock.now();
    const at = iso(now);
    const quotasOf = new Map(submissions.map((s) => [s, SubmissionGuards.counted(deps, s, now)]));
    const counterKeys = [...new Set([...[...quotasOf.values()].flat().map((c) => c.key), dailyTaskCapKey(now), ...alsoCounters])];
    const keyed = submissions.filter((s) => s.caller.idempotencyKey !== undefined);
    const windowStart = duplicateWindowStart(deps, now);
    const matches = new Map(submissions.map((s) => [s, SubmissionGuards.blockMatch(s)]));
    const blocksRead = () => activeBlocksMatching(trx, [...matches.values()], at);
    const recordsRead = () =>
      findIdempotencyRecords(
        trx,
        keyed.map((s) => ({ clientHash: s.caller.clientHash, key: s.caller.idempotencyKey ?? '' })),
        at,
      );
    const recentRead = async () => (windowStart === null ? [] : await findByDedupeKeys(trx, [...new Set(submissions.map((s) => s.dedupeKey))], windowStart));
    if (!lock) {
      const [blocks, records, recent, counts] = await Promise.all([blocksRead(), recordsRead(), recentRead(), readCounters(trx, counterKeys)]);
      return new SubmissionGuards(deps, now, quotasOf, matches, blocks, records, counts, recent, windowStart);
    }
    // The keys of these submissions first, then what only they can change is read. The counters,
    // which every submission shares (the daily cap), are locked last and held the shortest.
    await lockKeys(trx, deps.store.dialect, [
      ...keyed.map((s) => `idem:${s.caller.clientHash}:${s.caller.idempotencyKey}`),
      ...submissions.map((s) => `dup:${s.dedupeKey}`),
    ]);
    const blocks = await blocksRead();
    const records = await recordsRead();
    const recent = await recentRead();
    await lockKeys(
      trx,
      deps.store.dialect,
      counterKeys.map((key) => `counter:${key}`),
    );
    const counts = await readCounters(trx, counterKeys);
    return new SubmissionGuards(deps, now, quotasOf, matches, blocks, records, counts, recent, windowStart);
  }

  private static blockMatch(this: void, s: GuardedSubmission): SubjectMatch {
    const { clientHash, networks, agent } = s.caller;
    return blockMatchOf({ clientHash, networks, agent, email: s.input.contact_email, requester: s.input.requester });
  }

  /** The counters of the quotas a submission uses (limits.taskQuotas). */
  private static counted(deps: AbuseDeps, s: GuardedSubmission, now: Date): Counted[] {
    return taskQuotas(policiesOf(deps.abuse, s.caller), s.input.delivery).map((quota) => {
      const window = windowOf(quota.window, now);
      return { quota, window, key: counterKey(quota, s.caller.clientHash, window) };
    });
  }

  /** Decides one submission, after every earlier one of the batch. */
  decide(s: GuardedSubmission): Verdict {
    let verdict: Verdict;
    try {
      verdict = this.check(s);
    } catch (error) {
      verdict = { kind: 'refused', error: error as AppError };
    }
    // Units taken for a submission that is not admitted go back, in the same transaction.
    if (verdict.kind !== 'admitted') for (const unit of s.reserved ?? []) this.add(unit.key, unit.expiresAt, -1);
    return verdict;
  }

  private check(s: GuardedSubmission): Verdict {
    // A replay first, as the look-up before validation does: it creates nothing, and a blocked
    // client may still read the tasks it sent (docs/abuse-control.md, Decisions).
    const { idempotencyKey, clientHash } = s.caller;
    const record = idempotencyKey === undefined ? undefined : this.records.get(pairKey(clientHash, idempotencyKey));
    if (record) return { kind: 'replay', replay: replayOf(record, s.requestHash), headers: this.taskQuotaHeaders(s) };
    const blocked = blockKindFor(this.matches.get(s) ?? SubmissionGuards.blockMatch(s), this.blocks);
    if (blocked) throw clientBlocked(blocked);

    const { task } = policiesOf(this.deps.abuse, s.caller);
    const counted = this.quotasOf.get(s) ?? SubmissionGuards.counted(this.deps, s, this.now);
    for (const c of counted) {
      const used = this.counts.get(c.key) ?? 0;
      if (s.reserved !== undefined || used < c.quota.limit) continue;
      throw rateLimited(c.quota, c.window, this.now, task, 'task submissions', used);
    }
    const capKey = dailyTaskCapKey(this.now);
    if ((this.counts.get(capKey) ?? 0) >= this.deps.config.limits.dailyTaskCap) throw capacityReached(this.now, task.policy);

    if (this.windowStart !== null) {
      const duplicate = pickDuplicate(this.recent.get(s.dedupeKey) ?? [], s.caller, s.input.contact_email);
      if (duplicate) return { kind: 'duplicate', duplicate };
    }

    if (s.reserved === undefined) for (const c of counted) this.add(c.key, counterExpiry(c.window));
    this.add(capKey, counterExpiry(windowOf('day', this.now)));
    // Newest first, as the store returns them: later submissions of the batch see this one.
    this.recent.set(s.dedupeKey, [
      { id: s.taskId, client_hash: clientHash, contact_email: s.input.contact_email ?? null },
      ...(this.recent.get(s.dedupeKey) ?? []),
    ]);
    if (idempotencyKey !== undefined) {
      const row = idempotencyRecord(this.deps, clientHash, idempotencyKey, s.requestHash, s.response, this.now);
      this.records.set(pairKey(clientHash, idempotencyKey), row);
      this.newRecords.push(row);
    }
    return { kind: 'admitted', headers: this.taskQuotaHeaders(s) };
  }

  private add(key: string, expiresAt: string, by = 1): void {
    this.counts.set(key, (this.counts.get(key) ?? 0) + by);
    this.added.set(key, { count: (this.added.get(key)?.count ?? 0) + by, expiresAt });
  }

  /** RateLimit-* of the task quotas (not the status_poll one) as they stand now. */
  private taskQuotaHeaders(s: GuardedSubmission): Record<string, string> {
    return quotaHeaders(policiesOf(this.deps.abuse, s.caller).task, s.caller.clientHash, this.now, (key) => this.counts.get(key) ?? 0);
  }

  /** Writes what the admitted submissions used: the counters and the Idempotency-Key records. */
  async save(trx: Db): Promise<void> {
    await addCounts(
      trx,
      [...this.added].map(([key, { count, expiresAt }]) => ({ key, count, expiresAt })),
    );
    await saveIdempotencyRecords(trx, this.newRecords);
  }
}
