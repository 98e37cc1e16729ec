import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import Type, { type TSchema } from 'typebox';
import { AppError } from '../../domain/errors.js';
import { OUTBOX_STATUSES, OutboxQuerySchema } from '../../domain/tasks/admin-schemas.js';
import { ErrorSchema } from '../../domain/tasks/schemas.js';
import type { ServiceDeps } from '../../services/context.js';
import { countOutbox, getOutboxEntry, listOutbox, retryOutbox } from '../../services/delivery/outbox-admin.js';
import { actorOf, requireAdmin } from '../admin-auth.js';

const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

const OutboxEntrySchema = Type.Object(
  {
    id: Type.String(),
    kind: Type.String({ description: 'task_submitted, message_received, task_accepted, task_delivered, task_rejected or duplicate_notice' }),
    recipient: Type.String(),
    subject: Type.String(),
    status: Type.Enum([...OUTBOX_STATUSES]),
    attempts: Type.Integer(),
    last_error: Nullable(Type.String()),
    created_at: Type.String({ format: 'date-time' }),
    sent_at: Nullable(Type.String({ format: 'date-time' })),
    next_attempt_at: Type.String({ format: 'date-time' }),
    task_id: Nullable(Type.String()),
    message_id: Nullable(Type.String()),
  },
  { description: 'One mail in the outbox (bodies are not listed).' },
);

const Counts = Type.Object({ pending: Type.Integer(), sent: Type.Integer(), failed: Type.Integer() });

/** The outbox admin endpoints: what is pending, sent and failed (with the last error), and a retry. */
export async function registerOutboxRoutes(server: FastifyInstance, deps: ServiceDeps): Promise<void> {
  const app = server.withTypeProvider<TypeBoxTypeProvider>();
  // onRequest, not preHandler: a caller without the key gets 401 before any parameter is checked.
  const onRequest = requireAdmin(deps);

  app.get(
    '/api/v1/admin/outbox',
    {
      onRequest,
      config: { kind: 'admin', role: 'admin' },
      schema: {
        operationId: 'adminListOutbox',
        summary: 'Outgoing mail, newest first',
        description: 'Operator key required (Authorization: Bearer <ADMIN_KEY>).',
        tags: ['admin'],
        querystring: OutboxQuerySchema,
        response: { 200: Type.Object({ outbox: Type.Array(OutboxEntrySchema), counts: Counts }), 400: ErrorSchema, 401: ErrorSchema },
      },
    },
    async (request) => {
      const [outbox, counts] = await Promise.all([listOutbox(deps, request.query), countOutbox(deps)]);
      return { outbox, counts };
    },
  );

  app.post(
    '/api/v1/admin/outbox/:id/retry',
    {
      onRequest,
      config: { kind: 'admin', role: 'admin' },
      schema: {
        operationId: 'adminRetryOutbox',
        summary: 'Queue a failed mail again, due now',
        description: 'Only failed mails can be retried: 404 for an unknown id, 409 for a pending or sent mail.',
        tags: ['admin'],
        params: Type.Object({ id: Type.String({ maxLength: 100 }) }),
        response: { 200: OutboxEntrySchema, 401: ErrorSchema, 404: ErrorSchema, 409: ErrorSchema },
      },
    },
    async (request) => {
      const { id } = request.params;
      if (!(await retryOutbox(deps, actorOf(request), id))) {
        const entry = await getOutboxEntry(deps, id);
        if (!entry) throw new AppError('not_found', 'No mail in the outbox has that id.');
        throw new AppError('invalid_transition', `Only failed mail can be retried; this one is ${entry.status}.`, { from: entry.status, to: 'pending' });
      }
      const entry = await getOutboxEntry(deps, id);
      if (!entry) throw new AppError('not_found', 'No mail in the outbox has that id.');
      return entry;
    },
  );
}
