import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '..');
const bin = (name: string) => path.join(ROOT, 'node_modules', '.bin', name);

/**
 * The benchmark is not a test (its targets depend on the machine and its load): this only proves
 * `npm run bench` still runs every scenario to the end and prints its report, one second per run,
 * one run per scenario.
 */
describe('npm run bench (smoke)', () => {
  it('runs every scenario briefly and prints the report', () => {
    const build = spawnSync('npm', ['run', '-s', 'build'], { cwd: ROOT, encoding: 'utf8' });
    expect(build.status, build.stderr).toBe(0);
    const run = spawnSync(bin('tsx'), ['bench/run.ts'], {
      cwd: ROOT,
      encoding: 'utf8',
      timeout: 480_000,
      env: { ...process.env, BENCH_SECONDS: '1', BENCH_ROUNDS: '1', BENCH_CONNECTIONS: '10', BENCH_WAITERS: '40', BENCH_CROWD: '40', BENCH_CROWD_WAIT: '1' },
    });
    const out = run.stdout;
    expect(run.error).toBeUndefined();
    // Completed: either verdict, never a crash (a crash exits without one).
    expect(out, run.stderr).toMatch(/all targets met|missed: /);
    for (const line of [
      /\[SQLite\] status read: median \d+\.\d+× bare/,
      /\[SQLite\] durable submissions: median \d+\/s/,
      /\[SQLite\] long-poll wake-up/,
      /\[SQLite\] peak RSS/,
      /\[SQLite\] crowd reads: .* the service's own \d+\.\d+×/,
      /\[SQLite\] crowd submissions: .* = \d+\.\d+×/,
      /\[SQLite\] crowd long-polls: .* health probe p50 [\d.]+ ms, p99 [\d.]+ ms/,
      /\[SQLite\] default-path submissions \(e-mail, distinct addresses, SMTP sink\): median \d+\/s/,
      /\[SQLite\] default-path .* status read during the flood p99 [\d.]+ ms .* console queue page during the flood p99 [\d.]+ ms/,
      /\[SQLite\] default path, the median run: CPU per submission: machine \d+ µs = service \d+ µs .* the event loops \d+\/s/,
      /\[SQLite\] default path, the median run: .* the busiest event loop on a core \d+ %, waiting for one \d+ %, asleep \d+ %, the load generator on a core \d+ %/,
    ]) {
      expect(out).toMatch(line);
    }
    if (process.env.TEST_POSTGRES_URL) {
      expect(out).toMatch(/\[PostgreSQL, one instance\] status read: median/);
      expect(out).toMatch(/\[PostgreSQL, one instance\] long-poll wake-up/);
      expect(out).toMatch(/\[PostgreSQL, two instances\] durable submissions: median/);
      expect(out).toMatch(/\[PostgreSQL, one instance\] crowd long-polls: /);
      expect(out).toMatch(/\[PostgreSQL, two instances\] default-path submissions /);
    }
  }, 540_000);
});
