import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import type { FastifyRequest } from 'fastify';
import Type, { type TObject, type TSchema } from 'typebox';
import { Compile } from 'typebox/compile';
import { typeEnums } from '../domain/answers/json-schema.js';
import { isAppError, validationFailed } from '../domain/errors.js';
import { IDEMPOTENCY_KEY_PATTERN, isIdempotencyKey } from '../domain/ids.js';
import { MessageThreadSchema } from '../domain/questions/threads.js';
import { WEBHOOK_WHEN } from '../domain/tasks/callback-url.js';
import {
  DryRunResponseSchema,
  ErrorSchema,
  MessageResponseSchema,
  MyTasksPageSchema,
  MyTasksQuerySchema,
  messageInputSchema,
  PublicTaskSchema,
  SubmissionResponseSchema,
  taskInputSchema,
} from '../domain/tasks/schemas.js';
import { callerFrom } from '../http/client.js';
import { listMyTasks } from '../services/agents/my-tasks.js';
import type { ServiceDeps } from '../services/context.js';
import { readThread, sendMessage } from '../services/messages/messages.js';
import { answerQuestion } from '../services/questions/questions.js';
import { dryRunTask, submitTask } from '../services/tasks/tasks.js';
import { awaitTaskUpdate, MAX_TOOL_WAIT_SECONDS } from '../services/waiting/task-watch.js';
import { HumanServicesSchema, humanServices } from './catalog-info.js';
import { AWAITING_ANSWER_GUIDE, answerToolInput, threadToolInput } from './questions.js';
import { TASK_CARD_TOOL_META } from './task-card.js';

/**
 * The six tools, one record each: name, description (written for a model), input and output
 * schema, and handler. tools/list of both protocol revisions, the server card and the OpenAI and
 * Anthropic exports publish the definitions; both revisions run the handlers (runTool). Input
 * schemas are the REST body schemas of src/domain/tasks/schemas.ts, built from the running limits,
 * so MCP and REST validate the same fields the same way; a handler is a thin adapter over the
 * same service function as the REST route, called with the HTTP caller's identity. Output schemas
 * are the REST response schemas.
 */

export const TOOL_NAMES = [
  'get_human_services',
  'submit_human_task',
  'check_task_status',
  'message_human_operator',
  'answer_operator_question',
  'check_message_thread',
  'list_my_tasks',
] as const;
export type ToolName = (typeof TOOL_NAMES)[number];

type Args = Record<string, unknown>;
type Handler = (request: FastifyRequest, args: Args, signal: AbortSignal) => Promise<object>;

export interface ToolRecord {
  name: ToolName;
  /** What tools/list, the server card and the tool exports publish. */
  definition: Tool;
  /** Runs a call for one HTTP request (whose caller the service sees); refusals are thrown AppErrors. */
  handle: Handler;
}

function record(definition: Tool, handle: Handler): ToolRecord {
  return { name: definition.name as ToolName, definition, handle };
}

/** The definitions, in tools/list order. */
export function definitionsOf(tools: readonly ToolRecord[]): Tool[] {
  return tools.map((tool) => tool.definition);
}

export function isToolName(name: string): name is ToolName {
  return (TOOL_NAMES as readonly string[]).includes(name);
}

/**
 * Checks the arguments a handler reads itself (not those a service function checks, as over REST)
 * against the tool's compiled input schema, every failing field at once and in the schema's order.
 * A required argument sent as null or "" is missing; an optional one sent as null is absent.
 * `say` replaces the message of a field given but wrong, whose rule a model needs in one sentence.
 */
