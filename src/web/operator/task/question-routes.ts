import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import Type from 'typebox';
import { isAppError } from '../../../domain/errors.js';
import { actorOf } from '../../../http/admin-auth.js';
import type { ServiceDeps } from '../../../services/context.js';
import { askQuestion } from '../../../services/questions/questions.js';
import { type ConsoleKit, FOR_OPERATOR, type Form, HIDDEN, notes, PARAM } from '../console-kit.js';
import { flash } from '../layout.js';
import { showTaskPage } from './task-routes.js';

/** The console's ask form (docs/questions.md): the same askQuestion as the admin API. */
export function registerQuestionRoutes(plain: FastifyInstance, deps: ServiceDeps, kit: ConsoleKit): void {
  const scope = plain.withTypeProvider<TypeBoxTypeProvider>();
  scope.post(
    '/operator/tasks/:task_id/questions',
    { ...kit.guarded, config: FOR_OPERATOR, schema: { ...HIDDEN, params: Type.Object({ task_id: PARAM }) } },
    async (request, reply) => {
      const { task_id } = request.params;
      const question = notes((request.body ?? {}) as Form, 'question') ?? '';
      try {
        await askQuestion(deps, actorOf(request), task_id, { question });
      } catch (error) {
        if (!isAppError(error) || error.code === 'task_not_found') throw error;
        const details = (error.extras.details as string[] | undefined) ?? [];
        return showTaskPage(deps, kit, request, reply, task_id, {
          notice: flash('error', error.message, details),
          questionDraft: question,
          status: error.status,
        });
      }
      return reply.redirect(`/operator/tasks/${encodeURIComponent(task_id)}?done=asked`, 303);
    },
  );
}
