import { type Selectable, sql } from 'kysely';
import type { Db } from '../db.js';
import { withTransaction } from '../db.js';
import type { BlocklistTable } from '../schema.js';
import { padded } from '../sqlite/batches.js';
import { reusableList } from '../sqlite/prepared.js';

export type BlockRow = Selectable<BlocklistTable>;

/** What a submission or message is matched against, already normalized by the caller. */
export interface BlockMatch {
  clientHash: string;
  email?: string | undefined;
  /** The e-mail's domain and each parent domain. */
  domains: string[];
  requester?: string | undefined;
  /** A verified agent's key id and directory host (docs/verified-agents.md). */
  agentKey?: string | undefined;
  agentDirectory?: string | undefined;
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

/**
 * Entries not expired at `now`, newest first, `limit` after the position `after` (a page): down
 * the (created_at, id) index. Expired entries are passed over until retention deletes them.
 */
export async function listActiveBlocks(
  db: Db,
  now: string,
  page: { after?: { created_at: string; id: string } | undefined; limit: number },
): Promise<BlockRow[]> {
  const { after } = page;
  return db
    .selectFrom('blocklist')
    .selectAll()
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
    .$if(after !== undefined, (q) =>
      q.where((eb) =>
        eb.or([eb('created_at', '<', after?.created_at ?? ''), eb.and([eb('created_at', '=', after?.created_at ?? ''), eb('id', '<', after?.id ?? '')])]),
      ),
    )
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(page.limit)
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

/** An active entry a subject may match: its kind, value and (ip entries) the prefix it names. */
export type ActiveBlock = Pick<BlockRow, 'kind' | 'value' | 'prefix_bits'>;

/** Every kind a subject is matched under (its values are collected per kind below). */
const BLOCK_KINDS = ['ip', 'email', 'domain', 'requester', 'agent_key', 'agent_directory'] as const;

/** The statement of activeBlocksMatching, compiled once per number of values (prepared.ts). */
const activeBlocksQuery = reusableList((db, list, now: string) => {
  const base = db.selectFrom('blocklist').select(['kind', 'value', 'prefix_bits']);
  const active = (query: typeof base) => query.where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]));
  return active(base)
    .where(
      'kind',
      'in',
      BLOCK_KINDS.map((kind) => sql.lit(kind)),
    )
    .where('value', 'in', list as string[])
    .unionAll(active(base).where('kind', '=', sql.lit('ip')).where('prefix_bits', 'is not', null));
}, '\u0000now');

/**
 * Every active entry that equals a value of any of the subjects (the caller tells which matches
 * which), and every active ip entry that names a network (the caller hashes its clients' networks
 * at those prefixes). One statement whose text depends only on how many distinct values there are,
 * padded (batches.ts): every kind with every value through the (kind, value) index, and the
 * networks through their partial index; equal pairs that match no subject are dropped here.
 */
export async function activeBlocksMatching(db: Db, subjects: BlockMatch[], now: string): Promise<ActiveBlock[]> {
  const values = {
    ip: new Set<string>(),
    email: new Set<string>(),
    domain: new Set<string>(),
    requester: new Set<string>(),
    agent_key: new Set<string>(),
    agent_directory: new Set<string>(),
  };
  for (const subject of subjects) {
    values.ip.add(subject.clientHash);
    if (subject.email !== undefined) values.email.add(subject.email);
    for (const domain of subject.domains) values.domain.add(domain);
    if (subject.requester !== undefined) values.requester.add(subject.requester);
    if (subject.agentKey !== undefined) values.agent_key.add(subject.agentKey);
    if (subject.agentDirectory !== undefined) values.agent_directory.add(subject.agentDirectory);
  }
  const all = new Set(Object.values(values).flatMap((set) => [...set]));
  if (all.size === 0) return [];
  const { rows } = await db.executeQuery(activeBlocksQuery(db, padded([...all]), now));
  return rows.filter((row) => row.prefix_bits !== null || values[row.kind as keyof typeof values]?.has(row.value) === true);
}

/** Deletes up to `limit` entries that expired before `before` (automatic blocks pile up under abuse); returns how many. */
export async function deleteExpiredBlocks(db: Db, before: string, limit: number): Promise<number> {
  const result = await db
    .deleteFrom('blocklist')
    .where('id', 'in', (eb) => eb.selectFrom('blocklist').select('id').where('expires_at', 'is not', null).where('expires_at', '<', before).limit(limit))
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
