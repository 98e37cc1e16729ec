import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import Type, { type Static } from 'typebox';
import {
  DryRunResponseSchema,
  ErrorSchema,
  HealthSchema,
  MessageResponseSchema,
  MyTasksPageSchema,
  MyTasksQuerySchema,
  messageInputSchema,
  PublicTaskSchema,
  ReadinessSchema,
  SubmissionResponseSchema,
  taskInputSchema,
} from '../../domain/tasks/schemas.js';
import { isFinal } from '../../domain/tasks/task.js';
import { listMyTasks } from '../../services/agents/my-tasks.js';
import type { ServiceDeps } from '../../services/context.js';
import { sendMessage } from '../../services/messages/messages.js';
import { health } from '../../services/runtime/health.js';
import { readiness } from '../../services/runtime/readiness.js';
import { dryRunTask, submitTask } from '../../services/tasks/tasks.js';
import { waitForChange } from '../../services/waiting/task-watch.js';
import { unvalidatedBody } from '../bodies/validator.js';
import { callerFrom } from '../client.js';
import { noneMatch, preferredWait, representationOf } from '../conditional.js';

/** Route kinds, read by abuse control for rate limits and RateLimit-Policy. */
export type RouteKind = 'read' | 'task' | 'message' | 'admin' | 'none';
declare module 'fastify' {
  interface FastifyContextConfig {
    kind?: RouteKind;
    /**
     * The route may hold a request open while it waits for a change (long-poll, MCP waits): a
     * request timeout (docs/operations.md#store-faults-srcstorefaultsts-srcstoredbts) must exempt it; the route bounds the hold itself.
     */
    holdsRequests?: boolean;
  }
}

/** The status read's route (also answered by the fast lane, http/lanes/fast-reads.ts). */
export const STATUS_ROUTE = '/api/v1/tasks/:task_id';
/** The submission's route (also held back under load, http/lanes/submission-lane.ts). */
export const SUBMIT_ROUTE = '/api/v1/tasks';

/** `?dry_run=true` makes a submission a dry run (contract "Know before you ask"); any other value is 400 malformed_request. */
const DryRunQuerySchema = Type.Object({
  dry_run: Type.Optional(
    Type.Union([Type.Literal('true'), Type.Literal('false')], { description: 'true: run every check, create nothing, use no quota (counts as a read).' }),
  ),
});

/** A request to the submission route that is a dry run (counted as a read, not held as a submission). */
export function isDryRun(query: unknown): boolean {
  return typeof query === 'object' && query !== null && (query as { dry_run?: unknown }).dry_run === 'true';
}

const TaskIdParams = Type.Object({ task_id: Type.String({ maxLength: 200 }) });
const errors = (...codes: number[]) => Object.fromEntries(codes.map((code) => [code, ErrorSchema]));

