import { readFileSync } from 'node:fs';
import { Compile } from 'typebox/compile';
import { type Config, ConfigError } from './config.js';
import { vetResponseSchema } from './domain/answers/response-schema.js';
import { type CatalogEntry, CatalogSchema, type Profile, ProfileSchema } from './domain/tasks/profile.js';
import { projectPath } from './paths.js';

/** Loading the deployment profile and services catalog files (PROFILE_FILE, CATALOG_FILE) at start. */

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
    // An example schema agents copy must be one the service accepts.
    const problems = entry.example_response_schema === undefined ? [] : vetResponseSchema(entry.example_response_schema).problems;
    if (problems.length > 0) throw new ConfigError('CATALOG_FILE', `: example_response_schema of "${entry.service_id}": ${problems[0]}`);
  }
  return { profile, catalog };
}
