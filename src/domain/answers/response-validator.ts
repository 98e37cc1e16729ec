import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { canonicalJson, sha256Hex } from '../canonical.js';
import { validationFailed } from '../errors.js';
import { pointerSegment, vetResponseSchema } from './response-schema.js';

/**
 * Compiles vetted response schemas with Ajv's 2020-12 build (strict mode, ajv-formats) and checks
 * results against them. Ajv generates code from the schema; only a schema that passed
 * vetResponseSchema (the contract's keywords, bounded size, depth and expansion) ever reaches it,
 * and no text of the agent is evaluated otherwise. Compiled validators are kept in a small LRU
 * keyed by the schema's hash, so a task's schema compiles once per process, not per delivery.
 */

type AjvError = { instancePath: string; keyword: string; params: Record<string, unknown>; message?: string };
type Validate = ((data: unknown) => boolean) & { errors?: AjvError[] | null };

const CACHE_MAX = 256;
const MAX_RESULT_DETAILS = 50;

function newAjv() {
  // allErrors: every violation is reported; strict: a schema Ajv would read loosely is refused;
  // ownProperties: a property named toString or constructor is the result's own, never inherited.
  const ajv = new Ajv2020.default({ strict: true, allErrors: true, allowUnionTypes: true, ownProperties: true, code: { esm: false } });
  addFormats.default(ajv, ['date', 'date-time', 'time', 'email', 'uri']);
  return ajv;
}

const ajv = newAjv();
const cache = new Map<string, Validate>();

/** A refusal of the schema as the submission's 422 detail lines. */
function schemaRefused(details: string[]) {
  return validationFailed(details);
}

/**
 * The validator of a response schema: vetted, compiled and cached. Throws 422 `validation_failed`
 * with details naming `response_schema` and the keyword's JSON pointer; never anything else.
 */
export function compileResponseSchema(schema: unknown): Validate {
  const key = sha256Hex(canonicalJsonOrEmpty(schema));
  const hit = cache.get(key);
  if (hit) {
    cache.delete(key);
    cache.set(key, hit);
    return hit;
  }
  const { problems } = vetResponseSchema(schema);
  if (problems.length > 0) throw schemaRefused(problems);
  let validate: Validate;
  try {
    // A copy: Ajv keeps the object it compiled; it is removed from Ajv's own cache right after,
    // which would otherwise grow with every distinct schema.
    const copy = structuredClone(schema) as object;
    validate = ajv.compile(copy) as Validate;
    ajv.removeSchema(copy);
  } catch (error) {
    throw schemaRefused([ajvCompileDetail(error)]);
  }
  cache.set(key, validate);
  if (cache.size > CACHE_MAX) cache.delete(cache.keys().next().value as string);
  return validate;
}

function canonicalJsonOrEmpty(value: unknown): string {
  try {
    return canonicalJson(value);
  } catch {
    return '';
  }
}

/** Ajv's strict-mode refusal, with the pointer it names when it names one. */
function ajvCompileDetail(error: unknown): string {
  const text = error instanceof Error ? error.message : 'the schema cannot be compiled';
  const at = /at "#([^"]*)"/.exec(text)?.[1] ?? '';
  return `response_schema${at}: ${text.replace(/^strict mode: /, '').slice(0, 300)}`;
}

/** Details lines for a result that fails its schema: `result/<pointer>: why`, at most 50. */
export function resultProblems(schema: unknown, result: unknown): string[] {
  const validate = compileResponseSchema(schema);
  if (validate(result)) return [];
  const lines: string[] = [];
  for (const error of validate.errors ?? []) {
    const line = describeError(error);
    if (!lines.includes(line)) lines.push(line);
    if (lines.length >= MAX_RESULT_DETAILS) break;
  }
  return lines;
}

const TYPE_NAMES: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  integer: 'an integer',
  boolean: 'a boolean (true or false)',
  object: 'an object',
  array: 'an array',
  null: 'null',
};

const FORMAT_NAMES: Record<string, string> = {
  date: 'a date (YYYY-MM-DD)',
  'date-time': 'a date-time with offset (e.g. 2030-01-31T17:00:00Z)',
  time: 'a time with offset (e.g. 09:30:00Z)',
  email: 'an e-mail address',
  uri: 'an absolute URI',
};

function describeError(error: AjvError): string {
  const p = error.params;
  let path = `result${error.instancePath}`;
  let why: string;
  switch (error.keyword) {
    case 'type': {
      const types = String(p.type).split(',');
      why = `must be ${types.map((t) => TYPE_NAMES[t] ?? t).join(' or ')}`;
      break;
    }
    case 'required':
      path += `/${pointerSegment(String(p.missingProperty))}`;
      why = 'is required';
      break;
    case 'additionalProperties':
      path += `/${pointerSegment(String(p.additionalProperty))}`;
      why = 'is not a property of the schema';
      break;
    case 'enum':
      why = `must be one of: ${(p.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`.slice(0, 500);
      break;
    case 'const':
      why = `must be ${JSON.stringify(p.allowedValue)}`.slice(0, 500);
      break;
    case 'format':
      why = `must be ${FORMAT_NAMES[String(p.format)] ?? String(p.format)}`;
      break;
    default:
      why = error.message ?? `fails ${error.keyword}`;
  }
  return `${path}: ${why}`;
}
