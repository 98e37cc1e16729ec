import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { IMPORT_MAX_BODY_BYTES, IMPORT_MAX_RECORDS, ImportBodySchema, ImportResultSchema } from '../../domain/tasks/import-schemas.js';
import { ErrorSchema } from '../../domain/tasks/schemas.js';
import type { ServiceDeps } from '../../services/context.js';
import { importTasks } from '../../services/tasks/import.js';
import { actorOf, requireAdmin } from '../admin-auth.js';
import { unvalidatedBody } from '../bodies/validator.js';

const errors = (...codes: number[]) => Object.fromEntries(codes.map((code) => [code, ErrorSchema]));

/**
 * `POST /api/v1/admin/tasks/import` (contract "Test tasks and imported history"): a thin adapter
 * over services/tasks/import.ts. Its body limit is its own (10 MB, not the API's 64 KB): an export is
 * large by nature, and only the operator's key reaches it (checked on request, before the body).
 */
export async function registerImportRoutes(app: FastifyInstance, deps: ServiceDeps): Promise<void> {
  const noStore = async (_request: FastifyRequest, reply: FastifyReply) => {
    reply.header('Cache-Control', 'no-store');
  };
  app.post(
    '/api/v1/admin/tasks/import',
    {
      onRequest: [requireAdmin(deps), noStore],
      bodyLimit: IMPORT_MAX_BODY_BYTES,
      config: { kind: 'admin', role: 'admin' },
      schema: {
        operationId: 'adminImportTasks',
        summary: 'Import task records exported from another deployment',
        description:
          `At most ${IMPORT_MAX_RECORDS} records and 10 MB per call (more is 413 payload_too_large). Each record is validated and stored on its own ` +
          '(its own transaction): invalid ones are listed in errors by index, an existing task_id is skipped (idempotent). Ids, statuses (the retired ' +
          'under_review and in_progress included), history, timestamps, operator_notes and receipts are kept exactly as given. Nothing is mailed.',
        tags: ['admin'],
        body: unvalidatedBody(ImportBodySchema),
        response: { 200: ImportResultSchema, ...errors(400, 401, 413, 415) },
      },
    },
    async (request) => importTasks(deps, actorOf(request), request.body),
  );
}
