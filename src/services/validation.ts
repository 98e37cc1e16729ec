import { Compile } from 'typebox/compile';
import { Settings } from 'typebox/system';
import type { TObject } from 'typebox';
import type { Limits } from '../config.js';
import { callbackUrlProblem } from '../domain/callback-url.js';
import { AppError, validationFailed } from '../domain/errors.js';
import { messageInputSchema, taskInputSchema, type MessageInput, type TaskInput } from '../domain/schemas.js';
import { parseDateTime } from '../domain/time.js';

/**
 * Validation of agent payloads: one place for REST, MCP and the web form. Reports every failing
 * field at once, each message naming its field; unknown fields are ignored and listed as warnings.
 */

interface Checked<T> {
  value: T;
  warnings: string[];
}

// TypeBox stops at 8 errors by default; a task has ten fields and every failing one must be reported.
Settings.Set({ maxErrors: 64 });

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
        : `${field} must be at most ${String(prop.maxLength)} characters`;
    case 'minimum':
    case 'maximum':
      return `${field} must be between ${String(prop.minimum)} and ${String(prop.maximum)}`;
    case 'enum':
      return `${field} must be one of: ${(prop.enum as string[]).join(', ')}`;
    case 'format':
      return `${field} must be a valid e-mail address`;
    default:
      return `${field} is invalid (${error.message})`;
  }
}

function article(type: string): string {
  const names: Record<string, string> = { string: 'a string', boolean: 'a boolean (true or false)', number: 'a number', integer: 'an integer', object: 'an object' };
  return names[type] ?? type;
}

/** Builds a checker for one object schema. Optional fields sent as null count as absent. */
function checker<T>(schema: TObject) {
  const compiled = Compile(schema);
  const known = new Set(Object.keys(schema.properties));
  const required = new Set<string>((schema.required as string[] | undefined) ?? []);
  return (raw: unknown): Checked<T> & { fieldErrors: string[] } => {
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
      throw new AppError('malformed_request', 'The request body must be a JSON object.', {
        details: ['body must be a JSON object with the documented fields'],
      });
    }
    const value: Record<string, unknown> = {};
    const warnings: string[] = [];
    for (const [key, v] of Object.entries(raw)) {
      if (!known.has(key)) warnings.push(`unknown field "${key.slice(0, 64)}" was ignored`);
      else if (!(v === null && !required.has(key))) value[key] = v;
    }
    const fieldErrors: string[] = [];
    const seen = new Set<string>();
    for (const error of compiled.Errors(value) as Iterable<ErrorLike>) {
      const fields =
        error.keyword === 'required'
          ? ((error.params.requiredProperties as string[] | undefined) ?? [])
          : [error.instancePath.split('/')[1] ?? 'body'];
      for (const field of fields) {
        if (seen.has(field)) continue;
        seen.add(field);
        fieldErrors.push(error.keyword === 'required' ? `${field} is required` : describe(schema, field, error));
      }
    }
    // PostgreSQL text cannot hold NUL, and no honest task needs one: refuse it on every store alike.
    for (const [field, v] of Object.entries(value)) {
      if (typeof v === 'string' && v.includes('\u0000') && !seen.has(field)) fieldErrors.push(`${field} must not contain NUL characters`);
    }
    return { value: value as T, warnings, fieldErrors };
  };
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
  const checkTask = checker<TaskInput>(taskInputSchema(limits));
  const checkMessage = checker<MessageInput>(messageInputSchema(limits));
  return {
    task(raw, now) {
      const { value, warnings, fieldErrors } = checkTask(raw);
      if (value.deadline !== undefined && typeof value.deadline === 'string') {
        const deadline = parseDateTime(value.deadline);
        if (!deadline) fieldErrors.push('deadline must be an ISO 8601 date-time, e.g. 2030-01-31T17:00:00Z');
        else if (deadline.getTime() <= now.getTime()) fieldErrors.push('deadline must be in the future');
      }
      if (value.description !== undefined && typeof value.description === 'string' && value.description.trim().length < limits.descriptionMin) {
        if (!fieldErrors.some((e) => e.startsWith('description'))) {
          fieldErrors.push(`description must be between ${limits.descriptionMin} and ${limits.descriptionMax} characters`);
        }
      }
      if (typeof value.callback_url === 'string' && !fieldErrors.some((e) => e.startsWith('callback_url'))) {
        const problem = callbackUrlProblem(value.callback_url, options.allowPrivateCallbacks);
        if (problem !== null) fieldErrors.push(`callback_url ${problem}`);
      }
      if ((value.delivery ?? 'email') === 'email' && value.contact_email === undefined && !fieldErrors.some((e) => e.startsWith('contact_email'))) {
        fieldErrors.push('contact_email is required unless delivery is "status_poll"');
      }
      if (fieldErrors.length > 0) throw validationFailed(fieldErrors);
      return { value, warnings };
    },
    message(raw) {
      const { value, warnings, fieldErrors } = checkMessage(raw);
      if (fieldErrors.length > 0) throw validationFailed(fieldErrors);
      return { value, warnings };
    },
  };
}
