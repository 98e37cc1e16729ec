import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Worker } from 'node:worker_threads';
import { beforeEach, describe, expect, it } from 'vitest';
import { migrate, openStore, withTransaction } from '../src/store/db.js';
import { storeFaultReason } from '../src/store/faults.js';
import { settingValue, useSqliteFileStore } from './support/sqlite-file.js';

/**
 * SQLite's writer thread when something fails (src/store/sqlite-writer.ts): a transaction whose
 * writes were sent without waiting (pipelineWrites) keeps nothing once one of them fails, a failed
 * write reports SQLite's own error, and a thread that stops takes its transaction with it.
 */

describe('SQLite writer thread failures', () => {
  const store = useSqliteFileStore('hts-writer-error-');
  const setting = (key: string) => settingValue(store, key);

  beforeEach(async () => {
    await store.db.deleteFrom('settings').where('key', 'like', 'writer.%').execute();
  });

  it('keeps none of a pipelined transaction once one of its writes fails, not even the writes after it', async () => {
    await store.db.insertInto('settings').values({ key: 'writer.taken', value: 'first' }).execute();
    const attempt = withTransaction(store.db, async (trx) => {
      store.pipelineWrites?.();
      await trx.insertInto('settings').values({ key: 'writer.p1', value: 'x' }).execute();
      // A duplicate key: fails on the thread, after the caller has already gone on.
      await trx.insertInto('settings').values({ key: 'writer.taken', value: 'second' }).execute();
      await trx.insertInto('settings').values({ key: 'writer.p2', value: 'y' }).execute();
    });
    await expect(attempt).rejects.toThrow(/UNIQUE constraint failed/);
    expect(await setting('writer.p1')).toBeUndefined();
    expect(await setting('writer.p2')).toBeUndefined();
    expect(await setting('writer.taken')).toBe('first');
    // The next transaction starts clean.
    await withTransaction(store.db, async (trx) => {
      store.pipelineWrites?.();
      await trx.insertInto('settings').values({ key: 'writer.p3', value: 'z' }).execute();
    });
    expect(await setting('writer.p3')).toBe('z');
  });

  it('reports a failed write outside a transaction with its SQLite error, which is no store fault', async () => {
    await store.db.insertInto('settings').values({ key: 'writer.once', value: '1' }).execute();
    const failure = await store.db
      .insertInto('settings')
      .values({ key: 'writer.once', value: '2' })
      .execute()
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(Error);
    expect((failure as { code?: string }).code).toBe('SQLITE_CONSTRAINT_PRIMARYKEY');
    expect(storeFaultReason(failure)).toBeUndefined();
  });
});

describe('SQLite writer thread lost', () => {
  it('fails the statements in flight as a lost connection, and the next write starts a new thread', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'hts-writer-lost-'));
    const started: Worker[] = [];
    const onWorker = (worker: Worker) => started.push(worker);
    process.on('worker', onWorker);
    // Without the checkpointer, the only thread the store starts is the writer.
    const store = openStore(`sqlite:${path.join(dir, 'service.db')}`, { checkpointInBackground: false });
    try {
      await migrate(store);
      expect(started).toHaveLength(1);
      const [writer] = started;
      const lost = withTransaction(store.db, async (trx) => {
        await trx.insertInto('settings').values({ key: 'writer.lost', value: 'never' }).execute();
        await writer?.terminate();
        await trx.insertInto('settings').values({ key: 'writer.lost2', value: 'never' }).execute();
      });
      const error = await lost.catch((e: unknown) => e);
      expect(storeFaultReason(error)).toBe('connection lost');
      // The transaction's write died with its connection; a new thread takes the next write.
      await store.db.insertInto('settings').values({ key: 'writer.after', value: 'yes' }).execute();
      expect(started).toHaveLength(2);
      const rows = await store.db.selectFrom('settings').select('key').where('key', 'like', 'writer.%').orderBy('key').execute();
      expect(rows.map((r) => r.key)).toEqual(['writer.after']);
    } finally {
      process.off('worker', onWorker);
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
