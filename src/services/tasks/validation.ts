import type { TObject } from 'typebox';
import { Compile } from 'typebox/compile';
import { Settings } from 'typebox/system';
import type { Limits } from '../../config.js';
import { compileResponseSchema } from '../../domain/answers/response-validator.js';
import { answerRoom, minimumAnswerBytes } from '../../domain/answers/sample-answer.js';
import { AppError, isAppError, validationFailed } from '../../domain/errors.js';
import { bodyGuardError } from '../../domain/tasks/body-guard.js';
import { callbackUrlProblem } from '../../domain/tasks/callback-url.js';
import { type MessageInput, messageInputSchema, type TaskInput, taskInputSchema } from '../../domain/tasks/schemas.js';
import { hasVisibleText, normalizeText, ONE_LINE_PATTERN, ONE_LINE_RULE } from '../../domain/text.js';
import { parseDateTime } from '../../domain/time.js';

/**
 * Validation of payloads from their TypeBox schemas: one checker for agent payloads (REST, MCP and
 * the web form) and the operator's (admin API and console). Reports every failing field at once,
 * each message naming its field. Agents' unknown fields are ignored and listed as warnings; the
 * operator's are refused (a typo would silently do nothing).
 */

interface Checked<T> {
  value: T;
  warnings: string[];
}

// TypeBox stops at 8 errors by default; a task has ten fields and every failing one must be reported.
Settings.Set({ maxErrors: 64 });

/** Unknown fields listed one by one at most; the rest are counted in one last warning. */
const MAX_WARNINGS = 20;

/** What a date-time field must be, after its name. */
export const DATE_TIME_RULE = 'must be an ISO 8601 date-time, e.g. 2030-01-31T17:00:00Z';

type ErrorLike = { keyword: string; instancePath: string; params: Record<string, unknown>; message: string };

function describe(schema: TObject, field: string, error: ErrorLike): string {
  const prop = (schema.properties as Record<string, Record<string, unknown>>)[field] ?? {};
  const p = error.params;
  switch (error.keyword) {
    case 'type':
      return `${field} must be ${article(String(p.type ?? prop.type))}`;
    case 'minLength':
    case 'maxLength':
      return prop.minLength !== undefined && prop.maxLength !== undefined
        ? `${field} must be between ${String(prop.minLength)} and ${String(prop.maxLength)} characters`
        : `${field} must be at most ${String(prop.maxLength ?? p.limit)} characters`;
    case 'minimum':
    case 'maximum':
      return `${field} must be between ${String(prop.minimum)} and ${String(prop.maximum)}`;
    case 'enum':
      return `${field} must be one of: ${((prop.enum ?? p.allowedValues) as string[]).join(', ')}`;
    case 'pattern':
      return prop.pattern === ONE_LINE_PATTERN ? `${field} ${ONE_LINE_RULE}` : `${field} is invalid (${error.message})`;
    case 'format':
      return p.format === 'date-time' ? `${field} ${DATE_TIME_RULE}` : `${field} must be a valid e-mail address`;
    default:
      return `${field} is invalid (${error.message})`;
  }
}

function article(type: string): string {
  const names: Record<string, string> = {
    string: 'a string',
    boolean: 'a boolean (true or false)',
    number: 'a number',
    integer: 'an integer',
    object: 'an object',
  };
  return names[type] ?? type;
}

export interface CheckOptions {
  /** Fields the schema does not name: listed as warnings (agents), dropped, or refused (operator). */
  unknown: 'warn' | 'ignore' | 'refuse';
  /** Optional fields sent as null count as absent (default); false keeps null (it may mean "clear"). */
  nullIsAbsent?: boolean;
  /** One message per field, replacing whatever the schema would say about it. */
  messages?: Record<string, string>;
  /** Query strings: digits become numbers where the schema wants an integer. */
  coerce?: boolean;
  /** The detail for a body that is not a JSON object. */
  notAnObject?: string;
}

/** Builds a checker for one object schema. Optional fields sent as null count as absent. */
export function schemaChecker<T>(schema: TObject, options: CheckOptions = { unknown: 'warn' }) {
  const compiled = Compile(schema);
  const properties = schema.properties as Record<string, Record<string, unknown>>;
  const known = new Set(Object.keys(properties));
  const required = new Set<string>((schema.required as string[] | undefined) ?? []);
  const nullIsAbsent = options.nullIsAbsent ?? true;
  return (raw: unknown): Checked<T> & { fieldErrors: string[] } => {
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
      throw new AppError('malformed_request', 'The request body must be a JSON object.', {
        details: [options.notAnObject ?? 'body must be a JSON object with the documented fields'],
      });
    }
    const unsafe = bodyGuardError(raw);
    if (unsafe) throw unsafe;
    const value: Record<string, unknown> = {};
    const warnings: string[] = [];
    const fieldErrors: string[] = [];
    let unknown = 0;
    for (const [key, v] of Object.entries(raw)) {
      if (!known.has(key)) {
        unknown += 1;
        if (options.unknown === 'warn' && unknown <= MAX_WARNINGS) warnings.push(`unknown field "${key.slice(0, 64)}" was ignored`);
        else if (options.unknown === 'refuse') fieldErrors.push(`${key.slice(0, 64)} is not a field of this request (use ${[...known].join(', ')})`);
      } else if (!(v === null && nullIsAbsent && !required.has(key))) {
        value[key] = options.coerce && typeof v === 'string' && properties[key]?.type === 'integer' && /^-?\d+$/.test(v) ? Number(v) : v;
      }
    }
    if (options.unknown === 'warn' && unknown > MAX_WARNINGS) warnings.push(`${unknown - MAX_WARNINGS} more unknown fields were ignored`);
    const seen = new Set<string>();
    for (const error of compiled.Errors(value) as Iterable<ErrorLike>) {
      const fields =
        error.keyword === 'required' ? ((error.params.requiredProperties as string[] | undefined) ?? []) : [error.instancePath.split('/')[1] ?? 'body'];
      for (const field of fields) {
        if (seen.has(field)) continue;
        seen.add(field);
        const message = options.messages?.[field];
        fieldErrors.push(message ?? (error.keyword === 'required' ? `${field} is required` : describe(schema, field, error)));
      }
    }
    // PostgreSQL text cannot hold NUL, and no honest task needs one: refuse it on every store alike.
    for (const [field, v] of Object.entries(value)) {
      if (typeof v === 'string' && v.includes('\u0000') && !seen.has(field)) fieldErrors.push(`${field} must not contain NUL characters`);
    }
    return { value: value as T, warnings, fieldErrors };
  };
}

