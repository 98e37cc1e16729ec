import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Change } from '../src/store/change-feed.js';
import { adminGet, patchOk, submit } from './operator.support.js';
import { postJson, STORES, type TestApp, useTestApp } from './support/app.js';

/** Collects what a feed tells, and waits for a change matching a predicate. */
function recorder(t: TestApp) {
  const seen: Change[] = [];
  const waiters: { match: (c: Change) => boolean; resolve: (c: Change) => void }[] = [];
  const unsubscribe = t.deps.changes.subscribe((change) => {
    seen.push(change);
    for (const w of waiters.splice(0)) {
      if (w.match(change)) w.resolve(change);
      else waiters.push(w);
    }
  });
  return {
    seen,
    unsubscribe,
    next(match: (c: Change) => boolean, timeoutMs = 3000): Promise<Change> {
      const already = seen.find(match);
      if (already) return Promise.resolve(already);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error('no matching change')), timeoutMs);
        waiters.push({ match, resolve: (c) => (clearTimeout(timer), resolve(c)) });
      });
    },
  };
}

const isTask = (id: string) => (c: Change) => c.kind === 'task' && c.taskId === id;

describe.each(STORES)('change feed on %s', (store) => {
  const t = useTestApp({ store });
  let feed: ReturnType<typeof recorder>;
  beforeAll(async () => {
    feed = recorder(t);
    // PostgreSQL: the LISTEN connection opens at the first subscription.
    for (let i = 0; i < 100 && !t.deps.changes.connected; i++) await new Promise((r) => setTimeout(r, 50));
  });
  afterAll(() => {
    feed.unsubscribe();
  });

  it('tells of a task created, first seen, accepted and edited', async () => {
    expect(t.deps.changes.connected).toBe(true);
    const id = await submit(t);
    await feed.next(isTask(id));
    const before = feed.seen.filter(isTask(id)).length;
    await adminGet(t, `/api/v1/admin/tasks/${id}`);
    await expect.poll(() => feed.seen.filter(isTask(id)).length).toBe(before + 1);
    // A second view stamps nothing, so tells nothing.
    await adminGet(t, `/api/v1/admin/tasks/${id}`);
    await patchOk(t, id, { status: 'accepted' });
    await expect.poll(() => feed.seen.filter(isTask(id)).length).toBe(before + 2);
    await patchOk(t, id, { operator_notes: 'Half way there.' });
    await expect.poll(() => feed.seen.filter(isTask(id)).length).toBe(before + 3);
  });

  it('tells of a message, linked to the task it names', async () => {
    const id = await submit(t);
    const res = await postJson(`${t.url}/api/v1/messages`, { message: `Please withdraw ${id}, thanks.`, reply_to: 'agent@mail.example-agent.dev' });
    expect(res.status).toBe(201);
    const { message_id } = (await res.json()) as { message_id: string };
    expect(await feed.next((c) => c.kind === 'message' && c.messageId === message_id)).toEqual({ kind: 'message', messageId: message_id, taskId: id });
    const plain = await postJson(`${t.url}/api/v1/messages`, { message: 'A general question.', reply_to: 'agent@mail.example-agent.dev' });
    const other = ((await plain.json()) as { message_id: string }).message_id;
    expect(await feed.next((c) => c.kind === 'message' && c.messageId === other)).toEqual({ kind: 'message', messageId: other, taskId: null });
  });

  it('tells nothing of a transaction that rolls back, and waits for the commit of one that does not', async () => {
    const rolledBack = 'task-2030-00000000000000000000000000000001';
    await expect(
      t.store.db.transaction().execute(async (trx) => {
        await t.deps.changes.publish({ kind: 'task', taskId: rolledBack }, trx);
        throw new Error('abort');
      }),
    ).rejects.toThrow('abort');
    const committed = 'task-2030-00000000000000000000000000000002';
    let seenInside = false;
    await t.store.db.transaction().execute(async (trx) => {
      await t.deps.changes.publish({ kind: 'task', taskId: committed }, trx);
      await new Promise((r) => setTimeout(r, 50));
      seenInside = feed.seen.some(isTask(committed));
    });
    expect(seenInside).toBe(false);
    await feed.next(isTask(committed));
    expect(feed.seen.some(isTask(rolledBack))).toBe(false);
  });

  it('keeps telling after a listener throws', async () => {
    const off = t.deps.changes.subscribe(() => {
      throw new Error('listener bug');
    });
    const id = await submit(t);
    await feed.next(isTask(id));
    off();
  });
});

describe.runIf(STORES.includes('postgres'))('change feed across PostgreSQL instances', () => {
  const a = useTestApp({ store: 'postgres' });
  const b = useTestApp(() => ({ shareDatabaseWith: a }));

  it('tells every instance of a change made through another', async () => {
    const feed = recorder(a);
    for (let i = 0; i < 100 && !a.deps.changes.connected; i++) await new Promise((r) => setTimeout(r, 50));
    const started = Date.now();
    const id = await submit(b);
    await feed.next(isTask(id), 1000);
    expect(Date.now() - started).toBeLessThan(1000);
    feed.unsubscribe();
  });

  it('reconnects after its LISTEN connection is killed, and says so', async () => {
    const feed = recorder(a);
    for (let i = 0; i < 100 && !a.deps.changes.connected; i++) await new Promise((r) => setTimeout(r, 50));
    let reconnected = 0;
    const off = a.deps.changes.onReconnect(() => (reconnected += 1));
    const admin = new pg.Client({ connectionString: a.config.databaseUrl });
    await admin.connect();
    try {
      const killed = await admin.query(
        "select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and query like 'LISTEN%' and pid <> pg_backend_pid()",
      );
      expect(killed.rowCount).toBeGreaterThan(0);
    } finally {
      await admin.end();
    }
    await expect.poll(() => reconnected, { timeout: 5000 }).toBeGreaterThan(0);
    expect(a.deps.changes.connected).toBe(true);
    const id = await submit(b);
    await feed.next(isTask(id), 2000);
    off();
    feed.unsubscribe();
  });
});
