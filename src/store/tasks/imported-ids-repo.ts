import type { Db } from '../db.js';

/** Records an imported task's id under its case-folded form (in the import's transaction). */
export async function insertImportedId(db: Db, taskId: string): Promise<void> {
  await db.insertInto('imported_task_ids').values({ folded_id: taskId.toLowerCase(), task_id: taskId }).execute();
}

/** The imported task ids, exactly as stored, whose case-folded form is one of `folded`. */
export async function importedIdsFolded(db: Db, folded: string[]): Promise<string[]> {
  if (folded.length === 0) return [];
  const rows = await db.selectFrom('imported_task_ids').select('task_id').where('folded_id', 'in', folded).execute();
  return rows.map((row) => row.task_id);
}
