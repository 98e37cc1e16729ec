import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, preHandlerAsyncHookHandler } from 'fastify';
import Type from 'typebox';
import { AppError, isAppError } from '../../../domain/errors.js';
import { assertRole } from '../../../domain/team/actor.js';
import { actorOf } from '../../../http/admin-auth.js';
import { acceptRawBodies, withUpload } from '../../../http/bodies/raw-upload.js';
import { downloadHeaders, sendStoredFile } from '../../../http/file-reply.js';
import { removeAttachment, uploadAttachment } from '../../../services/attachments/attachments.js';
import { openFile, thumbnail } from '../../../services/attachments/files.js';
import type { ServiceDeps } from '../../../services/context.js';
import { csrfMatches, readSession } from '../auth/session.js';
import { FOR_OPERATOR } from '../console-kit.js';

/**
 * The console's side of evidence files, over the same services as the admin API. The upload is
 * a raw-body XHR (the file itself, with progress), so its CSRF token travels in `X-CSRF-Token`
 * rather than a form field, and it answers JSON. Removal is a plain form POST (`guarded`).
 */

const HIDDEN = { hide: true } as const;
// Any text: the services answer 404 for ids they do not know.
const TaskParams = Type.Object({ task_id: Type.String() });
const FileParams = Type.Object({ task_id: Type.String(), attachment_id: Type.String() });

export function registerConsoleAttachmentRoutes(plain: FastifyInstance, deps: ServiceDeps, guarded: { preHandler: preHandlerAsyncHookHandler }): void {
  const config = FOR_OPERATOR;
  // Typed from the route schemas: handlers read params without casts.
  const scope = plain.withTypeProvider<TypeBoxTypeProvider>();

  // Its own scope: every body is a raw file here, and errors are JSON for the script.
  void plain.register(async (raw) => {
    acceptRawBodies(raw);
    const uploads = raw.withTypeProvider<TypeBoxTypeProvider>();
    uploads.setErrorHandler(async (error: Error & { statusCode?: number }, request, reply) => {
      const known = isAppError(error) ? error : undefined;
      if (!known) request.log.error({ err: error }, 'console upload failed');
      const failure = known ?? new AppError('internal_error', `Something went wrong on our side. Request id: ${request.id}.`);
      return reply.code(failure.status).type('application/json; charset=utf-8').send(failure.toBody());
    });
    uploads.post('/operator/tasks/:task_id/attachments', { config, schema: { ...HIDDEN, params: TaskParams } }, async (request, reply) => {
      const session = await readSession(deps, request);
      if (!session) throw new AppError('unauthorized', 'Sign in to the console again.');
      if (!csrfMatches(session, request.headers['x-csrf-token'])) {
        request.log.warn('console: upload without a valid CSRF token');
        throw new AppError('unauthorized', 'This page has expired or did not come from the console. Reload it and try again.');
      }
      assertRole(session.actor, request.routeOptions.config.role);
      const { task_id } = request.params;
      return reply.code(201).send(await withUpload(request, reply, (input) => uploadAttachment(deps, session.actor, task_id, input)));
    });
  });

  scope.post(
    '/operator/tasks/:task_id/attachments/:attachment_id/remove',
    { ...guarded, config, schema: { ...HIDDEN, params: FileParams } },
    async (request, reply) => {
      const { task_id, attachment_id } = request.params;
      await removeAttachment(deps, actorOf(request), task_id, attachment_id);
      return reply.redirect(`/operator/tasks/${encodeURIComponent(task_id)}?done=file_removed`, 303);
    },
  );

  scope.get(
    '/operator/tasks/:task_id/attachments/:attachment_id',
    { ...guarded, config, schema: { ...HIDDEN, params: FileParams } },
    async (request, reply) => {
      const { task_id, attachment_id } = request.params;
      return sendStoredFile(deps, request, reply, await openFile(deps, task_id, attachment_id, 'operator'), 'private, no-store');
    },
  );
  scope.get(
    '/operator/tasks/:task_id/attachments/:attachment_id/thumbnail',
    { ...guarded, config, schema: { ...HIDDEN, params: FileParams } },
    async (request, reply) => {
      const { task_id, attachment_id } = request.params;
      const preview = await thumbnail(deps, task_id, attachment_id, 'operator');
      downloadHeaders(reply, 'thumbnail.webp', 'image/webp', preview.sha256);
      return reply.send(preview.data);
    },
  );
}
