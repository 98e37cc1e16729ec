/**
 * Preloaded into the service by `npm run bench:profile` on SQLite (`node --import`): times every
 * SQLite statement the event loop runs and, when the process exits, writes per statement text its
 * runs and milliseconds to the file named by BENCH_STATEMENT_TIMES, as JSON. A CPU profile shows
 * better-sqlite3's time only as two frames (Kysely's executeQuery, and the COMMIT in
 * src/store/db.ts); this says which statements it was.
 *
 * BENCH_SQLITE_DRIVER is the path of the driver the service loads (src/store/sqlite-driver.ts
 * chooses it; loading the other build can crash the process). Plain JavaScript: it runs before
 * anything else, without tsx. Worker threads (the checkpointer) are left alone.
 */
import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { isMainThread } from 'node:worker_threads';

const file = process.env.BENCH_STATEMENT_TIMES;
const driverPath = process.env.BENCH_SQLITE_DRIVER;

if (file && driverPath && isMainThread) {
  const Database = createRequire(import.meta.url)(driverPath);
  const probe = new Database(':memory:');
  const Statement = Object.getPrototypeOf(probe.prepare('select 1'));
  probe.close();
  /** Per statement text: runs and nanoseconds. */
  const times = new Map();
  for (const method of ['run', 'all', 'get']) {
    const original = Statement[method];
    Statement[method] = function timed(...args) {
      const start = process.hrtime.bigint();
      try {
        return original.apply(this, args);
      } finally {
        const elapsed = process.hrtime.bigint() - start;
        const entry = times.get(this.source);
        if (entry) {
          entry.runs += 1;
          entry.ns += elapsed;
        } else {
          times.set(this.source, { runs: 1, ns: elapsed });
        }
      }
    };
  }
  process.on('exit', () => {
    const rows = [...times].map(([sql, { runs, ns }]) => ({ sql, runs, ms: Number(ns) / 1e6 }));
    writeFileSync(file, JSON.stringify(rows.sort((a, b) => b.ms - a.ms)));
  });
}
