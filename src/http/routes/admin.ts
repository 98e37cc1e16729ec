import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import Type from 'typebox';
import {
  AdminStatsSchema,
  AdminTaskDetailSchema,
  AdminTaskSchema,
  ApprovalDecisionSchema,
  MessageListSchema,
  MessageReplyInputSchema,
  MessageReplySchema,
  PageQuerySchema,
  QueueQuerySchema,
  QueueSchema,
  StatsQuerySchema,
  TaskPatchSchema,
} from '../../domain/tasks/admin-schemas.js';
import { ErrorSchema } from '../../domain/tasks/schemas.js';
import { decideApproval } from '../../services/console/approvals.js';
import { adminStats, listMessages, listQueue, viewTask } from '../../services/console/reads.js';
import { patchTask } from '../../services/console/transitions.js';
import type { ServiceDeps } from '../../services/context.js';
import { replyToMessage } from '../../services/messages/replies.js';
import { actorOf, requireAdmin } from '../admin-auth.js';
import { unvalidatedBody } from '../bodies/validator.js';
import { registerJwksRoute } from './jwks.js';

const errors = (...codes: number[]) => Object.fromEntries(codes.map((code) => [code, ErrorSchema]));
const TaskParams = Type.Object({ task_id: Type.String({ maxLength: 200 }) });

/**
 * The operator's admin API (contract "The operator (admin) API"): thin adapters over
 * services/operator*.ts. The key is checked on request, before the body is even read, so a caller
 * without it learns nothing but 401.
 */
export async function registerAdminRoutes(server: FastifyInstance, deps: ServiceDeps): Promise<void> {
  // Typed from the route schemas: handlers read query and params without casts.
  const app = server.withTypeProvider<TypeBoxTypeProvider>();
  // Operator data must never sit in a shared cache.
  const noStore = async (_request: FastifyRequest, reply: FastifyReply) => {
    reply.header('Cache-Control', 'no-store');
  };
  const onRequest = [requireAdmin(deps), noStore];
  registerJwksRoute(server, deps);

  app.get(
    '/api/v1/admin/tasks',
    {
      onRequest,
      config: { kind: 'admin', role: 'operator' },
      schema: {
        operationId: 'adminListTasks',
        summary: 'The operator queue, newest first',
        tags: ['admin'],
        querystring: QueueQuerySchema,
        response: { 200: QueueSchema, ...errors(400, 401) },
      },
    },
    async (request) => listQueue(deps, request.query),
  );

  app.get(
    '/api/v1/admin/tasks/:task_id',
    {
      onRequest,
      config: { kind: 'admin', role: 'operator' },
      schema: {
        operationId: 'adminGetTask',
        summary: 'One task in full; the first view stamps seen_by_operator_at',
        tags: ['admin'],
        params: TaskParams,
        response: { 200: AdminTaskDetailSchema, ...errors(401, 404) },
      },
    },
    async (request) => viewTask(deps, request.params.task_id),
  );

  for (const url of ['/api/v1/tasks/:task_id', '/api/v1/admin/tasks/:task_id']) {
    app.patch(
      url,
      {
        onRequest,
        config: { kind: 'admin', role: 'operator' },
        schema: {
          operationId: url.includes('/admin/') ? 'adminPatchTask' : 'patchTask',
          summary: 'Operator: change status (accept, deliver, reject) or edit eta and operator_notes',
          description:
            'submitted→accepted (eta optional), accepted→delivered (operator_notes required: the deliverable; issues the receipt), ' +
            'submitted|accepted→rejected (operator_notes = reason). Anything else is 409 invalid_transition with from and to.',
          tags: ['admin'],
          params: TaskParams,
          body: unvalidatedBody(TaskPatchSchema),
          response: { 200: AdminTaskSchema, ...errors(400, 401, 404, 409, 413, 415, 422) },
        },
      },
      async (request) => patchTask(deps, actorOf(request), request.params.task_id, request.body),
    );
  }

  app.post(
    '/api/v1/admin/tasks/:task_id/approvals',
    {
      onRequest,
      config: {
        kind: 'admin',
        role: 'operator',
        errors: {
          400: ['invalid_json', 'malformed_request', 'invalid_signature'],
          403: ['forbidden'],
          409: ['approval_not_allowed', 'invalid_transition'],
        },
      },
      schema: {
        operationId: 'adminDecideApproval',
        summary: 'Approve the proposed deliverable of a task needing more than one approval, or send it back with a reason',
        description:
          'A task submitted with approvals > 1: a delivery (PATCH status "delivered") proposes the deliverable; other operators approve it ' +
          '(decision "approve") or send it back (decision "send_back" with reason: approvals return to 0 and the proposer sees why). At the ' +
          'required count it is delivered (receipt_version 3). 409 approval_not_allowed: approving again (the proposer included) or nothing proposed. ' +
          'An assertion (WebAuthn, by one of your passkeys, over proposal.challenge) signs the approval; a bad one is 400 invalid_signature.',
        tags: ['admin'],
        params: TaskParams,
        body: unvalidatedBody(ApprovalDecisionSchema),
        response: { 200: AdminTaskSchema, ...errors(400, 401, 403, 404, 409, 413, 415, 422) },
      },
    },
    async (request) => decideApproval(deps, actorOf(request), request.params.task_id, request.body),
  );

  app.get(
    '/api/v1/admin/messages',
    {
      onRequest,
      config: { kind: 'admin', role: 'operator' },
      schema: {
        operationId: 'adminListMessages',
        summary: 'Messages to the operator, newest first, with the task ids they name',
        tags: ['admin'],
        querystring: PageQuerySchema,
        response: { 200: MessageListSchema, ...errors(400, 401) },
      },
    },
    async (request) => listMessages(deps, request.query),
  );

  app.post(
    '/api/v1/admin/messages/:message_id/reply',
    {
      onRequest,
      config: { kind: 'admin', role: 'operator' },
      schema: {
        operationId: 'adminReplyToMessage',
        summary: 'Answer a message: mailed to its reply_to from MAIL_FROM, threaded under it, and recorded on the task',
        tags: ['admin'],
        params: Type.Object({ message_id: Type.String({ maxLength: 200 }) }),
        body: unvalidatedBody(MessageReplyInputSchema),
        response: { 201: MessageReplySchema, ...errors(400, 401, 404, 413, 415, 422) },
      },
    },
    async (request, reply) => reply.code(201).send(await replyToMessage(deps, actorOf(request), request.params.message_id, request.body)),
  );

  app.get(
    '/api/v1/admin/stats',
    {
      onRequest,
      config: { kind: 'admin', role: 'operator' },
      schema: {
        operationId: 'adminStats',
        summary: "Counts by status, open queue, time to first view and to acceptance, today's daily caps",
        tags: ['admin'],
        querystring: StatsQuerySchema,
        response: { 200: AdminStatsSchema, ...errors(400, 401) },
      },
    },
    async (request) => adminStats(deps, request.query),
  );
}
