import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import Type from 'typebox';
import { MessageThreadSchema } from '../../domain/questions/threads.js';
import { ErrorSchema } from '../../domain/tasks/schemas.js';
import type { ServiceDeps } from '../../services/context.js';
import { readThread } from '../../services/messages/messages.js';

/** GET /api/v1/messages/{message_id} with the thread token as Bearer (docs/questions.md): the operator's replies. */
export function registerThreadRoutes(server: FastifyInstance, deps: ServiceDeps): void {
  const app = server.withTypeProvider<TypeBoxTypeProvider>();
  app.get(
    '/api/v1/messages/:message_id',
    {
      config: { kind: 'read' },
      schema: {
        operationId: 'getMessageThread',
        summary: "Read a message's thread: the operator's replies",
        description:
          'For agents without a mailbox: send the thread_token that POST /api/v1/messages returned as Authorization: Bearer <thread_token>. ' +
          'A wrong or missing token, or an unknown id, is 404 not_found (never 401), so ids cannot be probed.',
        tags: ['messages'],
        params: Type.Object({ message_id: Type.String({ maxLength: 200 }) }),
        headers: Type.Object({ authorization: Type.Optional(Type.String({ description: 'Bearer <thread_token>' })) }),
        response: { 200: MessageThreadSchema, 404: ErrorSchema, 429: ErrorSchema },
      },
    },
    async (request, reply) => {
      const thread = await readThread(deps, request.params.message_id, request.headers.authorization);
      return reply.header('Cache-Control', 'no-store').header('Vary', 'Authorization').send(thread);
    },
  );
}
