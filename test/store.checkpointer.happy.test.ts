import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { migrate, openStore, type Store, type StoreOptions } from '../src/store/db.js';
import { startCheckpointer } from '../src/store/sqlite/checkpointer.js';
import { waitUntil } from './support/smtp.js';

/**
 * WAL checkpoints run on a thread of their own (src/store/checkpointer.ts), not in the commit that
 * crosses SQLite's threshold on the service's connection (issue 28: a third of a busy instance's
 * commit time). Observed from outside: the database file takes the committed pages while the
 * service's connection has written far less than its own checkpoint threshold.
 */

const dirs: string[] = [];
const stores: Store[] = [];
afterEach(async () => {
  for (const store of stores.splice(0)) await store.close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

async function freshStore(options: StoreOptions = {}): Promise<{ store: Store; file: string }> {
  const dir = mkdtempSync(path.join(tmpdir(), 'hts-checkpoint-'));
  dirs.push(dir);
  const file = path.join(dir, 'service.db');
  const store = openStore(`sqlite:${file}`, options);
  stores.push(store);
  await migrate(store);
  return { store, file };
}

/** About 500 KB in 50 commits: a few hundred WAL frames, under SQLite's own automatic threshold (1,000). */
function writeSome(store: Store): void {
  const db = store.sqlite;
  if (!db) throw new Error('not SQLite');
  const insert = db.prepare('insert into settings (key, value) values (?, ?)');
  const filler = 'x'.repeat(1000);
  for (let commit = 0; commit < 50; commit++) {
    db.transaction(() => {
      for (let i = 0; i < 10; i++) insert.run(`checkpoint.${commit}.${i}`, filler);
    })();
  }
}

describe('WAL checkpoints on their own thread (SQLite)', () => {
  it('copy committed pages into the database file while the connection stays under its threshold', async () => {
    const { store, file } = await freshStore();
    const before = statSync(file).size;
    writeSome(store);
    expect(statSync(`${file}-wal`).size).toBeGreaterThan(400_000);
    // The service's connection checkpoints only past BACKSTOP_PAGES: only the thread can grow the file.
    await waitUntil(() => statSync(file).size > before + 400_000, 5_000, 'the database file to take the WAL pages');
    // And every row is there, read by the service's connection.
    expect(store.sqlite?.prepare("select count(*) as n from settings where key like 'checkpoint.%'").get()).toEqual({ n: 500 });
  });

  it('leaves the pages in the WAL when turned off (the control: the file does not grow on its own)', async () => {
    const { store, file } = await freshStore({ checkpointInBackground: false });
    const before = statSync(file).size;
    writeSome(store);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(statSync(file).size).toBe(before);
  });

  it('lets a script that closes its store end by itself (the CLIs, bench:scale): the thread is waited for', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'hts-checkpoint-'));
    dirs.push(dir);
    const script = path.join(dir, 'close-store.mts');
    writeFileSync(
      script,
      `import { migrate, openStore } from ${JSON.stringify(path.join(process.cwd(), 'src', 'store', 'db.ts'))};
      const store = openStore(${JSON.stringify(`sqlite:${path.join(dir, 'service.db')}`)});
      await migrate(store);
      await store.close();
      process.stdout.write('closed');`,
    );
    const run = spawnSync(process.execPath, ['--import', 'tsx', script], { cwd: process.cwd(), encoding: 'utf8', timeout: 60_000 });
    // Exit 13 was Node's "unsettled top-level await": the unref'd thread's exit never came.
    expect({ status: run.status, stdout: run.stdout }).toEqual({ status: 0, stdout: 'closed' });
  });

  it('stops with the store: closing ends the thread and the file is whole', async () => {
    const { store, file } = await freshStore();
    writeSome(store);
    await store.close();
    stores.splice(stores.indexOf(store), 1);
    const again = openStore(`sqlite:${file}`, { checkpointInBackground: false });
    stores.push(again);
    expect(again.sqlite?.prepare("select count(*) as n from settings where key like 'checkpoint.%'").get()).toEqual({ n: 500 });
  });

  it('starts the WAL over under a steady stream of writes instead of letting it grow to the backstop', async () => {
    // 200 frames (800 KB) before the connection waits for a whole checkpoint; the backstop stays at 16,000.
    const { store, file } = await freshStore({ walRestartFrames: 200 });
    const filler = 'x'.repeat(1000);
    // About 15 MB of rows in 1,500 commits through the service's query builder, a turn of the event
    // loop between commits (the thread's reports arrive between them, as between a service's batches).
    for (let commit = 0; commit < 1500; commit++) {
      await store.db.transaction().execute(async (trx) => {
        await trx
          .insertInto('settings')
          .values(Array.from({ length: 10 }, (_, i) => ({ key: `stream.${commit}.${i}`, value: filler })))
          .execute();
      });
      await new Promise((resolve) => setImmediate(resolve));
    }
    // The WAL header's checkpoint sequence number counts the times the WAL started over. Without
    // the wait it stayed 0: a checkpoint never found the WAL all copied back while commits kept
    // coming, and the WAL took all 15 MB (on to the backstop's 64 MB in a service).
    const header = readFileSync(`${file}-wal`).subarray(0, 32);
    expect(header.readUInt32BE(12)).toBeGreaterThanOrEqual(2);
    expect(store.sqlite?.prepare("select count(*) as n from settings where key like 'stream.%'").get()).toEqual({ n: 15_000 });
  });

  it('does not make the connection wait for a thread that has stopped', async () => {
    const { file } = await freshStore({ checkpointInBackground: false });
    const checkpointer = startCheckpointer({ file, busyTimeoutMs: 1000, restartFrames: 0 });
    await checkpointer.stop();
    expect(checkpointer.needsDrain()).toBe(false);
    const started = performance.now();
    await checkpointer.drain();
    expect(performance.now() - started).toBeLessThan(100);
  });
});

