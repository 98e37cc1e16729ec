import { validationFailed } from '../domain/errors.js';
import type { MessageInput, TaskInput } from '../domain/schemas.js';
import type { Caller, AbuseDeps } from './context.js';
import { consumeCounter, readCounters } from '../store/counters-repo.js';
import { lockKeys, type Db } from '../store/db.js';
import { clientBlocked, matchBlock, type BlockSubject } from './blocklist.js';
import { duplicateTask, findDuplicate } from './duplicates.js';
import { REFUSAL_TEXT } from './email.js';
import { findStoredResponse, storeResponse, type StoredResponse } from './idempotency.js';
import { capacityReached, counterExpiry, counterKey, rateLimited, rateLimitHeaders, windowOf, type Quota, type QuotaSet, type Standing } from './limits.js';
import { dailyTaskCapKey } from './quotas.js';

export { noteRefusal } from './auto-block.js';
export type { StoredResponse } from './idempotency.js';

/**
 * Abuse control: the guards every submission and message passes, in this order —
 * screen (blocklist, e-mail deliverability) → then, inside the write transaction: lock → idempotent
 * replay → duplicate → quota → write → remember the response. A refusal's transaction rolls back
 * everything it counted; the service then calls noteRefusal (auto-block) outside it.
 */

export interface Screening {
  /** The resolver could not answer: accepted, but flagged for the operator. */
  emailUnverified: boolean;
}

async function screen(deps: AbuseDeps, subject: BlockSubject, field: string, email: string | undefined): Promise<Screening> {
  const blocked = await matchBlock(deps, subject);
  if (blocked) throw clientBlocked(blocked);
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
  return screen(deps, { clientHash: caller.clientHash, email: input.contact_email, requester: input.requester }, 'contact_email', input.contact_email);
}

export async function screenMessage(deps: AbuseDeps, caller: Caller, input: MessageInput): Promise<Screening> {
  return screen(deps, { clientHash: caller.clientHash, email: input.reply_to, requester: input.from }, 'reply_to', input.reply_to);
}

/**
 * First statement of the submission transaction. On PostgreSQL it takes transaction-scoped
 * advisory locks on this client's Idempotency-Key and on the dedupe key, so a twin request on any
 * instance waits here until this one commits, then sees it. (SQLite runs one transaction at a time.)
 * Always the same order — key, then description — so two submissions cannot deadlock.
 */
export async function lockSubmission(db: Db, deps: AbuseDeps, caller: Caller, dedupeKey: string): Promise<void> {
  const keys = caller.idempotencyKey !== undefined ? [`idem:${caller.clientHash}:${caller.idempotencyKey}`] : [];
  await lockKeys(db, deps.store.dialect, [...keys, `dup:${dedupeKey}`]);
}

/** Returns the stored response for this client's key and payload, or null; 422 for another payload. */
export async function findReplay(db: Db, deps: AbuseDeps, caller: Caller, requestHash: string): Promise<StoredResponse | null> {
  return findStoredResponse(db, deps, caller, requestHash);
}

/** Throws 409 duplicate_task when the same client or contact e-mail sent the same task within the window. */
export async function assertNotDuplicate(db: Db, deps: AbuseDeps, caller: Caller, input: TaskInput, dedupeKey: string): Promise<void> {
  const existing = await findDuplicate(db, deps, caller, input.contact_email, dedupeKey);
  if (existing !== null) throw duplicateTask(existing, deps.config.limits.duplicateWindowHours);
}

/** Takes one unit of each quota, in a fixed order (so concurrent transactions cannot deadlock). */
async function consume(db: Db, deps: AbuseDeps, caller: Caller, set: QuotaSet, quotas: Quota[], what: string): Promise<Standing[]> {
  const now = deps.clock.now();
  const standings: Standing[] = [];
  for (const quota of quotas) {
    const window = windowOf(quota.window, now);
    const used = await consumeCounter(db, counterKey(quota, caller.clientHash, window), quota.limit, counterExpiry(window));
    if (used === null) throw rateLimited(quota, window, now, set.policy, quota.name === 'status_poll_per_day' ? 'tasks with delivery status_poll' : what);
    standings.push({ limit: quota.limit, used, resetsAt: window.resetsAt });
  }
  return standings;
}

/** Inside the write transaction: uses one unit of every quota or throws 429. Returns RateLimit-* headers. */
export async function consumeTaskQuota(db: Db, deps: AbuseDeps, caller: Caller, input: TaskInput): Promise<Record<string, string>> {
  const { task, statusPoll } = deps.abuse.policies;
  const quotas = input.delivery === 'status_poll' ? [...task.quotas, statusPoll] : task.quotas;
  const standings = await consume(db, deps, caller, task, quotas, 'task submissions');
  const now = deps.clock.now();
  const cap = windowOf('day', now);
  const capUsed = await consumeCounter(db, dailyTaskCapKey(now), deps.config.limits.dailyTaskCap, counterExpiry(cap));
  if (capUsed === null) throw capacityReached(now, task.policy);
  // The status_poll quota is refused with its own 429; the headers describe the published policy.
  return { 'RateLimit-Policy': task.policy, ...rateLimitHeaders(standings.slice(0, task.quotas.length), now) };
}

/** RateLimit-* headers of the task quotas without using any (for idempotent replays). */
export async function taskQuotaHeaders(db: Db, deps: AbuseDeps, caller: Caller): Promise<Record<string, string>> {
  const { task } = deps.abuse.policies;
  const now = deps.clock.now();
  const windows = task.quotas.map((q) => windowOf(q.window, now));
  const keys = task.quotas.map((q, i) => counterKey(q, caller.clientHash, windows[i]!));
  const counts = await readCounters(db, keys);
  const standings = task.quotas.map((q, i) => ({ limit: q.limit, used: counts.get(keys[i]!) ?? 0, resetsAt: windows[i]!.resetsAt }));
  return { 'RateLimit-Policy': task.policy, ...rateLimitHeaders(standings, now) };
}

export async function consumeMessageQuota(db: Db, deps: AbuseDeps, caller: Caller): Promise<Record<string, string>> {
  const { message } = deps.abuse.policies;
  const standings = await consume(db, deps, caller, message, message.quotas, 'messages');
  return { 'RateLimit-Policy': message.policy, ...rateLimitHeaders(standings, deps.clock.now()) };
}

/** Inside the write transaction: remembers the response for Idempotency-Key replays. */
export async function saveReplay(db: Db, deps: AbuseDeps, caller: Caller, requestHash: string, response: StoredResponse): Promise<void> {
  await storeResponse(db, deps, caller, requestHash, response);
}
