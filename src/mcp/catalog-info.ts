import Type, { type Static } from 'typebox';
import { publicLimits } from '../docs/limits.js';
import { CoverageSchema } from '../domain/tasks/coverage.js';
import { CatalogEntrySchema, ProfileSchema } from '../domain/tasks/profile.js';
import { DELIVERY_MODES, OUTPUT_FORMATS, TASK_TYPES } from '../domain/tasks/task.js';
import type { ServiceDeps } from '../services/context.js';
import { coverage } from '../services/tasks/coverage.js';
import { SERVICE_NAME } from '../version.js';

/**
 * What `get_human_services` returns: everything a model needs before it submits — catalog,
 * operator, policy, limits, live coverage and how to submit and poll — generated from the same profile, catalog
 * and config as every other document, so no two places can disagree.
 */

const LimitsSchema = Type.Object(
  {
    task_submissions_per_client: Type.Object({ per_hour: Type.Integer(), per_day: Type.Integer() }),
    messages_per_client: Type.Object({ per_hour: Type.Integer(), per_day: Type.Integer() }),
    status_poll_tasks_per_client_per_day: Type.Integer(),
    duplicate_window_hours: Type.Integer(),
    idempotency_window_hours: Type.Integer(),
    daily_windows_reset: Type.String(),
  },
  { additionalProperties: true, description: 'The running limits (the same numbers as every document).' },
);

export const HumanServicesSchema = Type.Object(
  {
    service: Type.String(),
    version: Type.String(),
    summary: Type.String(),
    operator: ProfileSchema.properties.operator,
    response_target_hours: Type.Number({ description: 'The operator aims to review every task within this many hours.' }),
    policy: ProfileSchema.properties.policy,
    rejected_task_types: ProfileSchema.properties.rejected_task_types,
    task_types: Type.Array(Type.Enum([...TASK_TYPES])),
    delivery_modes: Type.Array(Type.Enum([...DELIVERY_MODES])),
    output_formats: Type.Array(Type.String(), { description: 'Suggested output_format values; free text is accepted too.' }),
    services: Type.Array(CatalogEntrySchema, { description: 'The service catalog: what the operator offers, with an example request each.' }),
    limits: LimitsSchema,
    coverage: CoverageSchema,
    pricing: Type.Object({ model: Type.String(), note: Type.String() }),
    how_to: Type.Object({
      submit: Type.String(),
      poll: Type.String(),
      receive_result: Type.String(),
      message: Type.String(),
      retry_safely: Type.String(),
    }),
    endpoints: Type.Object({
      mcp: Type.String(),
      rest_submit: Type.String(),
      rest_status: Type.String({ description: 'Template: replace {task_id}.' }),
      rest_messages: Type.String(),
      rest_coverage: Type.String(),
      openapi: Type.String(),
    }),
  },
  { description: 'The operator, the service catalog, the policy and the limits.' },
);
export type HumanServices = Static<typeof HumanServicesSchema>;

export async function humanServices(deps: ServiceDeps): Promise<HumanServices> {
  const { config, profile, catalog } = deps;
  const base = config.baseUrl;
  const l = config.limits;
  return {
    service: SERVICE_NAME,
    version: deps.version,
    summary:
      'A human operator performs tasks that need physical presence, human perception or human judgment. ' +
      'Every task is reviewed by a person before it is accepted. Free during the pilot; no authentication; the service never asks for payment or credentials.',
    operator: profile.operator,
    response_target_hours: profile.response_target_hours,
    policy: profile.policy,
    rejected_task_types: profile.rejected_task_types,
    task_types: [...TASK_TYPES],
    delivery_modes: [...DELIVERY_MODES],
    output_formats: [...OUTPUT_FORMATS],
    services: catalog,
    limits: publicLimits(config),
    coverage: await coverage(deps),
    pricing: { model: 'free_pilot', note: 'The pilot is free. budget_usd is deprecated: accepted and ignored.' },
    how_to: {
      submit:
        'Check coverage first (how soon a task of your type is seen, accepted and delivered); pass dry_run: true to run every check without submitting. ' +
        `Call submit_human_task (or POST ${base}/api/v1/tasks) once per real task. It returns at once with task_id and status "submitted"; ` +
        `the work is not done in the call. At most ${l.tasksPerHour} tasks per hour and ${l.tasksPerDay} per day per client.`,
      poll:
        `Call check_task_status with the task_id (or GET status_url) no more than every few minutes; the operator aims to review within ` +
        `${profile.response_target_hours} hours. Stop polling once the status is delivered or rejected (both final).`,
      receive_result:
        'By default the result is e-mailed to contact_email. With delivery "status_poll" (the no-mailbox path, ' +
        `${l.statusPollPerDay} ${l.statusPollPerDay === 1 ? 'task' : 'tasks'} with delivery status_poll per client per day) the result appears as text in operator_notes of check_task_status.`,
      message: 'Call message_human_operator for questions, scoping or to withdraw a task (name its task_id). The operator answers by e-mail to reply_to.',
      retry_safely:
        `Pass the same idempotency_key with the same arguments to retry after a network error: within ${l.idempotencyWindowHours} hours it returns ` +
        'the original answer instead of a second task. A resubmitted identical task is refused as duplicate_task with the existing task id.',
    },
    endpoints: {
      mcp: `${base}/mcp`,
      rest_submit: `${base}/api/v1/tasks`,
      rest_status: `${base}/api/v1/tasks/{task_id}`,
      rest_messages: `${base}/api/v1/messages`,
      rest_coverage: `${base}/api/v1/coverage`,
      openapi: `${base}/openapi.json`,
    },
  };
}
