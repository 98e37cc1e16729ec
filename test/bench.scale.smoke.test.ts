import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '..');

/**
 * `npm run bench:scale` is not a test (its targets depend on the machine and its load): this only
 * proves it seeds a small history, times every page and endpoint, and prints its verdict.
 */
describe('npm run bench:scale (smoke)', () => {
  it('seeds a small history, times every page and endpoint and prints the verdict', () => {
    const build = spawnSync('npm', ['run', '-s', 'build'], { cwd: ROOT, encoding: 'utf8' });
    expect(build.status, build.stderr).toBe(0);
    const run = spawnSync(path.join(ROOT, 'node_modules', '.bin', 'tsx'), ['bench/scale.ts'], {
      cwd: ROOT,
      encoding: 'utf8',
      timeout: 240_000,
      env: { ...process.env, BENCH_TASKS: '2000', BENCH_SAMPLES: '1', BENCH_COLD_SAMPLES: '1' },
    });
    const out = run.stdout;
    expect(run.error).toBeUndefined();
    expect(out, run.stderr).toMatch(/all targets met|missed: /);
    for (const line of [
      /seeded 2000 tasks \(\d+ due for erasure\) and 400 messages/,
      /\[SQLite\] start-up: \d+\.\d ms/,
      /\[SQLite\] console queue status=open&order=oldest: /,
      /\[SQLite\] console task page \(open\): /,
      /\[SQLite\] GET \/api\/v1\/admin\/stats: /,
      /\[SQLite\] GET \/metrics: /,
      /\[SQLite\] GET \/\.well-known\/human\.json \(cache cold\): /,
      /\[SQLite\] retention, per batch \(\d+ batches/,
      /coverage backfill \(migration 280\) over 2000 tasks: \d+ ms/,
      /\[SQLite\] GET \/api\/v1\/coverage: /,
      /\[SQLite\] POST \/api\/v1\/tasks\?dry_run=true: /,
    ]) {
      expect(out).toMatch(line);
    }
    if (process.env.TEST_POSTGRES_URL) expect(out).toMatch(/\[PostgreSQL\] GET \/api\/v1\/admin\/stats: /);
  }, 300_000);
});
