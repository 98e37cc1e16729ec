import type { Selectable } from 'kysely';
import { padded } from './batches.js';
import type { Db } from './db.js';
import { withTransaction } from './db.js';
import type { BlocklistTable } from './schema.js';

export type BlockRow = Selectable<BlocklistTable>;

/** What a submission or message is matched against, already normalized by the caller. */
export interface BlockMatch {
  clientHash: string;
  /** Hashes of the client's enclosing networks (an ip block may name a network). */
  networkHashes?: readonly string[] | undefined;
  email?: string | undefined;
  /** The e-mail's domain and each parent domain. */
  domains: string[];
  requester?: string | undefined;
}

export async function insertBlock(db: Db, row: BlockRow): Promise<void> {
  await db.insertInto('blocklist').values(row).execute();
}

/** Replaces any entry of the same kind and value by `row`, atomically. */
export async function replaceBlock(db: Db, row: BlockRow): Promise<void> {
  await withTransaction(db, async (trx) => {
    await trx.deleteFrom('blocklist').where('kind', '=', row.kind).where('value', '=', row.value).execute();
    await insertBlock(trx, row);
  });
}

export async function deleteBlock(db: Db, id: string): Promise<boolean> {
  const result = await db.deleteFrom('blocklist').where('id', '=', id).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/** Entries not expired at `now`, newest first. */
export async function listActiveBlocks(db: Db, now: string): Promise<BlockRow[]> {
  return db
    .selectFrom('blocklist')
    .selectAll()
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .execute();
}

export async function hasActiveBlock(db: Db, kind: string, value: string, now: string): Promise<boolean> {
  const row = await db
    .selectFrom('blocklist')
    .select('id')
    .where('kind', '=', kind)
    .where('value', '=', value)
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
    .executeTakeFirst();
  return row !== undefined;
}

/**
 * Every active entry that matches any of the subjects (the caller tells which matches which).
 * One statement whose text depends only on how many distinct values there are, padded
 * (batches.ts): every kind with every value, through the (kind, value) index; the pairs that match
 * no subject are dropped here.
 */
export async function activeBlocksMatching(db: Db, subjects: BlockMatch[], now: string): Promise<Pick<BlockRow, 'kind' | 'value'>[]> {
  const values = { ip: new Set<string>(), email: new Set<string>(), domain: new Set<string>(), requester: new Set<string>() };
  for (const subject of subjects) {
    values.ip.add(subject.clientHash);
    for (const network of subject.networkHashes ?? []) values.ip.add(network);
    if (subject.email !== undefined) values.email.add(subject.email);
    for (const domain of subject.domains) values.domain.add(domain);
    if (subject.requester !== undefined) values.requester.add(subject.requester);
  }
  const all = new Set(Object.values(values).flatMap((set) => [...set]));
  if (all.size === 0) return [];
  const rows = await db
    .selectFrom('blocklist')
    .select(['kind', 'value'])
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
    .where('kind', 'in', Object.keys(values))
    .where('value', 'in', padded([...all]))
    .execute();
  return rows.filter((row) => values[row.kind as keyof typeof values]?.has(row.value) === true);
}

/** Deletes up to `limit` entries that expired before `before` (automatic blocks pile up under abuse); returns how many. */
export async function deleteExpiredBlocks(db: Db, before: string, limit: number): Promise<number> {
  const result = await db
    .deleteFrom('blocklist')
    .where('id', 'in', (eb) => eb.selectFrom('blocklist').select('id').where('expires_at', 'is not', null).where('expires_at', '<', before).limit(limit))
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
