import { type AppError, validationFailed } from '../domain/errors.js';
import type { MessageInput, TaskInput } from '../domain/tasks/schemas.js';
import { addCounts, consumeCounter, readCounters } from '../store/abuse-control/counters-repo.js';
import { type Db, lockKeys, withTransaction } from '../store/db.js';
import { countRefusal, noteRefusal } from './auto-block.js';
import { type BlockSubject, clientBlocked, matchBlock } from './blocklist.js';
import type { AbuseDeps, Caller } from './context.js';
import { type Duplicate, duplicateTask } from './duplicates.js';
import { REFUSAL_TEXT } from './email.js';
import { findStoredResponse, type StoredResponse } from './idempotency.js';
import {
  capacityReached,
  counterExpiry,
  counterKey,
  type Quota,
  type QuotaSet,
  quotaHeaders,
  rateLimited,
  rateLimitHeaders,
  type Standing,
  taskQuotas,
  windowOf,
} from './limits.js';
import { dailyTaskCapKey } from './quotas.js';
import { policiesOf } from './state.js';
import type { ReservedUnit } from './submission-guards.js';

export { noteRefusal } from './auto-block.js';
export type { Duplicate } from './duplicates.js';
export type { StoredResponse } from './idempotency.js';
export { type GuardedSubmission, type ReservedUnit, SubmissionGuards, type Verdict } from './submission-guards.js';

/**
 * Abuse control: the guards every submission and message passes, in this order —
 * screen (blocklist, the quota read, then the e-mail deliverability: before the transaction,
 * because the MX lookup cannot wait inside it; a submission with no e-mail needs no screening) →
 * then, inside the write transaction: lock → idempotent replay → blocklist → quota (already held
 * when the screening's look-up took it) → duplicate → write → remember the response (submissions:
 * submission-guards.ts, a batch at a time). A refusal writes nothing and gives back the units a
 * screening took; the service then calls noteRefusal (auto-block) outside the transaction.
 */

/** Quota units taken for one request before its DNS query; given back if it does not go through. */
export interface Reservation {
  /** The counters that hold one unit each for this request. */
  counters: readonly ReservedUnit[];
  /** RateLimit-* headers of the request's quota set with this unit taken. */
  headers: Record<string, string>;
  /** Gives the units back (a refusal after the reservation, or a failed write). Never throws. */
  release(): Promise<void>;
}

export interface Screening {
  /** The resolver could not answer: accepted, but flagged for the operator. */
  emailUnverified: boolean;
  /** The request's per-client quota units, when its look-up took them (a DNS query was sent). */
  reservation?: Reservation | undefined;
}

/**
 * Blocklist, then the cheap quota read (a client already over its limits or a full daily cap
 * cannot make the service query DNS), then the MX lookup. When the look-up must send a DNS query
 * (not cached, not already under way), the request first takes its quota units for real and one
 * unit of the client's look-up budget: a burst of requests on uncached domains causes at most as
 * many queries as the quota has units left. A request refused after that (undeliverable address,
 * over the budget) gives its units back, so a 422 still uses no quota. An address on a domain
 * that does not exist counts toward auto-block like a 429.
 */
async function screen(
  deps: AbuseDeps,
  caller: Caller,
  subject: BlockSubject,
  field: string,
  email: string,
  precheck: () => Promise<void>,
  reserve: () => Promise<Reservation>,
  set: QuotaSet,
  dryRun: boolean,
): Promise<Screening> {
  const blocked = await matchBlock(deps, subject);
  if (blocked) throw clientBlocked(blocked);
  await precheck();
  let reservation: Reservation | undefined;
  const beforeQuery = async () => {
    // A dry run takes nothing: it is refused where the submission would be, and its look-ups are
    // bounded by the read limit it counts against instead.
    if (dryRun) return lookupLeft(deps, caller, set);
    const taken = await reserve();
    try {
      await takeLookup(deps, caller, set);
    } catch (error) {
      await taken.release();
      throw error;
    }
    reservation = taken;
  };
  let verdict: Awaited<ReturnType<typeof deps.abuse.email.check>>;
  try {
    verdict = await deps.abuse.email.check(email, beforeQuery);
  } catch (error) {
    if (!dryRun) await noteRefusal(deps, caller, error);
    throw error;
  }
  if (verdict === 'ok') return { emailUnverified: false, reservation };
  if (verdict === 'unverified') {
    deps.log.warn({ field }, 'e-mail domain could not be verified (resolver did not answer); accepted and flagged');
    return { emailUnverified: true, reservation };
  }
  await reservation?.release();
  if (verdict === 'no_such_domain' && !dryRun) await countRefusal(deps, caller);
  throw validationFailed([`${field} ${REFUSAL_TEXT[verdict]}`], 'The e-mail address cannot receive mail; see details.');
}

