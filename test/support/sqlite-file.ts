import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { migrate, openStore, type Store } from '../../src/store/db.js';
import { useSuiteResource } from './app.js';

/**
 * A migrated SQLite store on a file of its own, shared by one suite and removed after it: a file
 * store, so its writes run on the writer thread (src/store/sqlite-writer.ts).
 */
export function useSqliteFileStore(prefix: string): Store {
  let dir = '';
  return useSuiteResource(
    async () => {
      dir = mkdtempSync(path.join(tmpdir(), prefix));
      const store = openStore(`sqlite:${path.join(dir, 'service.db')}`);
      await migrate(store);
      return store;
    },
    async (store) => {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  );
}

/** A setting's value, or undefined when it is not there. */
export async function settingValue(store: Store, key: string): Promise<string | undefined> {
  return (await store.db.selectFrom('settings').select('value').where('key', '=', key).executeTakeFirst())?.value;
}
