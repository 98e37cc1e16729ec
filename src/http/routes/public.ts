import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import Type from 'typebox';
import {
  ErrorSchema,
  HealthSchema,
  MessageResponseSchema,
  PublicTaskSchema,
  SubmissionResponseSchema,
  messageInputSchema,
  taskInputSchema,
} from '../../domain/schemas.js';
import type { ServiceDeps } from '../../services/context.js';
import { health } from '../../services/health.js';
import { sendMessage } from '../../services/messages.js';
import { getTask, submitTask } from '../../services/tasks.js';
import { callerFrom } from '../client.js';

/** Route kinds, read by abuse control for rate limits and RateLimit-Policy. */
export type RouteKind = 'read' | 'task' | 'message' | 'admin' | 'none';
declare module 'fastify' {
  interface FastifyContextConfig {
    kind?: RouteKind;
  }
}

const errors = (...codes: number[]) => Object.fromEntries(codes.map((code) => [code, ErrorSchema]));

/** The public REST core: thin adapters over the service layer. */
export function registerPublicRoutes(server: FastifyInstance, deps: ServiceDeps): void {
  const app = server.withTypeProvider<TypeBoxTypeProvider>();
  const limits = deps.config.limits;

  app.post(
    '/api/v1/tasks',
    {
      config: { kind: 'task' },
      schema: {
        operationId: 'submitTask',
        summary: 'Submit a task for a human operator',
        description: 'Asynchronous: returns 202 with the task id at once; poll status_url. Optional Idempotency-Key header.',
        tags: ['tasks'],
        body: taskInputSchema(limits),
        headers: Type.Object({ 'idempotency-key': Type.Optional(Type.String({ maxLength: 255 })) }),
        response: { 202: SubmissionResponseSchema, ...errors(400, 403, 409, 413, 415, 422, 429) },
      },
    },
    async (request, reply) => {
      const result = await submitTask(deps, callerFrom(request, deps), request.body);
      return reply.code(result.statusCode as 202).headers(result.headers).header('Location', result.location).send(result.body);
    },
  );

  app.get(
    '/api/v1/tasks/:task_id',
    {
      config: { kind: 'read' },
      schema: {
        operationId: 'getTask',
        summary: 'Get a task and its status',
        tags: ['tasks'],
        params: Type.Object({ task_id: Type.String({ maxLength: 200 }) }),
        response: { 200: PublicTaskSchema, ...errors(404, 429) },
      },
    },
    async (request) => getTask(deps, request.params.task_id),
  );

  app.post(
    '/api/v1/messages',
    {
      config: { kind: 'message' },
      schema: {
        operationId: 'sendMessage',
        summary: 'Send the operator a message',
        description: 'Questions, scoping, or withdrawing a task (name its task_id in the text).',
        tags: ['messages'],
        body: messageInputSchema(limits),
        response: { 201: MessageResponseSchema, ...errors(400, 403, 413, 415, 422, 429) },
      },
    },
    async (request, reply) => {
      const result = await sendMessage(deps, callerFrom(request, deps), request.body);
      return reply.code(result.statusCode as 201).headers(result.headers).send(result.body);
    },
  );

  app.get(
    '/api/v1/health',
    {
      config: { kind: 'none' },
      schema: {
        operationId: 'health',
        summary: 'Health of the service and its store',
        tags: ['meta'],
        response: { 200: HealthSchema, 503: ErrorSchema },
      },
    },
    async () => health(deps),
  );
}