/** One unit of the client's e-mail look-up budget, shared by every instance; 429 when spent. */
async function takeLookup(deps: AbuseDeps, caller: Caller, set: QuotaSet): Promise<void> {
  const quota = policiesOf(deps.abuse, caller).emailLookup;
  const now = deps.clock.now();
  const window = windowOf(quota.window, now);
  const used = await consumeCounter(deps.store.db, counterKey(quota, caller.clientHash, window), quota.limit, counterExpiry(window));
  if (used === null) throw rateLimited(quota, window, now, set, 'e-mail domain look-ups');
}

/** Read-only: the 429 takeLookup would give, without taking a unit (dry runs). */
async function lookupLeft(deps: AbuseDeps, caller: Caller, set: QuotaSet): Promise<void> {
  const quota = policiesOf(deps.abuse, caller).emailLookup;
  const now = deps.clock.now();
  const window = windowOf(quota.window, now);
  const key = counterKey(quota, caller.clientHash, window);
  const used = (await readCounters(deps.store.db, [key])).get(key) ?? 0;
  if (used >= quota.limit) throw rateLimited(quota, window, now, set, 'e-mail domain look-ups');
}

/**
 * With `dryRun`, the same checks in the same order, but nothing is taken or counted: no quota
 * unit, no look-up unit, no refusal toward auto-block (a dry run is a read).
 */
export async function screenTask(deps: AbuseDeps, caller: Caller, input: TaskInput, email: string, dryRun = false): Promise<Screening> {
  // A domain already known to take mail sends no DNS query, and the screening exists only to keep
  // a blocked or spent client from causing one: the submission's transaction checks the blocklist,
  // the quotas and the daily cap, in this same order (submission-guards.ts). Three statements less
  // per submission on the common path (a requester's domain seen within the hour).
  if (deps.abuse.email.knownDeliverable(email)) return { emailUnverified: false };
  const policies = policiesOf(deps.abuse, caller);
  const { task } = policies;
  const quotas = taskQuotas(policies, input.delivery);
  const precheck = async () => {
    await quotaLeft(deps, caller, task, quotas, 'task submissions', !dryRun);
    // The daily cap is only read here: it is taken inside the write transaction.
    const now = deps.clock.now();
    const capUsed = (await readCounters(deps.store.db, [dailyTaskCapKey(now)])).get(dailyTaskCapKey(now)) ?? 0;
    if (capUsed >= deps.config.limits.dailyTaskCap) throw capacityReached(now, task.policy);
  };
  const reserve = () => reserveQuota(deps, caller, task, quotas, 'task submissions');
  const subject = { clientHash: caller.clientHash, networks: caller.networks, agent: caller.agent, email, requester: input.requester };
  return screen(deps, caller, subject, 'contact_email', email, precheck, reserve, task, dryRun);
}

export async function screenMessage(deps: AbuseDeps, caller: Caller, input: MessageInput): Promise<Screening> {
  const { message } = policiesOf(deps.abuse, caller);
  const precheck = () => quotaLeft(deps, caller, message, message.quotas, 'messages');
  const reserve = () => reserveQuota(deps, caller, message, message.quotas, 'messages');
  const subject = { clientHash: caller.clientHash, networks: caller.networks, agent: caller.agent, email: input.reply_to, requester: input.from };
  return screen(deps, caller, subject, 'reply_to', input.reply_to, precheck, reserve, message, false);
}

/** The blocklist alone (every spelling of the client): 403 client_blocked. For an action that is not a message, such as a withdrawal. */
export async function screenBlocklist(deps: AbuseDeps, caller: Caller): Promise<void> {
  const blocked = await matchBlock(deps, { clientHash: caller.clientHash, networks: caller.networks, agent: caller.agent });
  if (blocked) throw clientBlocked(blocked);
}

/** A message with no mailbox of its own (a withdrawal request): blocklist and message quota only. */
export async function screenMailboxlessMessage(deps: AbuseDeps, caller: Caller): Promise<void> {
  const { message } = policiesOf(deps.abuse, caller);
  // No address to check, so no DNS look-up: the blocklist (every spelling of the client), then the quota.
  const blocked = await matchBlock(deps, { clientHash: caller.clientHash, networks: caller.networks, agent: caller.agent });
  if (blocked) throw clientBlocked(blocked);
  await quotaLeft(deps, caller, message, message.quotas, 'messages');
}

/** Read-only: 429 when a quota is already used up (counted toward auto-block like any 429, unless `note` is false). */
async function quotaLeft(deps: AbuseDeps, caller: Caller, set: QuotaSet, quotas: Quota[], what: string, note = true): Promise<void> {
  const now = deps.clock.now();
  const windows = quotas.map((q) => windowOf(q.window, now));
  const keys = quotas.map((q, i) => counterKey(q, caller.clientHash, windows[i]!));
  const counts = await readCounters(deps.store.db, keys);
  for (const [i, quota] of quotas.entries()) {
    const used = counts.get(keys[i]!) ?? 0;
    if (used < quota.limit) continue;
    const refusal = rateLimited(quota, windows[i]!, now, set, what, used);
    if (note) await noteRefusal(deps, caller, refusal);
    throw refusal;
  }
}

