import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import Type from 'typebox';
import { AppError, isAppError } from '../../../domain/errors.js';
import type { SafeHtml } from '../../../domain/html.js';
import { actorOf } from '../../../http/admin-auth.js';
import { listTemplates, removeTemplate, saveTemplate } from '../../../services/console/templates.js';
import type { ServiceDeps } from '../../../services/context.js';
import { type ConsoleKit, FOR_ADMIN, FOR_OPERATOR, type Form, HIDDEN, PARAM, text } from '../console-kit.js';
import { flash } from '../layout.js';
import { type TemplateDraft, templatesView } from './templates-view.js';

/** The templates page: every operator reads it, an admin adds, changes and deletes (docs/inbox.md). */
export function registerTemplateRoutes(plain: FastifyInstance, deps: ServiceDeps, kit: ConsoleKit): void {
  const { guarded, render, session } = kit;
  const scope = plain.withTypeProvider<TypeBoxTypeProvider>();
  const show = async (request: FastifyRequest, reply: FastifyReply, notice?: SafeHtml, draft?: TemplateDraft, status = 200) =>
    render(
      reply,
      session(request),
      'none',
      'Templates',
      templatesView(await listTemplates(deps), session(request), { notice, ...(draft ? { draft } : {}) }),
      status,
    );
  const input = (form: Form) => ({ kind: text(form, 'kind') ?? '', name: text(form, 'name') ?? '', body: text(form, 'body') ?? '' });
  const refused = (request: FastifyRequest, reply: FastifyReply, error: unknown, draft: TemplateDraft) => {
    if (!isAppError(error) || error.code === 'not_found') throw error;
    return show(request, reply, flash('error', error.message, (error.extras.details as string[] | undefined) ?? []), draft, error.status);
  };

  const DONE: Record<string, string> = { added: 'Template added.', saved: 'Template saved.', deleted: 'Template deleted.' };
  scope.get('/operator/templates', { ...guarded, config: FOR_OPERATOR }, async (request, reply) => {
    const done = DONE[text(request.query as Form, 'done') ?? ''];
    return show(request, reply, done ? flash('ok', done) : undefined);
  });
  scope.post('/operator/templates', { ...guarded, config: FOR_ADMIN }, async (request, reply) => {
    const fields = input((request.body ?? {}) as Form);
    try {
      await saveTemplate(deps, actorOf(request), fields);
    } catch (error) {
      return refused(request, reply, error, fields);
    }
    return reply.redirect('/operator/templates?done=added', 303);
  });
  const withId = { ...guarded, config: FOR_ADMIN, schema: { ...HIDDEN, params: Type.Object({ id: PARAM }) } };
  scope.post('/operator/templates/:id', withId, async (request, reply) => {
    const fields = input((request.body ?? {}) as Form);
    try {
      await saveTemplate(deps, actorOf(request), fields, request.params.id);
    } catch (error) {
      return refused(request, reply, error, {});
    }
    return reply.redirect('/operator/templates?done=saved', 303);
  });
  scope.post('/operator/templates/:id/delete', withId, async (request, reply) => {
    if (!(await removeTemplate(deps, actorOf(request), request.params.id))) throw new AppError('not_found', 'No template has that id.');
    return reply.redirect('/operator/templates?done=deleted', 303);
  });
}
