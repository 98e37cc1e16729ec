import SQLite from 'better-sqlite3';
import pg from 'pg';

/** Network failures of the connection to PostgreSQL (the server went away or never answered). */
const CONNECTION_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EHOSTUNREACH']);

/**
 * Whether an error came from the store (a driver error or a lost connection) rather than from a
 * rule: the metrics count these as store errors. The dialect details live here, with the store.
 */
export function isStoreFault(error: unknown): boolean {
  if (error instanceof SQLite.SqliteError || error instanceof pg.DatabaseError) return true;
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && CONNECTION_CODES.has(code)) return true;
  return /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error/i.test(error.message);
}
