import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppError } from '../src/domain/errors.js';
import { isStoreFault } from '../src/store/faults.js';
import { SQLite } from '../src/store/sqlite-driver.js';
import { adminGet } from './operator.support.js';
import { startTestApp, type TestApp } from './support/app.js';

describe('GET /metrics while the store does not answer', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await t.app.close();
  });

  it('still renders (never a 500), keeps the last values and counts the store errors', async () => {
    const before = await (await adminGet(t, '/metrics')).text();
    expect(before).toMatch(/^hts_store_errors_total 0$/m);
    await t.store.close();

    const health = await fetch(`${t.url}/api/v1/health`);
    expect(health.status).toBe(503);
    const res = await adminGet(t, '/metrics');
    expect(res.status).toBe(200);
    const body = await res.text();
    const errors = Number(/^hts_store_errors_total (\d+)$/m.exec(body)?.[1]);
    // The failed health ping, and each scrape-time query that failed.
    expect(errors).toBeGreaterThanOrEqual(2);
    expect(body).toMatch(/^hts_tasks\{status="submitted"\} 0$/m);
  });
});

describe('isStoreFault (what counts as a store error)', () => {
  it('counts driver errors and lost connections, not rule failures', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    expect(isStoreFault(refused)).toBe(true);
    expect(isStoreFault(Object.assign(new pg.DatabaseError('terminating connection due to administrator command', 0, 'error'), { code: '57P01' }))).toBe(true);
    expect(isStoreFault(new SQLite.SqliteError('database is locked', 'SQLITE_BUSY'))).toBe(true);
    expect(isStoreFault(new Error('Connection terminated unexpectedly'))).toBe(true);
    expect(isStoreFault(new AppError('validation_failed', 'bad'))).toBe(false);
    expect(isStoreFault(new Error('something else'))).toBe(false);
    expect(isStoreFault('a string')).toBe(false);
  });
});