function argumentChecker(schema: TObject, say: Record<string, string> = {}): (args: Args) => void {
  const compiled = Compile(schema);
  const fields = Object.keys(schema.properties);
  const required = new Set<string>((schema.required as string[] | undefined) ?? []);
  const properties = schema.properties as Record<string, { maxLength?: number }>;
  type SchemaError = { keyword: string; instancePath: string; params: Record<string, unknown> };
  const message = (field: string, error: SchemaError): string => {
    if (error.keyword === 'required') return `${field} is required`;
    const said = say[field];
    if (said !== undefined) return said;
    if (error.keyword === 'maxLength') return `${field} must be at most ${properties[field]?.maxLength} characters`;
    return `${field} must be a string`;
  };
  return (args) => {
    const value: Args = {};
    for (const field of fields) {
      const given = args[field];
      if (given === undefined || given === null || (given === '' && required.has(field))) continue;
      value[field] = given;
    }
    const problems = new Map<string, string>();
    for (const error of compiled.Errors(value) as Iterable<SchemaError>) {
      const named = error.keyword === 'required' ? ((error.params.requiredProperties as string[] | undefined) ?? []) : [error.instancePath.split('/')[1] ?? ''];
      for (const field of named) if (!problems.has(field)) problems.set(field, message(field, error));
    }
    if (problems.size > 0) throw validationFailed(fields.filter((field) => problems.has(field)).map((field) => problems.get(field) as string));
  };
}

/** answer_operator_question reads the ids itself; the answer is checked by answerQuestion, as over REST. */
const checkAnswerArguments = argumentChecker(
  Type.Object({ task_id: answerToolInput.properties.task_id, question_id: answerToolInput.properties.question_id }),
  {
    task_id: 'task_id must be a string of at most 200 characters',
    question_id: 'question_id must be a string of at most 200 characters',
  },
);

/** submit_human_task's own argument besides the task and its key: a dry run (contract "Know before you ask"). */
const DryRunArgument = Type.Object({
  dry_run: Type.Optional(
    Type.Boolean({
      description:
        'Optional. true: run every check a submission runs (fields, e-mail, limits, duplicates, blocks, caps) and answer {dry_run, would_accept, limits} ' +
        'or the exact refusal, without creating anything, sending anything or using quota. Use it to know before you ask.',
    }),
  ),
});
const checkDryRunArgument = argumentChecker(DryRunArgument, { dry_run: 'dry_run must be true or false' });

const IDEMPOTENCY_KEY_RULE = 'idempotency_key must be 1 to 255 visible ASCII characters (no spaces)';

/** The idempotency_key argument plays the Idempotency-Key header's part. */
function idempotencyKeyOf(deps: ServiceDeps, args: Args, task: Args): string | undefined {
  const key = args.idempotency_key;
  if (key === undefined || key === null) return undefined;
  if (isIdempotencyKey(key)) return key;
  // Report every field error at once, as REST does: the task's own errors plus this one.
  try {
    deps.validators.task(task, deps.clock.now());
  } catch (error) {
    if (isAppError(error) && error.code === 'validation_failed') {
      throw validationFailed([...((error.extras.details as string[] | undefined) ?? []), IDEMPOTENCY_KEY_RULE]);
    }
    throw error;
  }
  throw validationFailed([IDEMPOTENCY_KEY_RULE]);
}

/** TypeBox schemas carry non-enumerable markers; a tool schema is plain JSON, with a type beside every enum. */
function json(schema: TSchema): Record<string, unknown> {
  const plain = JSON.parse(JSON.stringify(schema)) as Record<string, unknown>;
  typeEnums(plain);
  return plain;
}

/**
 * Every result, success or refusal, must match the declared outputSchema: the SDK's own client
 * (1.x) checks structuredContent against it even when isError is true (typescript-sdk#1943), and
 * refusals carry the REST error body. So the schema is "the REST response, or the REST error body".
 */
function outputSchema(...successes: TSchema[]): Tool['outputSchema'] {
  return {
    type: 'object',
    description:
      'On success the REST response body; when isError is true the REST error body (error, message, details, ...). ' +
      'For submit_human_task called as an MCP task, tasks/result gives the final task (isError when it was rejected).',
    anyOf: [...successes.map(json), json(ErrorSchema)],
  };
}

function inputSchema(schema: TSchema): Tool['inputSchema'] {
  return json(schema) as Tool['inputSchema'];
}

