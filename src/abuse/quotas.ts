import { iso, nextUtcMidnight, utcDay } from '../domain/time.js';
import { consumeCounter, consumeCounterBlock, incrementCounter, readCounters } from '../store/abuse-control/counters-repo.js';
import type { Db } from '../store/db.js';
import type { AbuseDeps } from './context.js';

/**
 * The global daily caps (DAILY_TASK_CAP, DAILY_EMAIL_CAP), counted in the store so every instance
 * shares them; they reset at 00:00 UTC.
 */
export function dailyTaskCapKey(now: Date): string {
  return `cap:tasks:${utcDay(now)}`;
}

export function dailyEmailCapKey(now: Date): string {
  return `cap:emails:${utcDay(now)}`;
}

/** When a day's e-mail cap counter expires: a day after that UTC day ends. */
function emailCapExpiry(day: Date): string {
  return iso(new Date(nextUtcMidnight(day).getTime() + 86_400_000));
}

export interface CapUse {
  used: number;
  cap: number;
  remaining: number;
}

export interface DailyCapUsage {
  tasks: CapUse;
  emails: CapUse;
  /** When both caps reset (next 00:00 UTC). */
  resets_at: string;
}

export async function dailyCapUsage(deps: Pick<AbuseDeps, 'config' | 'clock' | 'store'>): Promise<DailyCapUsage> {
  const now = deps.clock.now();
  const { dailyTaskCap, dailyEmailCap } = deps.config.limits;
  const counts = await readCounters(deps.store.db, [dailyTaskCapKey(now), dailyEmailCapKey(now)]);
  const use = (used: number, cap: number): CapUse => ({ used, cap, remaining: Math.max(0, cap - used) });
  return {
    tasks: use(counts.get(dailyTaskCapKey(now)) ?? 0, dailyTaskCap),
    emails: use(counts.get(dailyEmailCapKey(now)) ?? 0, dailyEmailCap),
    resets_at: iso(nextUtcMidnight(now)),
  };
}

/**
 * Takes one unit of today's e-mail cap; false when it is used up (the mail then waits for the
 * next UTC day). The outbox worker calls this for every mail it is about to send.
 */
export async function consumeEmailCap(db: Db, deps: Pick<AbuseDeps, 'config' | 'clock'>, limit = deps.config.limits.dailyEmailCap): Promise<boolean> {
  const now = deps.clock.now();
  const count = await consumeCounter(db, dailyEmailCapKey(now), limit, emailCapExpiry(now));
  return count !== null;
}

/**
 * Takes `units` of today's e-mail cap at once if they all fit under `limit` (the mail worker's
 * blocks, mail/cap-units.ts); false takes nothing.
 */
export async function consumeEmailCapBlock(db: Db, now: Date, units: number, limit: number): Promise<boolean> {
  return consumeCounterBlock(db, dailyEmailCapKey(now), units, limit, emailCapExpiry(now));
}

/** Gives back units of the e-mail cap taken on `day`'s date and not used (a failed send, a block's rest). */
export async function returnEmailCap(db: Db, day: Date, units: number): Promise<void> {
  if (units <= 0) return;
  await incrementCounter(db, dailyEmailCapKey(day), emailCapExpiry(day), -units);
}

/** Units of today's e-mail cap already used. */
export async function emailCapUsed(db: Db, now: Date): Promise<number> {
  const key = dailyEmailCapKey(now);
  return (await readCounters(db, [key])).get(key) ?? 0;
}
