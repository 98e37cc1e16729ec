import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import Type from 'typebox';
import { AppError } from '../../domain/errors.js';
import { ErrorSchema } from '../../domain/tasks/schemas.js';
import type { ServiceDeps } from '../../services/context.js';
import { requestCancellation } from '../../services/tasks/cancel.js';
import { callerFrom } from '../client.js';

const WithdrawalResponseSchema = Type.Object(
  {
    task_id: Type.String(),
    status: Type.String({
      description:
        '"rejected" when the task was withdrawn at once (it was submitted and nobody had accepted it); otherwise the task status, unchanged: the operator decides, and withdraws the task by rejecting it.',
    }),
    message: Type.String({ description: 'The rejection reason "Withdrawn at the requester\'s request." when withdrawn at once; otherwise what happens next.' }),
  },
  { description: 'The task withdrawn at once, or a withdrawal request recorded for the operator.' },
);

/**
 * POST /api/v1/tasks/{task_id}/cancel (contract, "Agent control and development" and "A2A 1.0"):
 * the requester's cancellation, the same service function as MCP tasks/cancel and A2A CancelTask
 * (services/tasks/cancel.ts). A submitted task nobody accepted is withdrawn at once (202, status
 * "rejected", the reason as message); an accepted one gets the operator a withdrawal request (202
 * with the unchanged status; a repeat answers the first request again); a final task is 409.
 */
export function registerWithdrawalRoutes(server: FastifyInstance, deps: ServiceDeps): void {
  const app = server.withTypeProvider<TypeBoxTypeProvider>();
  app.post(
    '/api/v1/tasks/:task_id/cancel',
    {
      config: { kind: 'message' },
      schema: {
        operationId: 'cancelTask',
        summary: 'Withdraw a task, or ask the operator to',
        description:
          'No body and no authentication beyond the task id. A submitted task nobody has accepted is withdrawn at once: ' +
          'rejected with the reason "Withdrawn at the requester\'s request." (mail and webhook as for any rejection; the operator is told), answered 202 with status "rejected" and the reason as message. ' +
          "An accepted task: a withdrawal request is recorded for the operator (as a message naming the task would) and the answer is 202 with the task's unchanged status: " +
          'the operator decides, and withdraws it by rejecting it with that reason. A delivered or rejected task: 409 invalid_transition.',
        tags: ['tasks'],
        params: Type.Object({ task_id: Type.String({ maxLength: 200 }) }),
        response: { 202: WithdrawalResponseSchema, 403: ErrorSchema, 404: ErrorSchema, 409: ErrorSchema, 429: ErrorSchema },
      },
    },
    async (request, reply) => {
      const { outcome, task, message } = await requestCancellation({ deps, caller: callerFrom(request, deps) }, request.params.task_id, 'rest');
      if (outcome === 'final') {
        throw new AppError('invalid_transition', `Task ${task.task_id} is already ${task.status}: there is nothing to withdraw.`);
      }
      return reply.code(202).header('Cache-Control', 'no-store').send({ task_id: task.task_id, status: task.status, message });
    },
  );
}