/** The public REST core: thin adapters over the service layer. */
export function registerPublicRoutes(server: FastifyInstance, deps: ServiceDeps): void {
  const app = server.withTypeProvider<TypeBoxTypeProvider>();
  const limits = deps.config.limits;

  app.post(
    SUBMIT_ROUTE,
    {
      config: { kind: 'task' },
      schema: {
        operationId: 'submitTask',
        summary: 'Submit a task for a human operator',
        description:
          'Asynchronous: returns 202 with the task id at once; poll status_url. Optional Idempotency-Key header. ' +
          'With ?dry_run=true: every check a submission runs (validation, e-mail and MX, limits, duplicates, blocks, caps), and 200 {dry_run, would_accept, limits} ' +
          'or the error the submission would get; nothing is created or sent, no quota is used, an Idempotency-Key is not recorded, and it counts as a read.',
        tags: ['tasks'],
        querystring: DryRunQuerySchema,
        body: unvalidatedBody(taskInputSchema(limits)),
        headers: Type.Object({ 'idempotency-key': Type.Optional(Type.String({ maxLength: 255 })) }),
        response: { 200: DryRunResponseSchema, 202: SubmissionResponseSchema, ...errors(400, 403, 409, 413, 415, 422, 429) },
      },
    },
    async (request, reply) => {
      if (request.query.dry_run === 'true') return reply.code(200).send(await dryRunTask(deps, callerFrom(request, deps), request.body));
      const result = await submitTask(deps, callerFrom(request, deps), request.body);
      // A replay creates nothing: say so, so an agent can tell it from a first submission.
      if (result.replayed) reply.header('Idempotent-Replayed', 'true');
      return reply
        .code(result.statusCode as 202)
        .headers(result.headers)
        .header('Location', result.location)
        .send(result.body);
    },
  );

  app.get(
    SUBMIT_ROUTE,
    {
      config: { kind: 'read' },
      // The service function is the one validator (MCP list_my_tasks calls it too); the schema documents the query.
      attachValidation: true,
      schema: {
        operationId: 'listMyTasks',
        summary: "A verified agent's own tasks, newest update first",
        description:
          'Needs a Web Bot Auth signature (HTTP Message Signatures: Signature, Signature-Input, Signature-Agent; see /api.md, Verified agents): ' +
          'unsigned, 400 signature_required. Pass next_cursor back as cursor until it is null.',
        tags: ['tasks'],
        querystring: MyTasksQuerySchema,
        response: { 200: MyTasksPageSchema, ...errors(400, 429) },
      },
    },
    async (request) => listMyTasks(deps, callerFrom(request, deps), request.query),
  );

  // Registered without the type provider: the handler sends the body it already serialized
  // (a string, hashed for the ETag) and a bodiless 304, which the typed reply would not accept.
  server.get<{ Params: Static<typeof TaskIdParams> }>(
    STATUS_ROUTE,
    {
      config: { kind: 'read', holdsRequests: true },
      schema: {
        operationId: 'getTask',
        summary: 'Get a task and its status',
        description:
          'Carries a strong ETag. Send it back in If-None-Match to get 304 (no body) while nothing changed; add Prefer: wait=N (1-60 seconds) ' +
          'to hold the request until the task changes (200 with the task) or N seconds pass (304), instead of polling.',
        tags: ['tasks'],
        params: TaskIdParams,
        headers: Type.Object({
          'if-none-match': Type.Optional(Type.String({ description: 'The ETag of the task you hold: 304 while it is still current.' })),
          prefer: Type.Optional(
            Type.String({ description: 'wait=N (RFC 7240), 1-60 seconds, with If-None-Match: hold until the task changes or N seconds pass.' }),
          ),
        }),
        response: {
          200: PublicTaskSchema,
          304: Type.Null({ description: 'Not modified: the ETag in If-None-Match is current. No body.' }),
          ...errors(404, 429),
        },
      },
    },
    async (request, reply) => {
      const { task_id } = request.params;
      const known = request.headers['if-none-match'];
      // A hold is possible only with If-None-Match and a usable Prefer: wait; only then does the
      // read need a mark on the change feed (taken before reading, so no change slips between).
      const wait = known === undefined ? 0 : preferredWait(request.headers.prefer);
      const task = await waitForChange(deps, task_id, {
        timeoutMs: wait * 1000,
        // A delivered or rejected task will not change: never held, its current ETag gets 304 at once
        // (as MCP's check_task_status answers a final task at once).
        unchanged: (latest) => !isFinal(latest.status) && noneMatch(known, representationOf(reply, latest).etag),
        // Held requests have their share of the connections (task-waits.ts, HELD_SHARE): past it,
        // the current status at once, the wait not applied, and a hint to come back later.
        whenFull: () => reply.header('Retry-After', '5'),
        beforeHold: () => reply.header('Preference-Applied', `wait=${wait}`),
        // A client that goes away releases its place at once.
        closes: reply.raw,
      });
      const { body, etag } = representationOf(reply, task);
      if (noneMatch(known, etag)) return reply.code(304).header('etag', etag).send();
      // private, no-cache: the id is an access token (no shared cache may keep the task), and the
      // poller revalidates cheaply with the ETag.
      return reply.header('etag', etag).header('cache-control', 'private, no-cache').type('application/json; charset=utf-8').send(body);
    },
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
        body: unvalidatedBody(messageInputSchema(limits)),
        response: { 201: MessageResponseSchema, ...errors(400, 403, 413, 415, 422, 429) },
      },
    },
    async (request, reply) => {
      const result = await sendMessage(deps, callerFrom(request, deps), request.body);
      return reply
        .code(result.statusCode as 201)
        .headers(result.headers)
        .send(result.body);
    },
  );

  // Health is a read like any other (decision, docs/decisions.md#edges-an-agent-trips-over-issue-14): counted against READ_LIMIT_PER_MINUTE
  // and answered with all four RateLimit fields, so no header advertises a limit it does not apply.
  // A probe every few seconds is far below the limit.
  app.get(
    '/api/v1/health',
    {
      config: { kind: 'read' },
      schema: {
        operationId: 'health',
        summary: 'Health of the service and its store',
        tags: ['meta'],
        response: { 200: HealthSchema, 503: ErrorSchema },
      },
    },
    async () => health(deps),
  );

  // Readiness is a read too, for the same reason: an orchestrator's probe stays far below the limit.
  app.get(
    '/api/v1/health/ready',
    {
      config: { kind: 'read' },
      schema: {
        operationId: 'readiness',
        summary: 'Readiness for orchestrators: store reachable, migrations applied, workers running',
        description:
          'Liveness is GET /api/v1/health. This answers 503 service_unavailable (details name each failing check, Retry-After) until the instance can serve.',
        tags: ['meta'],
        response: { 200: ReadinessSchema, 503: ErrorSchema },
      },
    },
    async () => readiness(deps),
  );
}