/**
 * A checker for query parameters (paging, filters): the schema's errors are 400 `malformed_request`
 * with details, as the route's own parameter check answers; the console passes raw query text.
 */
export function queryChecker<T>(schema: TObject): (raw: unknown) => T {
  const check = schemaChecker<T>(schema, { unknown: 'ignore', coerce: true });
  return (raw) => {
    const { value, fieldErrors } = check(raw ?? {});
    if (fieldErrors.length > 0) throw new AppError('malformed_request', 'The request has malformed parameters; see details.', { details: fieldErrors });
    return value;
  };
}

/** Optional text given but showing nothing (only invisible characters or whitespace) is refused. */
function invisibleFields(value: Record<string, unknown>, fields: string[], fieldErrors: string[]): void {
  for (const field of fields) {
    const text = value[field];
    if (typeof text !== 'string' || text === '' || hasVisibleText(text) || fieldErrors.some((e) => e.startsWith(`${field} `))) continue;
    fieldErrors.push(`${field} must contain a visible character when given`);
  }
}

export interface Validators {
  task(raw: unknown, now: Date): Checked<TaskInput>;
  message(raw: unknown): Checked<MessageInput>;
}

export interface ValidatorOptions {
  /** WEBHOOK_ALLOW_PRIVATE: callback URLs may be http:// and point at private addresses. */
  allowPrivateCallbacks: boolean;
}

export function createValidators(limits: Limits, options: ValidatorOptions = { allowPrivateCallbacks: false }): Validators {
  const checkTask = schemaChecker<TaskInput>(taskInputSchema(limits));
  const checkMessage = schemaChecker<MessageInput>(messageInputSchema(limits));
  return {
    task(raw, now) {
      const { value, warnings, fieldErrors } = checkTask(raw);
      if (value.deadline !== undefined && typeof value.deadline === 'string') {
        const deadline = parseDateTime(value.deadline);
        if (!deadline) fieldErrors.push(`deadline ${DATE_TIME_RULE}`);
        else if (deadline.getTime() <= now.getTime()) fieldErrors.push('deadline must be in the future');
      }
      // Lengths count what a reader sees: the normalized text (domain/text.ts), so 20 zero-width
      // spaces are no more a description than 20 spaces.
      if (typeof value.description === 'string' && [...normalizeText(value.description)].length < limits.descriptionMin) {
        if (!fieldErrors.some((e) => e.startsWith('description'))) {
          fieldErrors.push(`description must be between ${limits.descriptionMin} and ${limits.descriptionMax} characters`);
        }
      }
      invisibleFields(value, ['requester', 'output_format', 'location_detail'], fieldErrors);
      if (typeof value.callback_url === 'string' && !fieldErrors.some((e) => e.startsWith('callback_url'))) {
        const problem = callbackUrlProblem(value.callback_url, options.allowPrivateCallbacks);
        if (problem !== null) fieldErrors.push(`callback_url ${problem}`);
      }
      if ((value.delivery ?? 'email') === 'email' && value.contact_email === undefined && !fieldErrors.some((e) => e.startsWith('contact_email'))) {
        fieldErrors.push('contact_email is required unless delivery is "status_poll"');
      }
      if (value.response_schema !== undefined && !fieldErrors.some((e) => e.startsWith('response_schema'))) {
        fieldErrors.push(...responseSchemaErrors(value.response_schema, limits.maxBodyBytes));
      }
      if (fieldErrors.length > 0) throw validationFailed(fieldErrors);
      return { value, warnings };
    },
    message(raw) {
      const { value, warnings, fieldErrors } = checkMessage(raw);
      if (
        typeof value.message === 'string' &&
        [...normalizeText(value.message)].length < limits.messageMin &&
        !fieldErrors.some((e) => e.startsWith('message'))
      ) {
        fieldErrors.push(`message must be between ${limits.messageMin} and ${limits.messageMax} characters`);
      }
      invisibleFields(value, ['from', 'subject'], fieldErrors);
      if (fieldErrors.length > 0) throw validationFailed(fieldErrors);
      return { value, warnings };
    },
  };
}

/**
 * A response schema's refusal as details lines (empty when it compiles; compiling caches it). A
 * schema whose smallest valid answer would not fit in a delivery (a request body of
 * MAX_BODY_BYTES) is refused too: no operator could ever answer it.
 */
function responseSchemaErrors(schema: unknown, maxBodyBytes: number): string[] {
  try {
    compileResponseSchema(schema);
  } catch (error) {
    if (isAppError(error) && Array.isArray(error.extras.details)) return error.extras.details as string[];
    throw error;
  }
  const room = answerRoom(maxBodyBytes);
  if (minimumAnswerBytes(schema, room + 1) <= room) return [];
  return [
    `response_schema: its smallest valid answer is more than ${room} bytes of JSON, so no delivery could carry it (the request body limit is ${maxBodyBytes} bytes); lower minLength or minItems, or require fewer properties`,
  ];
}
