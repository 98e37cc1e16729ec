import { type AppError, validationFailed } from '../domain/errors.js';
import type { MessageInput, TaskInput } from '../domain/schemas.js';
import { consumeCounter, readCounters } from '../store/counters-repo.js';
import type { Db } from '../store/db.js';
import { noteRefusal } from './auto-block.js';
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

export { noteRefusal } from './auto-block.js';
export type { Duplicate } from './duplicates.js';
export type { StoredResponse } from './idempotency.js';
export { type GuardedSubmission, SubmissionGuards, type Verdict } from './submission-guards.js';

/**
 * Abuse control: the guards every submission and message passes, in this order —
 * screen (blocklist, quota, e-mail deliverability: before the transaction, because the MX lookup
 * cannot wait inside it; a submission with no e-mail needs no screening) → then, inside the write
 * transaction: lock → blocklist → idempotent replay → quota → duplicate → write → remember the
 * response (submissions: submission-guards.ts, a batch at a time). A refusal writes nothing; the
 * service then calls noteRefusal (auto-block) outside the transaction.
 */

export interface Screening {
  /** The resolver could not answer: accepted, but flagged for the operator. */
  emailUnverified: boolean;
}

/**
 * Blocklist, then the cheap quota check, then (only then) the MX lookup: a client already over its
 * limits or a full daily cap cannot make the service query DNS. The quota is only read here; it
 * is taken for real inside the write transaction.
 */
async function screen(deps: AbuseDeps, subject: BlockSubject, field: string, email: string | undefined, precheck: () => Promise<void>): Promise<Screening> {
  const blocked = await matchBlock(deps, subject);
  if (blocked) throw clientBlocked(blocked);
  await precheck();
  if (email === undefined) return { emailUnverified: false };
  const verdict = await deps.abuse.email.check(email);
  if (verdict === 'ok') return { emailUnverified: false };
  if (verdict === 'unverified') {
    deps.log.warn({ field }, 'e-mail domain could not be verified (resolver did not answer); accepted and flagged');
    return { emailUnverified: true };
  }
  throw validationFailed([`${field} ${REFUSAL_TEXT[verdict]}`], 'The e-mail address cannot receive mail; see details.');
}

export async function screenTask(deps: AbuseDeps, caller: Caller, input: TaskInput): Promise<Screening> {
  const { task } = deps.abuse.policies;
  const precheck = async () => {
    await quotaLeft(deps, caller, task, taskQuotas(deps.abuse.policies, input.delivery), 'task submissions');
    const now = deps.clock.now();
    const capUsed = (await readCounters(deps.store.db, [dailyTaskCapKey(now)])).get(dailyTaskCapKey(now)) ?? 0;
    if (capUsed >= deps.config.limits.dailyTaskCap) throw capacityReached(now, task.policy);
  };
  return screen(
    deps,
    { clientHash: caller.clientHash, email: input.contact_email, requester: input.requester },
    'contact_email',
    input.contact_email,
    precheck,
  );
}

export async function screenMessage(deps: AbuseDeps, caller: Caller, input: MessageInput): Promise<Screening> {
  const { message } = deps.abuse.policies;
  const precheck = () => quotaLeft(deps, caller, message, message.quotas, 'messages');
  return screen(deps, { clientHash: caller.clientHash, email: input.reply_to, requester: input.from }, 'reply_to', input.reply_to, precheck);
}

/** Read-only: 429 when a quota is already used up (counted toward auto-block like any 429). */
async function quotaLeft(deps: AbuseDeps, caller: Caller, set: QuotaSet, quotas: Quota[], what: string): Promise<void> {
  const now = deps.clock.now();
  const windows = quotas.map((q) => windowOf(q.window, now));
  const keys = quotas.map((q, i) => counterKey(q, caller.clientHash, windows[i]!));
  const counts = await readCounters(deps.store.db, keys);
  for (const [i, quota] of quotas.entries()) {
    if ((counts.get(keys[i]!) ?? 0) < quota.limit) continue;
    const refusal = rateLimited(quota, windows[i]!, now, set.policy, what);
    await noteRefusal(deps, caller, refusal);
    throw refusal;
  }
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
    if (used === null) throw rateLimited(quota, window, now, set.policy, what);
    standings.push({ limit: quota.limit, used, resetsAt: window.resetsAt });
  }
  return standings;
}

/** RateLimit-* headers of the task quotas without using any (for idempotent replays). */
export async function taskQuotaHeaders(db: Db, deps: AbuseDeps, caller: Caller): Promise<Record<string, string>> {
  const { task } = deps.abuse.policies;
  const now = deps.clock.now();
  const counts = await readCounters(
    db,
    task.quotas.map((q) => counterKey(q, caller.clientHash, windowOf(q.window, now))),
  );
  return quotaHeaders(task, caller.clientHash, now, (key) => counts.get(key) ?? 0);
}

export async function consumeMessageQuota(db: Db, deps: AbuseDeps, caller: Caller): Promise<Record<string, string>> {
  const { message } = deps.abuse.policies;
  const standings = await consume(db, deps, caller, message, message.quotas, 'messages');
  return { 'RateLimit-Policy': message.policy, ...rateLimitHeaders(standings, deps.clock.now()) };
}
