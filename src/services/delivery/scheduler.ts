import type { Logger } from 'pino';

/**
 * The generic job loop behind every outbox worker (mail today, webhooks next): poll for a due job,
 * claim it, run it, repeat until none is due; wake early when a job is queued in this process;
 * on stop, wait for the job in flight and give back a claimed job not yet started. What a job is,
 * how it is claimed and what running it means belong to the caller (mail: services/delivery/mail-worker.ts
 * and mail/deliver.ts). Due times come from the store; real timers only pace the polling.
 */

/** An in-process nudge source (mail/wake.ts): the scheduler listens while it runs. */
export interface WakeSource {
  listen(wake: () => void): () => void;
}

export interface SchedulerOptions<J> {
  /** Prefix of the scheduler's log messages, e.g. "outbox". */
  name: string;
  log: Logger;
  /** How often to look for due jobs when idle. */
  pollMs: number;
  /** Delay between a wake and the look for jobs, so the enqueuing transaction has committed. */
  wakeDelayMs: number;
  /** Claims one due job, or undefined when none is due. */
  claim(): Promise<J | undefined>;
  /** Runs a claimed job; it records its own outcome (done, retry later, failed). */
  run(job: J): Promise<void>;
  /** Gives a claimed job back untouched (stopping, or the store failed mid-run). */
  release(job: J): Promise<void>;
  wake?: WakeSource;
  /** Jobs run at once (default 1): each slot claims its next job as soon as it is free. */
  concurrency?: number;
  /**
   * Keeps a running job's claim alive: `renew` is called every `everyMs` while the job runs, so the
   * claim's lease can be short and a dead worker's job is free for another within seconds.
   */
  heartbeat?: { everyMs: number; renew(job: J): Promise<unknown> };
}

export interface Scheduler {
  /** Stops polling and waits for the job in flight; nothing is left half-done. */
  stop(): Promise<void>;
}

/** Delay before attempt n+1 after n failed attempts: base, 2·base, 4·base …, at most max. */
export function retryDelayMs(failedAttempts: number, settings: { retryBaseMs: number; retryMaxMs: number }): number {
  return Math.min(settings.retryMaxMs, settings.retryBaseMs * 2 ** Math.max(0, failedAttempts - 1));
}

export function startScheduler<J>(options: SchedulerOptions<J>): Scheduler {
  const { log } = options;
  let timer: NodeJS.Timeout | undefined;
  /** When the pending timer fires (performance.now()). */
  let timerDue = 0;
  let running: Promise<void> | undefined;
  let again = false;
  let stopped = false;

  /**
   * Looks for jobs in `ms`, or sooner if a look is already due sooner. A wake never puts off a look
   * already scheduled: under a flood of enqueues, each wake used to restart the wake delay, so the
   * look never came while the flood lasted and the outbox sent nothing until it ended.
   */
  function schedule(ms: number): void {
    if (stopped) return;
    const due = performance.now() + ms;
    if (timer) {
      if (timerDue <= due) return;
      clearTimeout(timer);
    }
    timerDue = due;
    timer = setTimeout(() => void tick(), ms);
  }

  async function tick(): Promise<void> {
    timer = undefined;
    if (running) {
      again = true;
      return;
    }
    running = drain();
    await running;
    running = undefined;
    schedule(again ? 0 : options.pollMs);
    again = false;
  }

  const concurrency = Math.max(1, options.concurrency ?? 1);

  /** Runs due jobs, up to `concurrency` at once, until none is left (or the scheduler stops). */
  async function drain(): Promise<void> {
    const inFlight = new Set<Promise<void>>();
    let failed = false;
    const fail = (error: unknown) => {
      // The store is unreachable or a query failed: log and try again at the next poll.
      failed = true;
      log.error({ err: error }, `${options.name}: worker pass failed`);
    };
    try {
      while (!stopped && !failed) {
        while (inFlight.size >= concurrency) await Promise.race(inFlight);
        if (stopped || failed) break;
        const job = await options.claim();
        if (job === undefined) break;
        if (stopped) {
          await options.release(job);
          break;
        }
        const running: Promise<void> = runOne(job)
          .catch(fail)
          .finally(() => inFlight.delete(running));
        inFlight.add(running);
      }
    } catch (error) {
      fail(error);
    }
    await Promise.all(inFlight);
  }

  async function runOne(job: J): Promise<void> {
    const { heartbeat } = options;
    const beat = heartbeat
      ? setInterval(() => {
          heartbeat.renew(job).catch((error: unknown) => log.warn({ err: error }, `${options.name}: renewing a claim failed`));
        }, heartbeat.everyMs)
      : undefined;
    try {
      await options.run(job);
    } catch (error) {
      // A store error mid-run: hand the job back now rather than when its lease runs out.
      await options.release(job).catch(() => undefined);
      throw error;
    } finally {
      if (beat) clearInterval(beat);
    }
  }

  const stopWaking = options.wake?.listen(() => {
    if (stopped) return;
    if (running) again = true;
    else schedule(options.wakeDelayMs);
  });
  schedule(0);

  return {
    async stop() {
      if (stopped) return;
      stopped = true;
      stopWaking?.();
      if (timer) clearTimeout(timer);
      await running;
    },
  };
}