/** The threads of this process (Linux): the checkpointer's is one of them while it runs. */
function threads(): number {
  return readdirSync('/proc/self/task').length;
}

describe('the checkpointer thread runs only while the store is busy (SQLite)', () => {
  /** Rows a few at a time, well under BUSY_ROWS_PER_SECOND. */
  async function trickle(store: Store, rows: number, everyMs: number, prefix: string): Promise<void> {
    const insert = store.sqlite?.prepare('insert into settings (key, value) values (?, ?)');
    for (let i = 0; i < rows; i++) {
      insert?.run(`${prefix}.${i}`, 'x'.repeat(1000));
      await new Promise((resolve) => setTimeout(resolve, everyMs));
    }
  }

  it('starts no thread for a quiet store, starts one for a burst of writes, and stops it after a quiet spell', async () => {
    // The rate is read every 100 ms; 400 ms under it stops the thread.
    const { store, file } = await freshStore({ checkpointLookMs: 100, checkpointIdleMs: 400 });
    // Node's thread pool exists before the count (a first asynchronous file operation starts it).
    await stat(file);
    // The migrations' rows may have started it: a quiet spell stops it.
    await new Promise((resolve) => setTimeout(resolve, 800));
    const quiet = threads();
    const before = statSync(file).size;
    // ~5 rows a second for a second: no thread, and nothing copies the WAL back (under SQLite's 1,000 pages).
    await trickle(store, 5, 200, 'quiet');
    expect(threads()).toBe(quiet);
    expect(statSync(file).size).toBe(before);
    // 500 rows at once: the thread starts and copies them into the database file.
    writeSome(store);
    await waitUntil(() => statSync(file).size > before + 400_000, 5_000, 'the database file to take the WAL pages');
    expect(threads()).toBe(quiet + 1);
    // Quiet again: the thread ends.
    await waitUntil(() => threads() === quiet, 5_000, 'the checkpointer thread to stop');
    const after = statSync(file).size;
    await trickle(store, 5, 200, 'quiet-again');
    expect(statSync(file).size).toBe(after);
    expect(store.sqlite?.prepare("select count(*) as n from settings where key like 'quiet%'").get()).toEqual({ n: 10 });
  });

  it('leaves a store that only reads with no thread of its own', async () => {
    await stat(tmpdir());
    const without = threads();
    const { store } = await freshStore({ checkpointLookMs: 100, checkpointIdleMs: 400 });
    // The migrations' writes may have started it (a look comes within 100 ms): a quiet spell stops it.
    await new Promise((resolve) => setTimeout(resolve, 300));
    await waitUntil(() => threads() === without, 5_000, 'no checkpointer thread');
    const quiet = threads();
    const read = store.sqlite?.prepare('select count(*) from settings').pluck();
    for (let i = 0; i < 5_000; i++) read?.get();
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(threads()).toBe(quiet);
  });
});
