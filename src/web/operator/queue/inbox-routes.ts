import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import Type from 'typebox';
import { AppError, isAppError } from '../../../domain/errors.js';
import { html } from '../../../domain/html.js';
import { TASK_ID_PATTERN } from '../../../domain/ids.js';
import { actorOf } from '../../../http/admin-auth.js';
import { findHeldAction, undoHeld } from '../../../services/console/held-actions.js';
import { snoozeTask, wakeTask } from '../../../services/console/snoozes.js';
import { patchTask } from '../../../services/console/transitions.js';
import type { ServiceDeps } from '../../../services/context.js';
import { registerStaticAssets } from '../../static-assets.js';
import { type ConsoleKit, FOR_OPERATOR, type Form, HIDDEN, localToIso, PARAM, text } from '../console-kit.js';
import { INBOX_CSS, KEYS_JS, TEMPLATES_JS } from '../inbox-assets.js';
import { flash } from '../layout.js';
import { heldBanner } from '../task/inbox-task.js';
import { showTaskPage } from '../task/task-routes.js';
import { type BulkOutcome, bulkResultView } from './inbox-lists-view.js';

/** At most this many tasks in one bulk action: each is its own transaction. */
const BULK_MAX = 50;

/**
 * The inbox's console actions (docs/inbox.md): undo of a held action, snooze and wake, bulk accept and reject, and
 * the inbox's own assets. Thin adapters over services/console/held-actions.ts, snoozes.ts and the one
 * transition service (patchTask), as a single task's page uses.
 */
export function registerInboxRoutes(plain: FastifyInstance, deps: ServiceDeps, kit: ConsoleKit): void {
  const { guarded, render, session } = kit;
  const scope = plain.withTypeProvider<TypeBoxTypeProvider>();
  registerStaticAssets(plain, [INBOX_CSS, KEYS_JS, TEMPLATES_JS]);

  const withId = { ...guarded, config: FOR_OPERATOR, schema: { ...HIDDEN, params: Type.Object({ id: PARAM }) } };
  // A reply held from the messages list: its Undo, then back to the list.
  scope.get('/operator/held/:id', withId, async (request, reply) => {
    const held = await findHeldAction(deps, request.params.id);
    const body = held
      ? html`${heldBanner(held, session(request), deps.clock.now())}<p><a href="/operator/messages">← Messages</a></p>`
      : html`${flash('ok', 'Sent.')}<p><a href="/operator/messages">← Messages</a></p>`;
    return render(reply, session(request), 'messages', held ? 'Reply held' : 'Sent', body);
  });
  scope.post('/operator/held/:id/undo', withId, async (request, reply) => {
    const undone = await undoHeld(deps, actorOf(request), request.params.id);
    if (undone && undone.task_id === '') {
      return render(
        reply,
        session(request),
        'messages',
        'Undone',
        html`${flash('ok', 'Undone. Nothing was sent.')}<p><a href="/operator/messages">← Messages</a></p>`,
      );
    }
    if (!undone) {
      const body = flash('error', 'Too late to undo: the action was already committed (or undone).');
      return render(reply, session(request), 'queue', 'Too late to undo', body, 409);
    }
    return showTaskPage(deps, kit, request, reply, undone.task_id, { notice: flash('ok', 'Undone. Nothing was sent to the requester.') });
  });

  const withTask = { ...guarded, config: FOR_OPERATOR, schema: { ...HIDDEN, params: Type.Object({ task_id: PARAM }) } };
  scope.post('/operator/tasks/:task_id/snooze', withTask, async (request, reply) => {
    const { task_id } = request.params;
    const form = (request.body ?? {}) as Form;
    const hours = text(form, 'hours');
    const when = hours ? { hours: Number(hours) } : { until: localToIso(form, 'until_local') ?? '' };
    try {
      await snoozeTask(deps, actorOf(request), task_id, when);
    } catch (error) {
      if (!isAppError(error) || error.code === 'task_not_found') throw error;
      const details = (error.extras.details as string[] | undefined) ?? [];
      return showTaskPage(deps, kit, request, reply, task_id, { notice: flash('error', error.message, details), status: error.status });
    }
    return reply.redirect('/operator?status=snoozed', 303);
  });
  scope.post('/operator/tasks/:task_id/wake', withTask, async (request, reply) => {
    const { task_id } = request.params;
    await wakeTask(deps, actorOf(request), task_id);
    const back = text((request.body ?? {}) as Form, 'back') === 'queue' ? '/operator?status=snoozed' : `/operator/tasks/${encodeURIComponent(task_id)}`;
    return reply.redirect(back, 303);
  });

  scope.post('/operator/bulk', { ...guarded, config: FOR_OPERATOR }, async (request, reply) => {
    const form = (request.body ?? {}) as Form;
    const action = text(form, 'action');
    if (action !== 'accept' && action !== 'reject')
      throw new AppError('validation_failed', 'Choose Accept selected or Reject selected.', { details: ['action must be accept or reject'] });
    const raw = form.task_id;
    const ids = [...new Set((Array.isArray(raw) ? raw : [raw]).filter((v): v is string => typeof v === 'string' && TASK_ID_PATTERN.test(v)))];
    if (ids.length === 0) throw new AppError('validation_failed', 'Select at least one task.', { details: ['task_id: select at least one task'] });
    if (ids.length > BULK_MAX)
      throw new AppError('validation_failed', `Select at most ${BULK_MAX} tasks at once.`, { details: [`task_id: at most ${BULK_MAX}`] });
    const eta = localToIso(form, 'eta_local');
    const reason = text(form, 'reason')?.trim();
    const patch = action === 'accept' ? { status: 'accepted', ...(eta ? { eta } : {}) } : { status: 'rejected', operator_notes: reason ? reason : null };
    const outcomes: BulkOutcome[] = [];
    // One task at a time, each its own transaction with its audit row, mail and webhook.
    for (const taskId of ids) {
      try {
        await patchTask(deps, actorOf(request), taskId, patch);
        outcomes.push({ taskId, ok: true, message: action === 'accept' ? 'accepted' : 'rejected' });
      } catch (error) {
        if (!isAppError(error)) throw error;
        const details = (error.extras.details as string[] | undefined) ?? [];
        outcomes.push({ taskId, ok: false, message: [error.message, ...details].join(' ') });
      }
    }
    const backRaw = text(form, 'back') ?? '';
    const back = backRaw.startsWith('/operator?') || backRaw === '/operator' ? backRaw : '/operator';
    const failed = outcomes.some((o) => !o.ok);
    return render(reply, session(request), 'queue', 'Bulk result', bulkResultView(action, outcomes, back), failed && outcomes.every((o) => !o.ok) ? 409 : 200);
  });
}