export function buildTools(deps: ServiceDeps): ToolRecord[] {
  const l = deps.config.limits;
  const hours = deps.profile.response_target_hours;
  const base = deps.config.baseUrl;
  const taskInput = taskInputSchema(l);
  const submitInput = Type.Object(
    {
      ...taskInput.properties,
      ...DryRunArgument.properties,
      idempotency_key: Type.Optional(
        Type.String({
          pattern: IDEMPOTENCY_KEY_PATTERN,
          description:
            `Optional. 1 to 255 visible ASCII characters, e.g. a UUID you generate per task. Retrying with the same key and the same arguments within ${l.idempotencyWindowHours} hours ` +
            'returns the original answer instead of creating a second task; the same key with different arguments is refused (validation_failed).',
        }),
      ),
    },
    { description: 'A task request, plus an optional idempotency_key and dry_run.' },
  );
  const statusInput = Type.Object({
    task_id: Type.String({ maxLength: 200, description: 'The task_id returned by submit_human_task, shaped task-<year>-<32 hex>.' }),
    wait_seconds: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: MAX_TOOL_WAIT_SECONDS,
        description:
          `Optional, 0 to ${MAX_TOOL_WAIT_SECONDS}. Hold the call up to this many seconds until the task changes (its updated_at differs from known_updated_at) ` +
          'instead of returning at once; a final task returns at once. Default 0.',
      }),
    ),
    known_updated_at: Type.Optional(
      Type.String({
        maxLength: 64,
        description:
          'Optional. The updated_at of the task as you last saw it; with wait_seconds, the call returns as soon as the task has changed since. Default: its current updated_at.',
      }),
    ),
  });

  const checkStatusArguments = argumentChecker(statusInput, {
    wait_seconds: `wait_seconds must be a whole number from 0 to ${MAX_TOOL_WAIT_SECONDS}`,
    known_updated_at: 'known_updated_at must be the updated_at string of the task you hold',
  });

  return [
    record(
      {
        name: 'get_human_services',
        title: 'What the human operator can do',
        description:
          'Call this first, before submitting anything, to learn what the human operator can and cannot do. ' +
          'Returns the service catalog (one entry per task_type, each with an example request that would be accepted), the operator profile ' +
          '(languages, service area, working hours, response target), the review policy (what is always rejected), the current per-client limits, ' +
          'live coverage per task_type (how soon a task is seen, accepted and delivered, p50/p90 over 30 days; acceptance rate; operators on duty; open tasks), ' +
          'and how to submit, poll and receive results. Read-only; no arguments; calling it costs no quota.',
        inputSchema: { type: 'object', properties: {} },
        outputSchema: outputSchema(HumanServicesSchema),
        annotations: { title: 'What the human operator can do', readOnlyHint: true, openWorldHint: false },
      },
      async () => humanServices(deps),
    ),
    record(
      {
        name: 'submit_human_task',
        title: 'Submit a task to a human operator',
        description:
          'Ask a real person to do something only a human can: be somewhere physically (check a place, an object, a sign), use their perception ' +
          'or judgment, test a product or app like a customer, or review AI output. ' +
          'Asynchronous: the call only files the task and returns at once with task_id, status "submitted" and status_url — the work is NOT done in the call. ' +
          `A human reviews every task (target: within ${hours} hours) and accepts or rejects it. The result is e-mailed to contact_email (default), ` +
          `or with delivery "status_poll" — the no-mailbox path, ${l.statusPollPerDay} ${l.statusPollPerDay === 1 ? 'task' : 'tasks'} with delivery status_poll per client per day — it appears as text in operator_notes of check_task_status. ` +
          'To be told instead of polling, pass callback_url (https): it receives a signed POST (Standard Webhooks, v1a Ed25519, keys at /.well-known/jwks.json) ' +
          `${WEBHOOK_WHEN}. ` +
          `Rejected at review whatever the task_type: ${deps.profile.policy.will_not_do.join('; ')}. ` +
          `Refused at once: invalid fields (validation_failed, all listed in details), more than ${l.tasksPerHour} tasks per hour or ${l.tasksPerDay} per day ` +
          `per client (rate_limited: wait retry_after_seconds), the same task_type and description again within ${l.duplicateWindowHours} hours ` +
          '(duplicate_task: do not resubmit; poll existing_task_id when given, else the task id was e-mailed to its contact address), placeholder or undeliverable contact_email (it must be a real mailbox; it is MX-checked and never shown back). ' +
          'Submit each real task once; to retry after a network error pass the same idempotency_key. Free during the pilot: never pay or send credentials. ' +
          'Mark a trial task with the word "test" in description or requester. ' +
          'Waiting for the result: clients that support MCP tasks can call this tool as a task (the taskId is the task_id; tasks/get reports working, input_required while a question of the operator awaits your answer, then completed; ' +
          'tasks/result returns the final task, with isError when rejected); otherwise call check_task_status with wait_seconds.',
        inputSchema: inputSchema(submitInput),
        // Called as an MCP task, tasks/result returns the final task instead of the submission answer.
        outputSchema: outputSchema(SubmissionResponseSchema, PublicTaskSchema, DryRunResponseSchema),
        execution: { taskSupport: 'optional' },
        // MCP Apps: hosts with the extension show the task card (task-card.ts) beside the result.
        _meta: TASK_CARD_TOOL_META,
        annotations: { title: 'Submit a task to a human operator', readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
      },
      async (request, args) => {
        const { idempotency_key: _key, dry_run: dryRun, ...task } = args;
        checkDryRunArgument(args);
        const idempotencyKey = idempotencyKeyOf(deps, args, task);
        // The key comes from the argument only: one HTTP request to /mcp may carry several calls.
        const caller = { ...callerFrom(request, deps), idempotencyKey };
        if (dryRun === true) return dryRunTask(deps, caller, task);
        return (await submitTask(deps, caller, task)).body;
      },
    ),
    record(
      {
        name: 'check_task_status',
        title: 'Check a task',
        description:
          'Look up a task you submitted, by the task_id submit_human_task returned. Returns the task: status (submitted, then accepted and delivered, ' +
          'or rejected), status_history, eta once accepted, operator_notes (for delivery "status_poll" the deliverable itself; for a rejection the reason), ' +
          'and once delivered a signed receipt (EdDSA JWS) with deliverable_sha256, and attachments: the delivered files (photos, videos, documents), ' +
          'each with name, media_type, size, sha256 and a download url (no bytes inline; the receipt signs every sha256, so a downloaded file is checked by hashing it). ' +
          'A task submitted with a response_schema carries result: the structured answer, valid against that schema, once delivered (null before). ' +
          `Poll politely: a person does the work, so check no more often than every few minutes (every 15-30 minutes is plenty; the review target is ${hours} hours). ` +
          `To wait without polling, pass wait_seconds (up to ${MAX_TOOL_WAIT_SECONDS}) and known_updated_at (the updated_at you last saw): the call returns as soon as the task changes, ` +
          'or after wait_seconds with the task unchanged; call again the same way to keep waiting. ' +
          `Stop polling once the status is delivered or rejected — both are final. The same data is at status_url (GET ${base}/api/v1/tasks/{task_id}). ` +
          `${AWAITING_ANSWER_GUIDE} ` +
          'Refused: an unknown task_id (task_not_found). Read-only.',
        inputSchema: inputSchema(statusInput),
        outputSchema: outputSchema(PublicTaskSchema),
        _meta: TASK_CARD_TOOL_META,
        annotations: { title: 'Check a task', readOnlyHint: true, openWorldHint: false },
      },
      async (_request, args, signal) => {
        checkStatusArguments(args);
        const known = args.known_updated_at ?? undefined;
        return awaitTaskUpdate(deps, args.task_id as string, {
          waitSeconds: (args.wait_seconds ?? 0) as number,
          knownUpdatedAt: known as string | undefined,
          signal,
        });
      },
    ),
    record(
      {
        name: 'message_human_operator',
        title: 'Message the human operator',
        description:
          'Send the human operator a free-form message: a question before submitting, scoping a task, extra details for an open task, or withdrawing a task ' +
          '(name its task_id in the message). Returns message_id at once; the operator answers by e-mail to reply_to, which must be a real mailbox ' +
          `(MX-checked, never shown back), usually within ${hours} hours. ` +
          'It also returns a thread_token, shown once: keep it, and read the operator’s replies with check_message_thread {message_id, thread_token} if you cannot read that mailbox. ' +
          `Refused: invalid fields (validation_failed), more than ${l.messagesPerHour} messages per hour or ${l.messagesPerDay} per day per client (rate_limited). ` +
          'Do not use it to ask for a status (use check_task_status) or to submit work (use submit_human_task).',
        inputSchema: inputSchema(messageInputSchema(l)),
        outputSchema: outputSchema(MessageResponseSchema),
        annotations: { title: 'Message the human operator', readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
      },
      async (request, args) => {
        const caller = { ...callerFrom(request, deps), idempotencyKey: undefined };
        return (await sendMessage(deps, caller, args)).body;
      },
    ),
    record(
      {
        name: 'answer_operator_question',
        title: "Answer the operator's question",
        description:
          'Answer a question the human operator asked about your task: when check_task_status shows awaiting_answer true, take the question_id of the question ' +
          'whose answer is null and pass your answer (1 to 5000 characters). Returns the task with the answer recorded; the operator is told at once and goes on with the work. ' +
          'Each question takes one answer (already_answered); an unknown question_id is question_not_found. No quota is used.',
        inputSchema: inputSchema(answerToolInput),
        outputSchema: outputSchema(PublicTaskSchema),
        _meta: TASK_CARD_TOOL_META,
        annotations: { title: "Answer the operator's question", readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
      },
      async (_request, args) => {
        checkAnswerArguments(args);
        return answerQuestion(deps, { taskId: args.task_id as string, questionId: args.question_id as string, answer: args.answer });
      },
    ),
    record(
      {
        name: 'check_message_thread',
        title: "Read the operator's replies to a message",
        description:
          'Read the replies the human operator wrote to a message you sent with message_human_operator: pass its message_id and the thread_token it returned. ' +
          'Returns {message_id, created_at, subject, replies: [{reply_id, message, created_at}]}, replies oldest first ([] until the operator answers; usually within ' +
          `${hours} hours, so look again every few hours at most). A wrong token or unknown message_id is not_found. Read-only.`,
        inputSchema: inputSchema(threadToolInput),
        outputSchema: outputSchema(MessageThreadSchema),
        annotations: { title: "Read the operator's replies to a message", readOnlyHint: true, openWorldHint: false },
      },
      async (_request, args) => {
        const { message_id: id, thread_token: token } = args;
        // Whatever is wrong with the pair, the answer is the same not_found as over REST.
        return readThread(deps, typeof id === 'string' ? id : '', typeof token === 'string' ? `Bearer ${token}` : undefined);
      },
    ),
    record(
      {
        name: 'list_my_tasks',
        title: 'List the tasks you submitted',
        description:
          'Your own tasks, newest update first, a page at a time: {tasks, next_cursor} (pass next_cursor back as cursor until it is null; limit 1 to 100, ' +
          'default 20; status filters). It needs a verified agent: the HTTP request to /mcp signed with Web Bot Auth (HTTP Message Signatures, your key ' +
          `directory named in Signature-Agent; see ${base}/api.md, Verified agents). Unsigned, it answers signature_required: keep your task ids instead. Read-only.`,
        inputSchema: inputSchema(MyTasksQuerySchema),
        outputSchema: outputSchema(MyTasksPageSchema),
        annotations: { title: 'List the tasks you submitted', readOnlyHint: true, openWorldHint: false },
      },
      async (request, args) => listMyTasks(deps, callerFrom(request, deps), args),
    ),
  ];
}

/** Guidance sent with `initialize`: how the four tools fit together. */
export function serverInstructions(deps: ServiceDeps): string {
  return (
    'A human operator performs real-world and judgment tasks for agents. Start with get_human_services to see what is offered and what is refused. ' +
    'submit_human_task is asynchronous: keep the task_id it returns and wait for the status to become delivered or rejected — either call submit_human_task as an MCP task ' +
    '(the taskId is the task_id; tasks/result returns the final task), or call check_task_status with wait_seconds and known_updated_at, which returns as soon as the task changes. ' +
    'Without these, poll check_task_status every few minutes at most. ' +
    `${AWAITING_ANSWER_GUIDE} ` +
    `Use message_human_operator for questions or to withdraw a task. A human reviews every task (target: within ${deps.profile.response_target_hours} hours). ` +
    'When a tool returns isError, read the error code and the hint, and act on it instead of retrying at once.'
  );
}
