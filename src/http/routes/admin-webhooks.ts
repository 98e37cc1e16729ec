import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import Type, { type TSchema } from 'typebox';
import { ErrorSchema } from '../../domain/tasks/schemas.js';
import type { ServiceDeps } from '../../services/context.js';
import { listWebhooks, retryWebhook, WEBHOOK_LIST_MAX } from '../../services/delivery/webhooks.js';
import { WEBHOOK_STATUSES } from '../../store/delivery/webhooks-repo.js';
import { actorOf, requireAdmin } from '../admin-auth.js';

const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

const WebhookEventSchema = Type.Object(
  {
    id: Type.String({ description: 'evt-<year>-<32 hex>: the webhook-id header, the same on every attempt.' }),
    task_id: Type.String(),
    event: Type.String({ description: 'task.accepted, task.delivered or task.rejected' }),
    target: Type.String({ description: 'The origin of the callback URL (its path is not shown).' }),
    status: Type.Enum([...WEBHOOK_STATUSES], { description: 'pending, delivered, failed (attempts exhausted) or gone (the receiver answered 410).' }),
    attempts: Type.Integer(),
    last_status_code: Nullable(Type.Integer()),
    last_error: Nullable(Type.String()),
    created_at: Type.String({ format: 'date-time' }),
    delivered_at: Nullable(Type.String({ format: 'date-time' })),
    next_attempt_at: Nullable(Type.String({ format: 'date-time', description: 'When the next attempt is due; null unless pending.' })),
    attempt_log: Type.Array(
      Type.Object({
        attempt: Type.Integer(),
        at: Type.String({ format: 'date-time' }),
        status_code: Nullable(Type.Integer({ description: 'The receiver’s HTTP status; null when no answer came (timeout, refused, connection error).' })),
        error: Nullable(Type.String()),
        duration_ms: Type.Integer(),
      }),
    ),
  },
  { description: 'One webhook event and its delivery attempts.' },
);

/** The operator's view of webhook deliveries, and the retry. */
export async function registerWebhookRoutes(server: FastifyInstance, deps: ServiceDeps): Promise<void> {
  const app = server.withTypeProvider<TypeBoxTypeProvider>();
  const onRequest = requireAdmin(deps);

  app.get(
    '/api/v1/admin/webhooks',
    {
      onRequest,
      config: { kind: 'admin', role: 'admin' },
      schema: {
        operationId: 'adminListWebhooks',
        summary: 'Webhook events and their delivery attempts, newest first',
        description: 'Operator key required. With task_id, the events of that task; without, the newest events of all tasks.',
        tags: ['admin'],
        querystring: Type.Object({
          task_id: Type.Optional(Type.String({ maxLength: 200 })),
          limit: Type.Optional(Type.Integer({ minimum: 1, maximum: WEBHOOK_LIST_MAX })),
        }),
        response: { 200: Type.Object({ webhooks: Type.Array(WebhookEventSchema) }), 400: ErrorSchema, 401: ErrorSchema },
      },
    },
    async (request) => {
      const { task_id, limit } = request.query;
      return { webhooks: await listWebhooks(deps, { taskId: task_id, limit }) };
    },
  );

  app.post(
    '/api/v1/admin/webhooks/:id/retry',
    {
      onRequest,
      config: { kind: 'admin', role: 'admin' },
      schema: {
        operationId: 'adminRetryWebhook',
        summary: 'Make an undelivered webhook event due now, with a fresh attempt budget',
        description: 'Pending, failed and gone (410) events can be retried: 404 for an unknown id, 409 for a delivered event or one being delivered right now.',
        tags: ['admin'],
        params: Type.Object({ id: Type.String({ maxLength: 100 }) }),
        response: { 200: WebhookEventSchema, 401: ErrorSchema, 404: ErrorSchema, 409: ErrorSchema },
      },
    },
    async (request) => retryWebhook(deps, actorOf(request), request.params.id),
  );
}