/**
 * Takes one unit of each quota, all or none, under the counters' locks (the locks the submission
 * batches take, so a batch on another instance never counts past a unit taken here). A refusal
 * (429) counts toward auto-block. If the process stops before the unit is given back or used,
 * the client has one unit less in that window: the error is on the side of the limit.
 */
async function reserveQuota(deps: AbuseDeps, caller: Caller, set: QuotaSet, quotas: Quota[], what: string): Promise<Reservation> {
  const now = deps.clock.now();
  const counters = quotas.map((quota) => {
    const window = windowOf(quota.window, now);
    return { key: counterKey(quota, caller.clientHash, window), expiresAt: counterExpiry(window) };
  });
  // A 429 here is counted toward auto-block by the screening, once.
  const standings = await withTransaction(deps.store.db, async (trx) => {
    await lockKeys(
      trx,
      deps.store.dialect,
      counters.map((c) => `counter:${c.key}`),
    );
    return consume(trx, deps, caller, set, quotas, what);
  });
  let released = false;
  return {
    counters,
    headers: { 'RateLimit-Policy': set.policy, ...rateLimitHeaders(standings.slice(0, set.quotas.length), now) },
    release: async () => {
      if (released) return;
      released = true;
      try {
        await addCounts(
          deps.store.db,
          counters.map((c) => ({ ...c, count: -1 })),
        );
      } catch (failure) {
        deps.log.error({ err: failure }, 'could not give back reserved quota units');
      }
    },
  };
}

/**
 * Before anything else: the stored response for this client's key and payload, or null; 422 for
 * another payload (checked again inside the transaction, under the key's lock).
 */
export async function findReplay(db: Db, deps: AbuseDeps, caller: Caller, requestHash: string): Promise<StoredResponse | null> {
  return findStoredResponse(db, deps, caller, requestHash);
}

/** The 409 duplicate_task for a duplicate found by the submission guards. */
export function duplicateRefusal(deps: AbuseDeps, duplicate: Duplicate): AppError {
  return duplicateTask(duplicate, deps.config.limits.duplicateWindowHours);
}

/** Takes one unit of each quota, in a fixed order (so concurrent transactions cannot deadlock). */
async function consume(db: Db, deps: AbuseDeps, caller: Caller, set: QuotaSet, quotas: Quota[], what: string): Promise<Standing[]> {
  const now = deps.clock.now();
  const standings: Standing[] = [];
  for (const quota of quotas) {
    const window = windowOf(quota.window, now);
    const used = await consumeCounter(db, counterKey(quota, caller.clientHash, window), quota.limit, counterExpiry(window));
    if (used === null) throw rateLimited(quota, window, now, set, what);
    standings.push({ limit: quota.limit, used, resetsAt: window.resetsAt });
  }
  return standings;
}

/** RateLimit-* headers of the task quotas without using any (for idempotent replays). */
export async function taskQuotaHeaders(db: Db, deps: AbuseDeps, caller: Caller): Promise<Record<string, string>> {
  const { task } = policiesOf(deps.abuse, caller);
  const now = deps.clock.now();
  const counts = await readCounters(
    db,
    task.quotas.map((q) => counterKey(q, caller.clientHash, windowOf(q.window, now))),
  );
  return quotaHeaders(task, caller.clientHash, now, (key) => counts.get(key) ?? 0);
}

/** The counters a dry run's standing reads (taskQuotaStanding), to read them with others. */
export function taskQuotaStandingKeys(deps: AbuseDeps, caller: Caller): string[] {
  const now = deps.clock.now();
  return taskQuotas(policiesOf(deps.abuse, caller), 'status_poll').map((q) => counterKey(q, caller.clientHash, windowOf(q.window, now)));
}

/**
 * Where the client stands on the quotas a submission may use (a dry run's answer), without using
 * any; from `known` counts when given (read beside the dry run's checks), else read here.
 */
export async function taskQuotaStanding(
  db: Db,
  deps: AbuseDeps,
  caller: Caller,
  known?: Map<string, number>,
): Promise<Record<string, { limit: number; remaining: number }>> {
  const quotas = taskQuotas(policiesOf(deps.abuse, caller), 'status_poll');
  const keys = taskQuotaStandingKeys(deps, caller);
  const counts = known ?? (await readCounters(db, keys));
  return Object.fromEntries(quotas.map((q, i) => [q.name, { limit: q.limit, remaining: Math.max(0, q.limit - (counts.get(keys[i] ?? '') ?? 0)) }]));
}

/** Takes one unit of each message quota inside the message's transaction (no unit was reserved). */
export async function consumeMessageQuota(db: Db, deps: AbuseDeps, caller: Caller): Promise<Record<string, string>> {
  const { message } = policiesOf(deps.abuse, caller);
  const standings = await consume(db, deps, caller, message, message.quotas, 'messages');
  return { 'RateLimit-Policy': message.policy, ...rateLimitHeaders(standings, deps.clock.now()) };
}
