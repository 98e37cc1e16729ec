import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { migrate, openStore } from '../src/store/db.js';
import { SQLITE_DRIVER, SQLite, sqliteDriverFor } from '../src/store/sqlite-driver.js';
import { postJson, useTestApp, validTask } from './support/app.js';

/**
 * The SQLite driver follows the Node.js that runs the service (src/store/sqlite-driver.ts,
 * docs/node24.md): better-sqlite3 13 (Node-API) wherever Node-API 10 is there (every Node 24),
 * better-sqlite3 12 elsewhere (Node 20). Runs on whichever Node runs vitest: .ci/run runs it on
 * both.
 */

const nodeMajor = Number(process.versions.node.split('.')[0]);

describe('the SQLite driver for this Node.js', () => {
  it('is better-sqlite3 13 where Node-API 10 is there and 12 elsewhere', () => {
    expect(sqliteDriverFor('9')).toBe('better-sqlite3');
    expect(sqliteDriverFor('10')).toBe('better-sqlite3-napi');
    expect(sqliteDriverFor('11')).toBe('better-sqlite3-napi');
    expect(sqliteDriverFor(undefined)).toBe('better-sqlite3');
    expect(SQLITE_DRIVER).toBe(sqliteDriverFor(process.versions.napi));
    if (nodeMajor >= 24) expect(SQLITE_DRIVER).toBe('better-sqlite3-napi');
    if (nodeMajor === 20) expect(SQLITE_DRIVER).toBe('better-sqlite3');
    const { version } = createRequire(import.meta.url)(`${SQLITE_DRIVER}/package.json`) as { version: string };
    expect(version.split('.')[0]).toBe(SQLITE_DRIVER === 'better-sqlite3-napi' ? '13' : '12');
  });

  it('opens a store file, writes, and reads it back after reopening', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'hts-driver-'));
    try {
      const url = `sqlite:${path.join(dir, 'service.db')}`;
      const store = openStore(url);
      await migrate(store);
      expect(store.sqlite).toBeInstanceOf(SQLite);
      store.sqlite?.prepare('insert into settings (key, value) values (?, ?)').run('driver.check', SQLITE_DRIVER);
      await store.close();
      const again = openStore(url);
      try {
        expect(again.sqlite?.prepare('select value from settings where key = ?').get('driver.check')).toEqual({ value: SQLITE_DRIVER });
      } finally {
        await again.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('keeps a process alive while the garbage collector finalizes thousands of statements', () => {
    // better-sqlite3 12 on Node 24 ends such a process within a second: "Assertion failed: (env) !=
    // nullptr" in RemoveEnvironmentCleanupHook, from Statement::~Statement (exit code 134).
    const script = `
      const SQLite = require(${JSON.stringify(SQLITE_DRIVER)});
      const db = new SQLite(':memory:');
      db.exec('create table t (n integer)');
      for (let i = 0; i < 2000; i += 1) db.prepare('select ' + i + ' + n from t').all();
      const garbage = [];
      for (let i = 0; i < 200000; i += 1) garbage.push({ i });
      process.stdout.write(String(db.prepare('select count(*) as c from t').get().c + garbage.length));
    `;
    const child = spawnSync(process.execPath, ['-e', script], { cwd: process.cwd(), encoding: 'utf8', timeout: 20_000 });
    expect({ status: child.status, signal: child.signal, stdout: child.stdout, stderr: child.stderr }).toEqual({
      status: 0,
      signal: null,
      stdout: '200000',
      stderr: '',
    });
  });
});

describe('one place loads the SQLite driver', () => {
  it('is src/store/sqlite-driver.ts: no other module of src/, test/ or bench/ loads better-sqlite3 itself', () => {
    // Another module that loaded 'better-sqlite3' would load version 12 on Node 24 too (compiled
    // for Node 20 by npm ci, so it would not even load there).
    const loads = /(?:^|\n)\s*import\s+(?!type\b)[^;]*?from\s+['"]better-sqlite3(?:-napi)?['"]|require\(\s*['"]better-sqlite3(?:-napi)?['"]\s*\)/;
    const offenders = ['src', 'test', 'bench']
      .flatMap((dir) => readdirSync(dir, { recursive: true, encoding: 'utf8' }).map((file) => path.join(dir, file)))
      .filter((file) => /\.(?:ts|mts|js|mjs|cjs)$/.test(file) && file !== path.join('src', 'store', 'sqlite-driver.ts'))
      .filter((file) => loads.test(readFileSync(file, 'utf8')));
    expect(offenders).toEqual([]);
  });
});

describe('a task through the real app on this Node.js (SQLite)', () => {
  const t = useTestApp({ store: 'sqlite' });

  it('is submitted and read back as stored', async () => {
    const submitted = await postJson(`${t.url}/api/v1/tasks`, validTask({ description: 'Check the driver on this Node.' }));
    expect(submitted.status).toBe(202);
    const { task_id } = (await submitted.json()) as { task_id: string };
    const read = await fetch(`${t.url}/api/v1/tasks/${task_id}`);
    expect(read.status).toBe(200);
    expect(await read.json()).toMatchObject({ task_id, status: 'submitted', description: 'Check the driver on this Node.' });
  });
});
