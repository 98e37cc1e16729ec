import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../src/store/db.js';
import { checkpointOnDemand } from '../src/store/sqlite/checkpointer.js';
import { waitUntil } from './support/smtp.js';

/** Faults of the on-demand checkpointer (src/store/checkpointer.ts): none may end the process. */

const dirs: string[] = [];
const stores: Store[] = [];
afterEach(async () => {
  for (const store of stores.splice(0)) await store.close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A SQLite file in WAL mode, with no checkpointer of the store's own. */
function walFile(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'hts-checkpoint-'));
  dirs.push(dir);
  const file = path.join(dir, 'service.db');
  const store = openStore(`sqlite:${file}`, { checkpointInBackground: false });
  stores.push(store);
  store.sqlite?.exec('create table t (v text)');
  return file;
}

describe('the on-demand checkpointer when the connection refuses a setting', () => {
  it('reports a fault and goes on, instead of ending the process from its timer', async () => {
    const file = walFile();
    let rows = 0;
    let settings = 0;
    const faults: string[] = [];
    const checkpointer = checkpointOnDemand({
      file,
      busyTimeoutMs: 1000,
      lookEveryMs: 50,
      idleMs: 100,
      rowsChanged: () => rows,
      // The setting taken at the start (as openStore's own pragmas are) goes through; every later one is refused.
      setAutocheckpoint: () => {
        settings += 1;
        if (settings > 1) throw new Error('the database connection is busy');
      },
      onFault: (reason) => faults.push(reason),
    });
    try {
      // Busy: the thread starts, and raising the connection's threshold fails.
      rows += 10_000;
      await waitUntil(() => faults.length > 0, 5_000, 'a fault');
      expect(faults[0]).toBe('checkpointer: the database connection is busy');
      // Quiet: lowering it fails too, every look, and the process is still here to count them.
      await waitUntil(() => faults.length >= 3, 5_000, 'more faults');
    } finally {
      await checkpointer.stop();
    }
  });
});
