import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import Type from 'typebox';
import { ErrorSchema } from '../../domain/tasks/schemas.js';
import type { ServiceDeps } from '../../services/context.js';
import { requestWithdrawal } from '../../services/tasks/withdrawal.js';
import { callerFrom } from '../client.js';

const WithdrawalResponseSchema = Type.Object(
  {
    task_id: Type.String(),
    status: Type.String({ description: 'The task status, unchanged: the operator decides, and withdraws the task by rejecting it.' }),
    message: Type.String(),
  },
  { description: 'A withdrawal request recorded for the operator.' },
);

/**
 * POST /api/v1/tasks/{task_id}/cancel (contract, "Agent control and development"): a one-call
 * withdrawal request, the same service function as MCP tasks/cancel. It sends the operator a
 * message naming the task (same blocklist and message quota as POST /api/v1/messages) and answers
 * 202 with the unchanged status; a repeat answers the first request again.
 */
export function registerWithdrawalRoutes(server: FastifyInstance, deps: ServiceDeps): void {
  const app = server.withTypeProvider<TypeBoxTypeProvider>();
  app.post(
    '/api/v1/tasks/:task_id/cancel',
    {
      config: { kind: 'message' },
      schema: {
        operationId: 'cancelTask',
        summary: 'Ask the operator to withdraw a task',
        description:
          'No body and no authentication beyond the task id. Records a withdrawal request for the operator (as a message naming the task would, same limits) ' +
          'and answers 202 with the task\'s unchanged status: the operator decides, and withdraws it by rejecting it with "Withdrawn at the requester\'s request." ' +
          'A delivered or rejected task: 409 invalid_transition.',
        tags: ['tasks'],
        params: Type.Object({ task_id: Type.String({ maxLength: 200 }) }),
        response: { 202: WithdrawalResponseSchema, 403: ErrorSchema, 404: ErrorSchema, 409: ErrorSchema, 429: ErrorSchema },
      },
    },
    async (request, reply) => {
      const { task_id, status, message } = await requestWithdrawal(deps, callerFrom(request, deps), request.params.task_id);
      return reply.code(202).header('Cache-Control', 'no-store').send({ task_id, status, message });
    },
  );
}
