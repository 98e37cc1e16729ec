import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import Type from 'typebox';
import { isAppError } from '../../../domain/errors.js';
import type { SafeHtml } from '../../../domain/html.js';
import { TASK_ID_PATTERN } from '../../../domain/ids.js';
import { actorOf } from '../../../http/admin-auth.js';
import { blockTaskSender } from '../../../services/console/block-sender.js';
import { holdAction } from '../../../services/console/held-actions.js';
import type { ServiceDeps } from '../../../services/context.js';
import { markDone } from '../../../services/messages/states.js';
import { type ConsoleKit, FOR_ADMIN, FOR_OPERATOR, type Form, HIDDEN, notes, PARAM, text } from '../console-kit.js';
import { flash } from '../layout.js';
import { showTaskPage } from '../task/task-routes.js';
import type { BlockDraft } from './talk-view.js';

/**
 * Talking with the operator, from the task page (contract "Talking with the operator"): a reply to
 * a message (mailed to its reply_to, threaded, recorded), marking one done, and blocking the task's sender in one
 * action. The withdrawal is a task action (task-routes.ts). Thin adapters over the services.
 */
export function registerTalkRoutes(plain: FastifyInstance, deps: ServiceDeps, kit: ConsoleKit): void {
  const { guarded } = kit;
  // Typed from the route schemas: handlers read params without casts.
  const scope = plain.withTypeProvider<TypeBoxTypeProvider>();

  /** The task page again, with what went wrong and what the operator chose. */
  const refused = (request: FastifyRequest, reply: FastifyReply, taskId: string, notice: SafeHtml, status: number, block?: BlockDraft) =>
    showTaskPage(deps, kit, request, reply, taskId, { notice, status, ...(block ? { block } : {}) });

  scope.post(
    '/operator/messages/:message_id/reply',
    { ...guarded, config: FOR_OPERATOR, schema: { ...HIDDEN, params: Type.Object({ message_id: PARAM }) } },
    async (request, reply) => {
      const { message_id } = request.params;
      const form = (request.body ?? {}) as Form;
      const taskId = text(form, 'task_id') ?? '';
      // Back to the task the reply was written on; only a well-formed id, so never off the console.
      // From the messages page, to all messages: the answered one has left the waiting ones.
      const back = TASK_ID_PATTERN.test(taskId) ? `/operator/tasks/${taskId}?` : '/operator/messages?show=all&';
      try {
        // Held for undo (docs/inbox.md): back to the task page, or to the held reply's own page from the messages list.
        const onTask = TASK_ID_PATTERN.test(taskId);
        const held = await holdAction(deps, actorOf(request), {
          taskId: onTask ? taskId : '',
          kind: 'reply',
          payload: { message_id, message: notes(form, 'message') ?? '' },
        });
        if (held) return reply.redirect(onTask ? `/operator/tasks/${taskId}` : `/operator/held/${held.id}`, 303);
      } catch (error) {
        if (!isAppError(error) || !TASK_ID_PATTERN.test(taskId) || error.code === 'not_found') throw error;
        return refused(
          request,
          reply,
          taskId,
          flash('error', `The reply was not sent: ${error.message}`, (error.extras.details as string[] | undefined) ?? []),
          error.status,
        );
      }
      return reply.redirect(`${back}done=replied`, 303);
    },
  );

  // "Mark done" (docs/inbox.md): the message stops waiting; back where it was pressed.
  scope.post(
    '/operator/messages/:message_id/done',
    { ...guarded, config: FOR_OPERATOR, schema: { ...HIDDEN, params: Type.Object({ message_id: PARAM }) } },
    async (request, reply) => {
      const form = (request.body ?? {}) as Form;
      await markDone(deps, actorOf(request), request.params.message_id);
      const taskId = text(form, 'task_id') ?? '';
      const back = text(form, 'back') === 'queue' ? '/operator' : TASK_ID_PATTERN.test(taskId) ? `/operator/tasks/${taskId}` : '/operator/messages';
      return reply.redirect(`${back}?done=message_done`, 303);
    },
  );

  scope.post(
    '/operator/tasks/:task_id/block',
    { ...guarded, config: FOR_ADMIN, schema: { ...HIDDEN, params: Type.Object({ task_id: PARAM }) } },
    async (request, reply) => {
      const { task_id } = request.params;
      const form = (request.body ?? {}) as Form;
      const kind = text(form, 'kind') ?? '';
      const reason = text(form, 'reason');
      try {
        await blockTaskSender(deps, actorOf(request), task_id, kind, reason);
      } catch (error) {
        if (!isAppError(error) || error.code === 'task_not_found') throw error;
        return refused(request, reply, task_id, flash('error', error.message, (error.extras.details as string[] | undefined) ?? []), error.status, {
          kind,
          reason,
        });
      }
      return reply.redirect(`/operator/tasks/${encodeURIComponent(task_id)}?done=blocked`, 303);
    },
  );
}
