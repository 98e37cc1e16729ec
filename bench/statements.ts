/** What bench/statement-times.mjs measured in the service, and how `npm run bench:profile` prints it. */

/** A statement's time as bench/statement-times.mjs writes it. */
export interface StatementTime {
  sql: string;
  runs: number;
  ms: number;
}

/** The statements by time, with their share of `busyMs` (the event loop's busy time). */
export function summarizeStatements(times: StatementTime[], busyMs: number, top = 15): string[] {
  const total = times.reduce((sum, t) => sum + t.ms, 0);
  const share = (ms: number) => `${((100 * ms) / busyMs).toFixed(1).padStart(5)}%`;
  const lines = [`SQLite statements: ${(total / 1000).toFixed(2)} s, ${share(total).trim()} of the event loop's busy time; by time:`];
  for (const t of [...times].sort((a, b) => b.ms - a.ms).slice(0, top)) {
    const perRun = `${Math.round((1000 * t.ms) / t.runs)} µs`.padStart(9);
    lines.push(`  ${share(t.ms)} ${String(t.runs).padStart(7)} runs ${perRun}  ${t.sql.replace(/\s+/g, ' ').slice(0, 110)}`);
  }
  return lines;
}
