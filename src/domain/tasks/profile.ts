import Type, { type Static } from 'typebox';
import { TASK_TYPES } from './task.js';

/** The task types, one schema for the catalog, requests and answers alike (schemas.ts). */
export const TaskTypeSchema = Type.Enum([...TASK_TYPES], { description: 'What kind of human work this is.' });

/**
 * The deployment profile (who the operator is, where and when they work, what they will not do)
 * and the services catalog. Both live in config files the operator edits — defaults ship in
 * config/ — and every document, page and MCP tool is generated from them. The schemas live here;
 * src/config-files.ts loads and checks the files at start.
 */

export const ProfileSchema = Type.Object({
  operator: Type.Object({
    name: Type.String({ minLength: 1, maxLength: 200 }),
    role: Type.String({ minLength: 1, maxLength: 500 }),
    languages: Type.Array(Type.String({ maxLength: 50 }), { minItems: 1 }),
    service_area: Type.String({ maxLength: 500, description: 'Where physical tasks can be done.' }),
    timezone: Type.String({ maxLength: 64 }),
    working_hours: Type.String({ maxLength: 200 }),
  }),
  response_target_hours: Type.Number({ minimum: 1, maximum: 720 }),
  policy: Type.Object({
    will_not_do: Type.Array(Type.String({ maxLength: 300 }), { description: 'Kinds of task rejected at review whatever their type.' }),
    review: Type.String({ maxLength: 2000 }),
    privacy: Type.String({ maxLength: 2000 }),
  }),
  rejected_task_types: Type.Array(Type.String({ maxLength: 200 }), { description: 'Kinds of request never accepted (free text).' }),
});
export type Profile = Static<typeof ProfileSchema>;

export const CatalogEntrySchema = Type.Object({
  service_id: Type.String({ pattern: '^[a-z0-9][a-z0-9_-]{0,63}$' }),
  task_type: TaskTypeSchema,
  title: Type.String({ minLength: 1, maxLength: 200 }),
  description: Type.String({ minLength: 1, maxLength: 2000 }),
  example_request: Type.Record(Type.String(), Type.Unknown(), { description: 'A task request body that would be accepted.' }),
  output_formats: Type.Array(Type.String({ maxLength: 200 }), { minItems: 1 }),
  location_required: Type.Boolean(),
  estimated_response_time: Type.String({ maxLength: 200, description: 'Free text, e.g. "review within 12 hours; delivery 1-3 days".' }),
  example_response_schema: Type.Optional(
    Type.Record(Type.String(), Type.Unknown(), {
      description: 'A response_schema that suits this service: send it with a task to get the answer back as JSON valid against it (result).',
    }),
  ),
});
export type CatalogEntry = Static<typeof CatalogEntrySchema>;
export const CatalogSchema = Type.Array(CatalogEntrySchema, { minItems: 1 });
