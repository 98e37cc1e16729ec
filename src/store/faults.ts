import { AppError } from '../domain/errors.js';

/**
 * Store faults: which errors mean "the store is not answering" (connection lost, timed out, disk
 * full, busy), as opposed to a bug. Those become 503 `service_unavailable` with Retry-After at
 * every door, are remembered for the health record, and never reveal internals to a caller.
 */

/** Seconds a client is told to wait after a store fault. */
export const STORE_RETRY_AFTER_SECONDS = 5;

/** How long a fault seen by a request keeps the health record failing (unless a probe succeeds later). */
const FAULT_MEMORY_MS = 15_000;

// PostgreSQL SQLSTATEs: connection exceptions (08…), shutdown/crash/starting (57P0x), too many
// connections, statement timeout or cancel, out of disk or memory (53…), lock timeout.
const PG_UNAVAILABLE = /^(08...|57P0[1-4]|57014|53...|55P03)$/;
const NODE_NET = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);
const SQLITE_UNAVAILABLE = /^SQLITE_(BUSY|LOCKED|FULL|IOERR|CANTOPEN|READONLY|NOMEM|PROTOCOL|NOLFS)/;
const PG_MESSAGES =
  /^(Connection terminated|timeout exceeded when trying to connect|Query read timeout|Client has encountered a connection error|Connection terminated due to connection timeout|The database connection is not open|Client was closed|Cannot use a pool after calling end|driver has already been destroyed)/;

/** A short, internal-free name of the fault ("SQLITE_FULL", "57P01", "ECONNREFUSED", "timeout"), or undefined for other errors. */
export function storeFaultReason(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const { code, message } = error as { code?: unknown; message?: unknown };
  if (typeof code === 'string') {
    if (PG_UNAVAILABLE.test(code) || NODE_NET.has(code)) return code;
    const sqlite = SQLITE_UNAVAILABLE.exec(code);
    if (sqlite) return code;
  }
  if (typeof message === 'string' && PG_MESSAGES.test(message)) return /timeout/i.test(message) ? 'timeout' : 'connection lost';
  // AggregateError (several addresses refused) and errors wrapped by a driver.
  const nested = (error as { errors?: unknown; cause?: unknown }).errors;
  if (Array.isArray(nested) && nested.length > 0) return storeFaultReason(nested[0]);
  const cause = (error as { cause?: unknown }).cause;
  return cause !== undefined && cause !== error ? storeFaultReason(cause) : undefined;
}

/**
 * Whether a failed statement may still have been applied: it went out and its answer never came
 * back (pg's client-side read timeout, the connection lost mid-query). The server may have
 * committed it, so sending it again could apply it twice. A fault before sending (refused, no
 * connection in time), a server-side cancel or termination, and every SQLite error leave nothing
 * applied.
 */
export function outcomeUnknown(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const { code, message } = error as { code?: unknown; message?: unknown };
  if (code === 'ECONNRESET' || code === 'EPIPE') return true;
  return typeof message === 'string' && /^(Query read timeout|Connection terminated unexpectedly)/.test(message);
}

/**
 * How long a fault keeps the health record failing even after a probe succeeded: on a full disk
 * the probe's one-row rewrite can still fit (SQLite reuses its WAL pages) while every submission
 * is refused, so readiness would tell a balancer to send writes to an instance refusing them all.
 * Short, so a store that really came back is healthy again within seconds.
 */
const FAULT_OUTLIVES_PROBE_MS = 3000;

/** What the store remembers of recent faults, for the health record. */
export class StoreFaults {
  private last: { reason: string; at: number; probedSince: boolean } | undefined;
  /** The health record's last write probe (services/runtime/health.ts), reused for a couple of seconds. */
  lastProbe: { at: number; failure: string | undefined } | undefined;

  record(reason: string, at = Date.now()): void {
    this.last = { reason, at, probedSince: false };
  }

  /** A probe wrote successfully after the fault: the store works again (see FAULT_OUTLIVES_PROBE_MS). */
  clear(before = Date.now()): void {
    if (this.last && this.last.at <= before) this.last.probedSince = true;
  }

  /** The reason of a fault seen in the last 15 s (3 s once a probe succeeded after it), if any. */
  recent(now = Date.now()): string | undefined {
    if (!this.last) return undefined;
    return now - this.last.at < (this.last.probedSince ? FAULT_OUTLIVES_PROBE_MS : FAULT_MEMORY_MS) ? this.last.reason : undefined;
  }
}

/**
 * A fault's reason as a client may read it: plain words, never the driver's code (SQLITE_BUSY,
 * 57P01, ECONNREFUSED), which names the store and its driver. The code stays in the log (every
 * door logs the error itself) and in the health record.
 */
function inWords(reason: string): string {
  if (/^(SQLITE_FULL|53100)$/.test(reason)) return 'out of space';
  if (/^(SQLITE_BUSY|SQLITE_LOCKED|55P03|53300)$/.test(reason)) return 'busy';
  if (/^(57014|ETIMEDOUT|timeout)$/.test(reason)) return 'timed out';
  if (/^57P0/.test(reason)) return 'restarting';
  return 'unreachable';
}

export function storeUnavailable(reason: string): AppError {
  return new AppError(
    'service_unavailable',
    `The service's store is not answering (${inWords(reason)}). Retry after ${STORE_RETRY_AFTER_SECONDS} seconds.`,
    { retry_after_seconds: STORE_RETRY_AFTER_SECONDS },
    { 'Retry-After': String(STORE_RETRY_AFTER_SECONDS) },
  );
}

/**
 * The 503 for an error that is a store fault (remembered in `faults`), or undefined for any other
 * error. Every door (REST, MCP, pages, console) maps unknown errors through this first.
 */
export function asStoreUnavailable(faults: Pick<StoreFaults, 'record'>, error: unknown): AppError | undefined {
  const reason = storeFaultReason(error);
  if (reason === undefined) return undefined;
  faults.record(reason);
  return storeUnavailable(reason);
}

/** Whether an error is a store fault (the metrics count these as store errors). */
export function isStoreFault(error: unknown): boolean {
  return storeFaultReason(error) !== undefined;
}
