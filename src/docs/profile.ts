import { readFileSync } from 'node:fs';
import Type, { type Static } from 'typebox';
import { Compile } from 'typebox/compile';
import { ConfigError, type Config } from '../config.js';
import { TASK_TYPES } from '../domain/task.js';
import { projectPath } from '../paths.js';

/**
 * The deployment profile (who the operator is, where and when they work, what they will not do)
 * and the services catalog. Both live in config files the operator edits — defaults ship in
 * config/ — and every document, page and MCP tool is generated from them.
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
  task_type: Type.Enum([...TASK_TYPES]),
  title: Type.String({ minLength: 1, maxLength: 200 }),
  description: Type.String({ minLength: 1, maxLength: 2000 }),
  example_request: Type.Record(Type.String(), Type.Unknown(), { description: 'A task request body that would be accepted.' }),
  output_formats: Type.Array(Type.String({ maxLength: 200 }), { minItems: 1 }),
  location_required: Type.Boolean(),
  estimated_response_time: Type.String({ maxLength: 200, description: 'Free text, e.g. "review within 12 hours; delivery 1-3 days".' }),
});
export type CatalogEntry = Static<typeof CatalogEntrySchema>;
export const CatalogSchema = Type.Array(CatalogEntrySchema, { minItems: 1 });

const checkProfile = Compile(ProfileSchema);
const checkCatalog = Compile(CatalogSchema);

function readJson(file: string, variable: string): unknown {
  try {
    return JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new ConfigError(variable, `: cannot read ${String(file)} as JSON (${error instanceof Error ? error.message : String(error)})`);
  }
}

function firstProblem(errors: Iterable<{ instancePath: string; message: string }>): string {
  for (const e of errors) return `${e.instancePath || '/'} ${e.message}`;
  return 'is invalid';
}

const DEFAULT_PROFILE = projectPath('config', 'profile.json');
const DEFAULT_CATALOG = projectPath('config', 'catalog.json');

/** Loads and validates both files; a bad file stops the start with the variable's name. */
export function loadProfileAndCatalog(config: Pick<Config, 'profileFile' | 'catalogFile'>): { profile: Profile; catalog: CatalogEntry[] } {
  const profile = readJson(config.profileFile ?? DEFAULT_PROFILE, 'PROFILE_FILE');
  if (!checkProfile.Check(profile)) throw new ConfigError('PROFILE_FILE', `: ${firstProblem(checkProfile.Errors(profile))}`);
  const catalog = readJson(config.catalogFile ?? DEFAULT_CATALOG, 'CATALOG_FILE');
  if (!checkCatalog.Check(catalog)) throw new ConfigError('CATALOG_FILE', `: ${firstProblem(checkCatalog.Errors(catalog))}`);
  const ids = new Set<string>();
  for (const entry of catalog) {
    if (ids.has(entry.service_id)) throw new ConfigError('CATALOG_FILE', `: service_id "${entry.service_id}" appears twice`);
    ids.add(entry.service_id);
  }
  return { profile, catalog };
}
