import type { Db } from './db.js';

/**
 * Reads a setting, creating it with `create()` when missing. Safe when several instances start at
 * once: the first insert wins and everyone reads the winner.
 */
export async function getOrCreateSetting(db: Db, key: string, create: () => string): Promise<string> {
  const existing = await db.selectFrom('settings').select('value').where('key', '=', key).executeTakeFirst();
  if (existing) return existing.value;
  await db
    .insertInto('settings')
    .values({ key, value: create() })
    .onConflict((oc) => oc.column('key').doNothing())
    .execute();
  const row = await db.selectFrom('settings').select('value').where('key', '=', key).executeTakeFirstOrThrow();
  return row.value;
}

/** Deletes a setting only if it still holds `value` (another instance may have replaced it). */
export async function deleteSettingIf(db: Db, key: string, value: string): Promise<void> {
  await db.deleteFrom('settings').where('key', '=', key).where('value', '=', value).execute();
}

export async function readSetting(db: Db, key: string): Promise<string | undefined> {
  const row = await db.selectFrom('settings').select('value').where('key', '=', key).executeTakeFirst();
  return row?.value;
}

export async function writeSetting(db: Db, key: string, value: string): Promise<void> {
  await db
    .insertInto('settings')
    .values({ key, value })
    .onConflict((oc) => oc.column('key').doUpdateSet({ value }))
    .execute();
}
