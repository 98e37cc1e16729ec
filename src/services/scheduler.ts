import type { Logger } from 'pino';

/**
 * The generic job loop behind every outbox worker (mail today, webhooks next): poll for a due job,
 * claim it, run it, repeat until none is due; wake early when a job is queued in this process;
 * on stop, wait for the job in flight and give back a claimed job not yet started. What a job is,
 * how it is claimed and what running it means belong to the caller (mail: services/mail-worker.ts
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
  let running: Promise<void> | undefined;
  let again = false;
  let stopped = false;

  function schedule(ms: number): void {
    if (stopped) return;
    if (timer) clearTimeout(timer);
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

  /** Runs due jobs until none is left (or the scheduler stops). */
  async function drain(): Promise<void> {
    try {
      while (!stopped) {
        const job = await options.claim();
        if (job === undefined) return;
        if (stopped) {
          await options.release(job);
          return;
        }
        try {
          await options.run(job);
        } catch (error) {
          // A store error mid-run: hand the job back now rather than when its lease runs out.
          await options.release(job).catch(() => undefined);
          throw error;
        }
      }
    } catch (error) {
      // The store is unreachable or a query failed: log and try again at the next poll.
      log.error({ err: error }, `${options.name}: worker pass failed`);
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
