import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, isAppError } from '../../domain/errors.js';
import type { SafeHtml } from '../../domain/html.js';
import { statusPagePath } from '../../domain/urls.js';
import type { ServiceDeps } from '../../services/context.js';
import { countByStatus, listQueue, messagesNamingAny, viewTask } from '../../services/operator.js';
import { operatorAttachments } from '../../services/attachments.js';
import { patchTask } from '../../services/operator-transitions.js';
import { listWebhooks, retryWebhook } from '../../services/webhooks.js';
import { registerConsoleAttachmentRoutes } from './attachment-routes.js';
import { localToIso, notes, TASK_ACTIONS, text, type ConsoleKit, type Form, type TaskAction } from './console-kit.js';
import { flash } from './layout.js';
import { queueView } from './views/queue.js';
import { taskView } from './views/task.js';

/** The console's queue, task page and task actions (accept, deliver, reject, notes, eta, webhook retry). */
export function registerTaskRoutes(scope: FastifyInstance, deps: ServiceDeps, kit: ConsoleKit): void {
  const { render, session, guarded } = kit;
  registerConsoleAttachmentRoutes(scope, deps, { preHandler: guarded.preHandler });
  scope.get('/operator', guarded, async (request, reply) => {
    const query = request.query as Form;
    const filter = text(query, 'status') ?? 'open';
    // Test tasks (issue 19): ?test=only|exclude narrows any status tab.
    const test = text(query, 'test');
    const [queue, counts] = await Promise.all([
      listQueue(deps, { status: filter === 'all' ? undefined : filter, test, cursor: text(query, 'cursor'), limit: 25 }),
      countByStatus(deps),
    ]);
    const mail = await messagesNamingAny(deps, queue.tasks);
    return render(reply, session(request), 'queue', 'Queue', queueView(queue, filter, counts, mail, deps.clock.now(), test));
  });

  const showTask = async (request: FastifyRequest, reply: FastifyReply, taskId: string, notice?: SafeHtml, draft: { notes?: string | undefined; reason?: string | undefined } = {}, status = 200) => {
    const task = await viewTask(deps, taskId);
    const files = await operatorAttachments(deps, task.task_id);
    const limits = { maxPerTask: deps.config.attachments.maxPerTask, maxBytes: deps.config.attachments.maxBytes };
    const webhooks = await listWebhooks(deps, { taskId: task.task_id });
    const body = taskView({ task, session: session(request), now: deps.clock.now(), notice, draft, statusPageUrl: statusPagePath(task.task_id), files, limits, webhooks });
    return render(reply, session(request), 'queue', `Task ${task.task_id.slice(0, 18)}…`, body, status);
  };

  scope.get('/operator/tasks/:task_id', guarded, async (request, reply) => {
    const { task_id } = request.params as { task_id: string };
    return showTask(request, reply, task_id, kit.doneNotice(request));
  });

  scope.post('/operator/tasks/:task_id/:action', guarded, async (request, reply) => {
    const { task_id, action } = request.params as { task_id: string; action: string };
    if (!(TASK_ACTIONS as readonly string[]).includes(action)) throw new AppError('not_found', 'No such action.');
    const form = (request.body ?? {}) as Form;
    const patch = patchFor(action as TaskAction, form);
    try {
      await patchTask(deps, task_id, patch);
    } catch (error) {
      if (!isAppError(error) || error.code === 'task_not_found') throw error;
      const details = (error.extras.details as string[] | undefined) ?? [];
      const draft = action === 'reject' ? { reason: notes(form, 'operator_notes') } : { notes: notes(form, 'operator_notes') };
      return showTask(request, reply, task_id, flash('error', error.message, details), draft, error.status);
    }
    const done = action === 'accept' ? 'accepted' : action === 'deliver' ? 'delivered' : action === 'reject' ? 'rejected' : action;
    return reply.redirect(`/operator/tasks/${encodeURIComponent(task_id)}?done=${done}`, 303);
  });

  // An undelivered webhook event of the task becomes due now (same use case as the admin API's retry).
  scope.post('/operator/webhooks/:id/retry', guarded, async (request, reply) => {
    const event = await retryWebhook(deps, (request.params as { id: string }).id);
    return reply.redirect(`/operator/tasks/${encodeURIComponent(event.task_id)}?done=webhook`, 303);
  });
}

/** The PATCH body each console action sends to the one transition service. */
function patchFor(action: TaskAction, form: Form): Record<string, unknown> {
  switch (action) {
    case 'accept': {
      const eta = localToIso(form, 'eta_local');
      return eta ? { status: 'accepted', eta } : { status: 'accepted' };
    }
    case 'deliver':
      return { status: 'delivered', operator_notes: notes(form, 'operator_notes') ?? '' };
    case 'notes':
      return { operator_notes: notes(form, 'operator_notes') ?? '' };
    case 'reject': {
      // An empty reason clears the notes: a saved draft deliverable must not reach the requester as the reason.
      const reason = notes(form, 'operator_notes')?.trim();
      return { status: 'rejected', operator_notes: reason ? reason : null };
    }
    case 'eta':
      return { eta: localToIso(form, 'eta_local') ?? '' };
  }
}
