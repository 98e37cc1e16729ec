import { sql } from 'kysely';
import { beforeEach, describe, expect, it } from 'vitest';
import { createChangeFeed } from '../src/store/change-feed.js';
import { withTransaction } from '../src/store/db.js';
import { insertTasks } from '../src/store/tasks-repo.js';
import { taskRow } from './support/rows.js';
import { settingValue, useSqliteFileStore } from './support/sqlite-file.js';

/**
 * SQLite's writes on a thread of their own (src/store/sqlite-writer.ts): the event loop goes on
 * while a transaction writes and commits, reads outside it see the last committed state at once,
 * and transactions still run one at a time. Failures: store.writer-thread.error.test.ts.
 */

describe('SQLite writes on their own thread', () => {
  const store = useSqliteFileStore('hts-writer-');
  const setting = (key: string) => settingValue(store, key);

  beforeEach(async () => {
    await store.db.deleteFrom('settings').where('key', 'like', 'writer.%').execute();
  });

  it('answers a read outside a transaction at once, with the last committed state, while the transaction is open', async () => {
    await store.db.insertInto('settings').values({ key: 'writer.a', value: 'before' }).execute();
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let wrote!: () => void;
    const written = new Promise<void>((resolve) => {
      wrote = resolve;
    });
    const transaction = store.db.transaction().execute(async (trx) => {
      await trx.updateTable('settings').set({ value: 'inside' }).where('key', '=', 'writer.a').execute();
      // Inside, the transaction reads its own write.
      expect((await trx.selectFrom('settings').select('value').where('key', '=', 'writer.a').executeTakeFirst())?.value).toBe('inside');
      wrote();
      await held;
    });
    await written;
    // Outside, the read neither waits for the open transaction nor sees its write.
    expect(store.transactionOpen?.()).toBe(true);
    expect(await setting('writer.a')).toBe('before');
    release();
    await transaction;
    expect(store.transactionOpen?.()).toBe(false);
    expect(await setting('writer.a')).toBe('inside');
  });

  it('runs transactions one at a time: concurrent read-modify-writes lose no update', async () => {
    await store.db.insertInto('settings').values({ key: 'writer.count', value: '0' }).execute();
    await Promise.all(
      Array.from({ length: 40 }, () =>
        withTransaction(store.db, async (trx) => {
          const row = await trx.selectFrom('settings').select('value').where('key', '=', 'writer.count').executeTakeFirstOrThrow();
          await new Promise((resolve) => setImmediate(resolve));
          await trx
            .updateTable('settings')
            .set({ value: String(Number(row.value) + 1) })
            .where('key', '=', 'writer.count')
            .execute();
        }),
      ),
    );
    expect(await setting('writer.count')).toBe('40');
  });

  it('moves the task cache stamp once a change to tasks has committed, not when it rolls back', async () => {
    await store.db.transaction().execute((trx) => insertTasks(trx, [taskRow('tsk_writer_1')]));
    const stamp = () => store.taskChanges?.count ?? -1;
    const before = stamp();
    await store.db
      .transaction()
      .execute(async (trx) => {
        await trx.updateTable('tasks').set({ status: 'accepted' }).where('id', '=', 'tsk_writer_1').execute();
        throw new Error('changed my mind');
      })
      .catch(() => undefined);
    expect(stamp()).toBe(before);
    await store.db.transaction().execute(async (trx) => {
      await trx.updateTable('tasks').set({ status: 'accepted' }).where('id', '=', 'tsk_writer_1').execute();
      expect(stamp()).toBe(before);
    });
    expect(stamp()).toBeGreaterThan(before);
    const after = stamp();
    await store.db.updateTable('tasks').set({ status: 'submitted' }).where('id', '=', 'tsk_writer_1').execute();
    expect(stamp()).toBeGreaterThan(after);
  });

  it('tells the change feed of a transaction’s changes only once it has committed', async () => {
    const feed = createChangeFeed({ store, databaseUrl: '', log: silentLog() });
    const heard: string[] = [];
    const stop = feed.subscribe((change) => heard.push(change.kind === 'task' ? change.taskId : change.kind));
    try {
      await withTransaction(store.db, async (trx) => {
        await trx.insertInto('settings').values({ key: 'writer.feed', value: '1' }).execute();
        await feed.publish({ kind: 'task', taskId: 'tsk_feed_1' }, trx);
        expect(heard).toEqual([]);
      });
      expect(heard).toEqual(['tsk_feed_1']);
      await withTransaction(store.db, async (trx) => {
        await trx.insertInto('settings').values({ key: 'writer.feed2', value: '1' }).execute();
        await feed.publish({ kind: 'task', taskId: 'tsk_feed_2' }, trx);
        throw new Error('rolled back');
      }).catch(() => undefined);
      expect(heard).toEqual(['tsk_feed_1']);
    } finally {
      stop();
      await feed.close();
    }
  });

  it('gives BLOBs back as Buffers, from the thread and from the event loop', async () => {
    const data = Buffer.from([0, 1, 2, 250, 255]);
    const inside = await withTransaction(store.db, async (trx) => {
      await trx.insertInto('attachment_chunks').values({ blob_key: 'writer-blob', seq: 0, data }).execute();
      return trx.selectFrom('attachment_chunks').select('data').where('blob_key', '=', 'writer-blob').executeTakeFirstOrThrow();
    });
    expect(Buffer.isBuffer(inside.data)).toBe(true);
    expect(Buffer.compare(inside.data as Buffer, data)).toBe(0);
    const outside = await store.db.selectFrom('attachment_chunks').select('data').where('blob_key', '=', 'writer-blob').executeTakeFirstOrThrow();
    expect(Buffer.isBuffer(outside.data)).toBe(true);
    expect(Buffer.compare(outside.data as Buffer, data)).toBe(0);
  });

  it('runs raw statements that are not SELECTs on the thread, inside and outside transactions', async () => {
    const { rows } = await sql<{ journal_mode: string }>`pragma journal_mode`.execute(store.db);
    expect(rows[0]?.journal_mode).toBe('wal');
    const inside = await withTransaction(store.db, (trx) => sql<{ n: number }>`select count(*) as n from settings where key like 'writer.%'`.execute(trx));
    expect(inside.rows[0]?.n).toBeGreaterThanOrEqual(0);
  });
});

function silentLog() {
  const noop = () => undefined;
  const log = { info: noop, warn: noop, error: noop, debug: noop, trace: noop, fatal: noop, child: () => log };
  return log as never;
}
