import pg from 'pg';
import { describe, expect, it } from 'vitest';
import type { PublicTask } from '../src/domain/tasks/schemas.js';
import { CHANGE_CHANNEL } from '../src/store/change-feed.js';
import { PublicTaskCache } from '../src/store/tasks/task-cache.js';
import { readTask } from './longpoll.support.js';
import { patchOk, submit } from './operator.support.js';
import { STORES, type TestApp, useTestApp } from './support/app.js';

/**
 * Terminates the LISTEN backends of the test's own database, waits until they are gone, and at
 * once (before any reconnection, which waits at least 50 ms) changes the task as another instance
 * would: a notification sent now reaches no one on the cut connection.
 */
async function cutListenAndChange(t: TestApp, taskId: string): Promise<number> {
  const admin = new pg.Client({ connectionString: t.config.databaseUrl });
  await admin.connect();
  try {
    const result = await admin.query(
      "select pg_terminate_backend(pid, 5000) as done from pg_stat_activity where datname = current_database() and query like 'LISTEN%' and pid <> pg_backend_pid()",
    );
    await admin.query("update tasks set status = 'accepted' where id = $1", [taskId]);
    await admin.query('select pg_notify($1, $2)', [CHANGE_CHANNEL, JSON.stringify({ k: 't', t: taskId })]);
    return result.rowCount ?? 0;
  } finally {
    await admin.end();
  }
}

describe.runIf(STORES.includes('postgres'))('status read cache when the LISTEN connection is lost (PostgreSQL)', () => {
  const a = useTestApp({ store: 'postgres' });
  const b = useTestApp(() => ({ shareDatabaseWith: a }));

  it("never serves a stale task: a change made right after A's LISTEN connection was cut is read by A, and B's later change too", async () => {
    await expect.poll(() => a.deps.changes.connected && b.deps.changes.connected).toBe(true);
    const id = await submit(b);
    const cached = JSON.parse((await readTask(a, id)).text) as { status: string };
    expect(cached.status).toBe('submitted');
    await expect.poll(async () => (await readTask(a, id)).status === 200 && a.deps.taskCache.get(id) !== undefined).toBe(true);

    // The change is made while A's LISTEN connection is down: its notification never reaches A.
    expect(await cutListenAndChange(a, id)).toBeGreaterThanOrEqual(1);
    const read = await readTask(a, id);
    expect(read.status).toBe(200);
    expect(JSON.parse(read.text).status).toBe('accepted');

    // Once the LISTEN connection is back, the cache is used again, and still kept exact.
    await expect.poll(() => a.deps.changes.connected, { timeout: 15_000 }).toBe(true);
    await expect.poll(async () => (await readTask(a, id)).status === 200 && a.deps.taskCache.get(id) !== undefined).toBe(true);
    await patchOk(b, id, { status: 'delivered', operator_notes: 'Done: the shop opens at 8.' });
    await expect.poll(async () => JSON.parse((await readTask(a, id)).text).status, { timeout: 2000, interval: 0 }).toBe('delivered');
  });
});

describe('status read cache never keeps what may be stale', () => {
  const task = (status: string) => ({ task_id: 'task-1', status, status_history: [] }) as unknown as PublicTask;
  const deferred = () => {
    let resolve: (value: PublicTask) => void = () => undefined;
    const promise = new Promise<PublicTask>((r) => (resolve = r));
    return { promise, resolve };
  };

  it('bypasses and drops everything while the change feed is disconnected', async () => {
    let connected = true;
    const cache = new PublicTaskCache({ stamp: () => 0, usable: () => connected });
    await cache.load('task-1', () => task('submitted'));
    expect(cache.get('task-1')?.status).toBe('submitted');
    connected = false;
    expect(cache.get('task-1')).toBeUndefined();
    expect(cache.count).toBe(0);
    await cache.load('task-1', () => task('accepted'));
    expect(cache.count).toBe(0);
    connected = true;
    expect(cache.get('task-1')).toBeUndefined();
  });

  it('does not keep a read that a change notification overtook, nor one that a reconnection overtook', async () => {
    const cache = new PublicTaskCache({ stamp: () => 0, usable: () => true });
    const slow = deferred();
    const loading = cache.load('task-1', () => slow.promise);
    cache.invalidate('task-1');
    slow.resolve(task('submitted'));
    expect((await loading)?.status).toBe('submitted');
    expect(cache.get('task-1')).toBeUndefined();

    const other = deferred();
    const loadingOther = cache.load('task-1', () => other.promise);
    cache.clear();
    other.resolve(task('submitted'));
    await loadingOther;
    expect(cache.get('task-1')).toBeUndefined();

    // A change of another task does not cost this one its entry.
    const third = deferred();
    const loadingThird = cache.load('task-1', () => third.promise);
    cache.invalidate('task-2');
    third.resolve(task('accepted'));
    await loadingThird;
    expect(cache.get('task-1')?.status).toBe('accepted');
  });

  it('drops an entry once the stamp moved (SQLite: any statement changing tasks)', async () => {
    const stamp = { count: 0 };
    const cache = new PublicTaskCache({ stamp: () => stamp.count, usable: () => true });
    await cache.load('task-1', () => task('submitted'));
    expect(cache.get('task-1')).toBeDefined();
    stamp.count += 1;
    expect(cache.get('task-1')).toBeUndefined();
    const moving = cache.load('task-1', () => {
      stamp.count += 1;
      return task('accepted');
    });
    await moving;
    expect(cache.get('task-1')).toBeUndefined();
  });

  it('keeps nothing for a task this instance is changing until the change comes back through the feed', async () => {
    const cache = new PublicTaskCache({ stamp: () => 0, usable: () => true });
    await cache.load('task-1', () => task('submitted'));
    cache.changing('task-1');
    expect(cache.get('task-1')).toBeUndefined();
    // A read between the change's publication and its commit sees the old row: not kept.
    await cache.load('task-1', () => task('submitted'));
    expect(cache.get('task-1')).toBeUndefined();
    cache.invalidate('task-1');
    await cache.load('task-1', () => task('accepted'));
    expect(cache.get('task-1')?.status).toBe('accepted');
  });

  it('a failing read leaves the cache usable', async () => {
    const cache = new PublicTaskCache({ stamp: () => 0, usable: () => true });
    await expect(cache.load('task-1', () => Promise.reject(new Error('store down')))).rejects.toThrow('store down');
    await cache.load('task-1', () => task('submitted'));
    expect(cache.get('task-1')?.status).toBe('submitted');
  });
});
