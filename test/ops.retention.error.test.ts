import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { runRetention } from '../src/services/runtime/retention.js';
import { findTask } from '../src/store/tasks/tasks-repo.js';
import { adminGet, type Json, patchOk, submit } from './operator.support.js';
import { STORES, TestClock, useTestApp } from './support/app.js';

describe('RETENTION_DAYS configuration', () => {
  it('refuses a value that is not a whole number of days, naming the variable', () => {
    expect(() => loadConfig({ RETENTION_DAYS: 'ninety' })).toThrow(/RETENTION_DAYS/);
    expect(() => loadConfig({ RETENTION_DAYS: '0' })).toThrow(/RETENTION_DAYS/);
    expect(() => loadConfig({ SENT_MAIL_RETENTION_DAYS: '-1' })).toThrow(/SENT_MAIL_RETENTION_DAYS/);
    expect(() => loadConfig({ RETENTION_INTERVAL_MINUTES: '0' })).toThrow(/RETENTION_INTERVAL_MINUTES/);
    expect(loadConfig({}).retention).toEqual({ days: 90, sentMailDays: 7, intervalMs: 3_600_000 });
  });
});

describe.each(STORES)('retention edge cases on %s', (store) => {
  const clock = new TestClock('2030-01-01T10:00:00.000Z');
  const t = useTestApp({ store, clock });

  it('shows no last run in the stats before the first', async () => {
    const stats = (await (await adminGet(t, '/api/v1/admin/stats')).json()) as Json;
    expect(stats.retention).toBeNull();
  });

  it.runIf(store === 'postgres')('skips the run while another instance holds the lock', async () => {
    const client = new pg.Client({ connectionString: t.config.databaseUrl });
    await client.connect();
    try {
      await client.query(`select pg_advisory_lock(hashtextextended('retention', 0))`);
      expect(await runRetention(t.deps)).toBeUndefined();
      await client.query(`select pg_advisory_unlock(hashtextextended('retention', 0))`);
      expect(await runRetention(t.deps)).toMatchObject({ erased_tasks: 0 });
    } finally {
      await client.end();
    }
  });

  it('does no batch once the process is stopping; the next run does the work', async () => {
    const id = await submit(t);
    await patchOk(t, id, { status: 'rejected', operator_notes: 'Out of area.' });
    clock.advance(200 * 86_400_000);
    expect(await runRetention(t.deps, { stopping: () => true })).toMatchObject({ erased_tasks: 0 });
    expect((await findTask(t.store.db, id))?.contact_email).not.toBeNull();
    expect(await runRetention(t.deps)).toMatchObject({ erased_tasks: 1 });
    expect((await findTask(t.store.db, id))?.contact_email).toBeNull();
  });

  it('runs twice at once without failing: one run or both complete, never an error', async () => {
    const runs = await Promise.all([runRetention(t.deps), runRetention(t.deps)]);
    expect(runs.filter((r) => r !== undefined).length).toBeGreaterThanOrEqual(1);
  });
});
