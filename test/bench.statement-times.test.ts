import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type StatementTime, summarizeStatements } from '../bench/statements.js';
import { SQLITE_DRIVER_PATH } from '../src/store/sqlite-driver.js';

const ROOT = path.resolve(import.meta.dirname, '..');
const PRELOAD = path.join(ROOT, 'bench', 'statement-times.mjs');

/** A program that runs a few statements through the service's SQLite driver, as the service would. */
const PROGRAM = `
const Database = (await import('node:module')).createRequire(import.meta.url)(process.env.TEST_SQLITE_DRIVER);
const db = new Database(':memory:');
db.prepare('create table t (id integer primary key, v text)').run();
const insert = db.prepare('insert into t (v) values (?)');
for (let i = 0; i < 5; i++) insert.run('x' + i);
db.prepare('select v from t where id = ?').get(1);
db.prepare('select v from t').all();
`;

describe('bench/statement-times.mjs (npm run bench:profile on SQLite)', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  const run = (env: Record<string, string>) =>
    spawnSync(process.execPath, ['--import', PRELOAD, '--input-type=module', '-e', PROGRAM], {
      cwd: ROOT,
      encoding: 'utf8',
      env: { ...process.env, TEST_SQLITE_DRIVER: SQLITE_DRIVER_PATH, ...env },
    });

  it('writes each statement text with its runs and time when the process exits', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'hts-statements-'));
    dirs.push(dir);
    const file = path.join(dir, 'times.json');
    const result = run({ BENCH_STATEMENT_TIMES: file, BENCH_SQLITE_DRIVER: SQLITE_DRIVER_PATH });
    expect(result.status, result.stderr).toBe(0);
    const times = JSON.parse(readFileSync(file, 'utf8')) as StatementTime[];
    const bySql = new Map(times.map((t) => [t.sql, t]));
    expect(bySql.get('insert into t (v) values (?)')?.runs).toBe(5);
    expect(bySql.get('select v from t where id = ?')?.runs).toBe(1);
    expect(bySql.get('select v from t')?.runs).toBe(1);
    // The probe the preload prepares to find the statements' prototype is never run.
    expect(bySql.has('select 1')).toBe(false);
    for (const t of times) expect(t.ms).toBeGreaterThanOrEqual(0);
    // Largest first.
    expect(times.map((t) => t.ms)).toEqual([...times.map((t) => t.ms)].sort((a, b) => b - a));
  });

  it('changes nothing without its variables', () => {
    const result = run({ BENCH_STATEMENT_TIMES: '', BENCH_SQLITE_DRIVER: '' });
    expect(result.status, result.stderr).toBe(0);
  });

  it('prints the statements by time with their share of the busy time', () => {
    const lines = summarizeStatements(
      [
        { sql: 'select  1\n from t', runs: 4, ms: 2 },
        { sql: 'commit', runs: 2, ms: 8 },
      ],
      100,
    );
    expect(lines[0]).toBe("SQLite statements: 0.01 s, 10.0% of the event loop's busy time; by time:");
    expect(lines[1]).toMatch(/^ +8\.0% +2 runs +4000 µs {2}commit$/);
    expect(lines[2]).toMatch(/^ +2\.0% +4 runs +500 µs {2}select 1 from t$/);
  });
});
