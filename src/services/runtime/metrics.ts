import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import { ALL_STATUSES, OPEN_STATUSES } from '../../domain/tasks/task.js';
import type { Clock } from '../../domain/time.js';
import type { Store } from '../../store/db.js';
import { pendingSummary } from '../../store/delivery/leased-queue.js';
import { countTasksByStatus, oldestOpenTaskCreatedAt } from '../../store/tasks/tasks-repo.js';

/** An outbox whose depth and oldest pending row the metrics report (mail today; webhooks when they land). */
export interface OutboxSource {
  /** The `outbox` label: `mail`, `webhooks`. */
  name: string;
  pending(): Promise<{ depth: number; oldest: string | null }>;
}

/** Statuses of tasks still waiting on the operator. */
// OPEN_STATUSES (domain) includes the retired statuses imported tasks may still be in (docs/import.md).

/** Latency buckets in seconds: most requests take milliseconds, long-polls up to a minute. */
const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

/**
 * The Prometheus metrics of one application: its own registry (never prom-client's global one,
 * so several apps in one process — tests, two instances — do not mix), the counters the HTTP layer
 * and the workers update, and gauges computed at scrape time by cheap store queries.
 */
export class Metrics {
  readonly registry = new Registry();
  readonly httpRequests: Counter<'method' | 'route' | 'status'>;
  readonly httpDuration: Histogram<'method' | 'route' | 'status'>;
  /** Store faults (store/faults.ts) seen by requests, readiness checks, retention and scrapes. */
  readonly storeErrors: Counter;
  /** Time-stamp requests to the TSA by outcome (ok, failed): a TSA fault delays time-stamps only. */
  readonly timestamps: Counter;
  /** Submissions committed per transaction (group commit, services/tasks/tasks.ts). */
  readonly submissionBatch: Histogram;
  /**
   * Long-polls currently held open: either read at scrape time from the holder's count
   * (countHeldLongPolls), or incremented on hold and decremented on release by the long-poll code.
   */
  readonly heldLongPolls: Gauge;
  private readonly tasks: Gauge<'status'>;
  private readonly queueAge: Gauge;
  private readonly outboxDepth: Gauge<'outbox'>;
  private readonly outboxAge: Gauge<'outbox'>;
  private readonly outboxes: OutboxSource[] = [];
  private heldLongPollCount: (() => number) | undefined;

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
  ) {
    const registers = [this.registry];
    this.httpRequests = new Counter({
      name: 'hts_http_requests_total',
      help: 'HTTP requests by method, route template and status code',
      labelNames: ['method', 'route', 'status'],
      registers,
    });
    this.httpDuration = new Histogram({
      name: 'hts_http_request_duration_seconds',
      help: 'HTTP request latency by method, route template and status code',
      labelNames: ['method', 'route', 'status'],
      buckets: LATENCY_BUCKETS,
      registers,
    });
    this.storeErrors = new Counter({ name: 'hts_store_errors_total', help: 'Errors raised by the store (driver errors, lost connections)', registers });
    this.timestamps = new Counter({
      name: 'hts_log_timestamps_total',
      help: 'RFC 3161 time-stamp requests for log checkpoints, by outcome',
      labelNames: ['outcome'],
      registers,
    });
    this.submissionBatch = new Histogram({
      name: 'hts_submission_batch_size',
      help: 'Submissions committed together in one transaction (group commit)',
      buckets: [1, 2, 4, 8, 16, 32, 64, 128, 256],
      registers,
    });
    this.heldLongPolls = new Gauge({ name: 'hts_long_polls_held', help: 'Long-poll requests currently held open', registers });

    this.tasks = new Gauge({ name: 'hts_tasks', help: 'Tasks by status', labelNames: ['status'], registers });
    this.queueAge = new Gauge({
      name: 'hts_open_queue_oldest_age_seconds',
      help: 'Age of the oldest task still waiting on the operator (submitted or accepted); 0 when none',
      registers,
    });
    this.outboxDepth = new Gauge({ name: 'hts_outbox_pending', help: 'Pending rows per outbox', labelNames: ['outbox'], registers });
    this.outboxAge = new Gauge({
      name: 'hts_outbox_oldest_pending_age_seconds',
      help: 'Age of the oldest pending row per outbox; 0 when none',
      labelNames: ['outbox'],
      registers,
    });
    this.addOutbox({ name: 'mail', pending: () => pendingSummary(store.db, 'outbox') });
    // Process metrics: CPU, memory, handles, GC and event loop lag (nodejs_eventloop_lag_*).
    collectDefaultMetrics({ register: this.registry });
  }

  /** Registers another outbox (the webhook outbox registers itself here when it is built). */
  addOutbox(source: OutboxSource): void {
    this.outboxes.push(source);
  }

  /** Reads the held long-polls from their holder at each scrape (e.g. `() => taskWaits.size`). */
  countHeldLongPolls(count: () => number): void {
    this.heldLongPollCount = count;
  }

  /** The Prometheus text exposition of every metric, store-backed gauges read first. */
  async render(): Promise<string> {
    if (this.heldLongPollCount) this.heldLongPolls.set(this.heldLongPollCount());
    await this.readStore();
    return this.registry.metrics();
  }

  /**
   * The scrape-time gauges, from cheap aggregate queries. Each query that fails is counted as a
   * store error and leaves its gauge at the last value: the metrics must still render during an
   * outage, which is when an operator reads them.
   */
  private async readStore(): Promise<void> {
    const db = this.store.db;
    await this.fromStore(async () => {
      const counts = await countTasksByStatus(db);
      for (const status of ALL_STATUSES) this.tasks.set({ status }, counts[status] ?? 0);
    });
    await this.fromStore(async () => this.queueAge.set(this.ageSeconds(await oldestOpenTaskCreatedAt(db, OPEN_STATUSES))));
    for (const source of this.outboxes) {
      await this.fromStore(async () => {
        const pending = await source.pending();
        this.outboxDepth.set({ outbox: source.name }, pending.depth);
        this.outboxAge.set({ outbox: source.name }, this.ageSeconds(pending.oldest));
      });
    }
  }

  private async fromStore(query: () => Promise<void>): Promise<void> {
    try {
      await query();
    } catch {
      this.storeErrors.inc();
    }
  }

  private ageSeconds(oldest: string | null): number {
    return oldest === null ? 0 : Math.max(0, (this.clock.now().getTime() - Date.parse(oldest)) / 1000);
  }
}
