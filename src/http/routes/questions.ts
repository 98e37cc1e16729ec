import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import Type from 'typebox';
import { AnswerInputSchema, AskedQuestionSchema, QuestionInputSchema } from '../../domain/questions/questions.js';
import { ErrorSchema, PublicTaskSchema } from '../../domain/tasks/schemas.js';
import type { ServiceDeps } from '../../services/context.js';
import { answerQuestion, askQuestion, parseAnswerBody } from '../../services/questions/questions.js';
import { actorOf, requireAdmin } from '../admin-auth.js';
import { unvalidatedBody } from '../bodies/validator.js';

const errors = (...codes: number[]) => Object.fromEntries(codes.map((code) => [code, ErrorSchema]));

/**
 * Questions (contract "Questions from the operator, answers from the requester"): the operator
 * asks through the admin API, the requester answers with the task id as the only credential.
 * Thin adapters over services/questions/questions.ts.
 */
export function registerQuestionRoutes(server: FastifyInstance, deps: ServiceDeps): void {
  const app = server.withTypeProvider<TypeBoxTypeProvider>();
  const noStore = async (_request: FastifyRequest, reply: FastifyReply) => {
    reply.header('Cache-Control', 'no-store');
  };

  app.post(
    '/api/v1/admin/tasks/:task_id/questions',
    {
      onRequest: [requireAdmin(deps), noStore],
      config: { kind: 'admin', role: 'operator' },
      schema: {
        operationId: 'adminAskQuestion',
        summary: 'Ask the requester a question about an open task',
        description:
          'The public task then lists it in questions with awaiting_answer true; webhook task.question, and a mail to the contact address for e-mail delivery. ' +
          'A delivered or rejected task: 409 invalid_transition.',
        tags: ['admin'],
        params: Type.Object({ task_id: Type.String({ maxLength: 200 }) }),
        body: unvalidatedBody(QuestionInputSchema),
        response: { 201: AskedQuestionSchema, ...errors(400, 401, 404, 409, 413, 415, 422) },
      },
    },
    async (request, reply) => reply.code(201).send(await askQuestion(deps, actorOf(request), request.params.task_id, request.body)),
  );

  app.post(
    '/api/v1/tasks/:task_id/questions/:question_id/answer',
    {
      // Counted as a read: no task or message quota (contract), but not free of the per-client limit.
      config: { kind: 'read' },
      schema: {
        operationId: 'answerQuestion',
        summary: "Answer the operator's question",
        description:
          'When a task has awaiting_answer true, answer the open question (questions[].answer null) here; no authentication beyond the task id. ' +
          '200 with the task. Each question takes one answer: 409 already_answered; unknown question 404 question_not_found.',
        tags: ['tasks'],
        params: Type.Object({ task_id: Type.String({ maxLength: 200 }), question_id: Type.String({ maxLength: 200 }) }),
        body: unvalidatedBody(AnswerInputSchema),
        response: { 200: PublicTaskSchema, ...errors(400, 404, 409, 413, 415, 422, 429) },
      },
    },
    async (request, reply) => {
      const { task_id, question_id } = request.params;
      const answer = parseAnswerBody(request.body);
      return reply.header('Cache-Control', 'no-store').send(await answerQuestion(deps, { taskId: task_id, questionId: question_id, answer }));
    },
  );
}
