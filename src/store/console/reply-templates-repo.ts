import type { Selectable } from 'kysely';
import type { Db } from '../db.js';
import type { ReplyTemplatesTable } from '../schema.js';

/** Canned replies and delivery templates (migration 210): a short list the operator curates. */

export type TemplateRow = Selectable<ReplyTemplatesTable>;

/** At most this many templates are listed: the list is for people to pick from. */
export const TEMPLATES_MAX = 200;

export async function listTemplateRows(db: Db): Promise<TemplateRow[]> {
  return db.selectFrom('reply_templates').selectAll().orderBy('kind').orderBy('name').orderBy('id').limit(TEMPLATES_MAX).execute();
}

export async function findTemplate(db: Db, id: string): Promise<TemplateRow | undefined> {
  return db.selectFrom('reply_templates').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function insertTemplate(db: Db, row: TemplateRow): Promise<void> {
  await db.insertInto('reply_templates').values(row).execute();
}

export async function updateTemplate(db: Db, id: string, changes: Pick<TemplateRow, 'kind' | 'name' | 'body' | 'updated_at'>): Promise<boolean> {
  const result = await db.updateTable('reply_templates').set(changes).where('id', '=', id).executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

export async function deleteTemplate(db: Db, id: string): Promise<boolean> {
  const result = await db.deleteFrom('reply_templates').where('id', '=', id).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

export async function countTemplates(db: Db): Promise<number> {
  const rows = await db
    .selectFrom('reply_templates')
    .select('id')
    .limit(TEMPLATES_MAX + 1)
    .execute();
  return rows.length;
}
