import { randomBytes } from 'node:crypto';
import { AppError, validationFailed } from '../../domain/errors.js';
import { OPERATOR_NOTES_MAX } from '../../domain/tasks/admin-schemas.js';
import type { Actor } from '../../domain/team/actor.js';
import { iso } from '../../domain/time.js';
import {
  countTemplates,
  deleteTemplate as deleteRow,
  findTemplate,
  insertTemplate,
  listTemplateRows,
  TEMPLATES_MAX,
  type TemplateRow,
  updateTemplate,
} from '../../store/console/reply-templates-repo.js';
import { withTransaction } from '../../store/db.js';
import type { ServiceDeps } from '../context.js';
import { recordAudit } from '../team/audit.js';

/**
 * Canned replies (`reply`: a message to a sender) and delivery templates (`result`: a starting
 * deliverable) the operator inserts from the task page (docs/inbox.md). Every operator may use them; an
 * admin edits them (the console's route table says so). Each edit is in the audit log.
 */

export const TEMPLATE_KINDS = ['reply', 'result'] as const;
export type TemplateKind = (typeof TEMPLATE_KINDS)[number];

export interface Template {
  id: string;
  kind: TemplateKind;
  name: string;
  body: string;
  updated_at: string;
}

function toTemplate(row: TemplateRow): Template {
  return { id: row.id, kind: row.kind as TemplateKind, name: row.name, body: row.body, updated_at: row.updated_at };
}

export interface TemplateInput {
  kind: string;
  name: string;
  body: string;
}

function check(input: TemplateInput): { kind: TemplateKind; name: string; body: string } {
  const problems: string[] = [];
  if (!(TEMPLATE_KINDS as readonly string[]).includes(input.kind)) problems.push('kind must be reply or result');
  const name = input.name.trim();
  if (name.length < 1 || name.length > 80) problems.push('name must be 1 to 80 characters');
  const body = input.body.replace(/\r\n?/g, '\n');
  if (body.trim().length < 1 || body.length > OPERATOR_NOTES_MAX) problems.push(`body must be 1 to ${OPERATOR_NOTES_MAX} characters`);
  if (problems.length > 0) throw validationFailed(problems);
  return { kind: input.kind as TemplateKind, name, body };
}

export async function listTemplates(deps: ServiceDeps): Promise<Template[]> {
  return (await listTemplateRows(deps.store.db)).map(toTemplate);
}

export async function getTemplate(deps: ServiceDeps, id: string): Promise<Template | undefined> {
  const row = id.length <= 100 ? await findTemplate(deps.store.db, id) : undefined;
  return row ? toTemplate(row) : undefined;
}

/** Adds a template, or changes the one named by `id`. */
export async function saveTemplate(deps: ServiceDeps, actor: Actor, input: TemplateInput, id?: string): Promise<Template> {
  const checked = check(input);
  const at = iso(deps.clock.now());
  return withTransaction(deps.store.db, async (trx) => {
    if (id === undefined) {
      if ((await countTemplates(trx)) >= TEMPLATES_MAX) throw validationFailed([`at most ${TEMPLATES_MAX} templates: delete one first`]);
      const row: TemplateRow = { id: `tpl-${randomBytes(8).toString('hex')}`, ...checked, created_at: at, updated_at: at };
      await insertTemplate(trx, row);
      await recordAudit(trx, deps, { actor, action: 'template.created', details: { template_id: row.id, kind: row.kind, name: row.name } });
      return toTemplate(row);
    }
    if (id.length > 100 || !(await updateTemplate(trx, id, { ...checked, updated_at: at }))) throw new AppError('not_found', 'No template has that id.');
    await recordAudit(trx, deps, { actor, action: 'template.updated', details: { template_id: id, kind: checked.kind, name: checked.name } });
    return { id, ...checked, updated_at: at };
  });
}

export async function removeTemplate(deps: ServiceDeps, actor: Actor, id: string): Promise<boolean> {
  return withTransaction(deps.store.db, async (trx) => {
    const removed = id.length <= 100 && (await deleteRow(trx, id));
    if (removed) await recordAudit(trx, deps, { actor, action: 'template.deleted', details: { template_id: id } });
    return removed;
  });
}
