import { AppError, validationFailed } from '../errors.js';

/**
 * The body guards every door applies to a parsed JSON body before anything else looks at it
 * (REST, MCP, the console and the web form through the HTTP hook; the service layer again before
 * hashing a payload for Idempotency-Key):
 * - nesting deeper than MAX_BODY_DEPTH levels is a 400 `malformed_request` (no field nests beyond
 *   a few levels, and deep structures cost recursion further on);
 * - a number JSON cannot hold (1e400, -1e999 parse to ±Infinity) is a 422 naming the field;
 * - a NUL character (PostgreSQL text cannot hold it) or an unpaired UTF-16 surrogate (not
 *   Unicode; it cannot be stored or mailed faithfully) in any string or key is a 422 naming it.
 * Walked without recursion: a 64 KB body can nest thousands of levels.
 */

export const MAX_BODY_DEPTH = 32;

export interface BodyFindings {
  tooDeep: boolean;
  /** Each finding is a details line naming its field. */
  problems: string[];
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const LONE_SURROGATES = new RegExp(LONE_SURROGATE.source, 'g');

function stringProblem(text: string): string | undefined {
  if (text.includes('\u0000')) return 'must not contain NUL characters';
  if (LONE_SURROGATE.test(text)) return 'must not contain unpaired surrogates (invalid Unicode)';
  return undefined;
}

/** Parsed JSON is plain objects and arrays; a Buffer or stream (an upload) is not walked. */
function isJsonContainer(value: unknown): value is object {
  if (typeof value !== 'object' || value === null) return false;
  if (Array.isArray(value)) return true;
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}

export function inspectBody(body: unknown, maxDepth = MAX_BODY_DEPTH): BodyFindings {
  const problems: string[] = [];
  const stack: [unknown, string, number][] = [[body, '', 0]];
  while (stack.length > 0) {
    const [value, path, depth] = stack.pop() as [unknown, string, number];
    const field = path || 'body';
    if (typeof value === 'string') {
      const problem = stringProblem(value);
      if (problem) problems.push(`${field} ${problem}`);
    } else if (typeof value === 'number') {
      if (!Number.isFinite(value)) problems.push(`${field} must be a number JSON can hold (this one is out of range)`);
    } else if (isJsonContainer(value)) {
      if (depth >= maxDepth) return { tooDeep: true, problems };
      for (const [key, inner] of Object.entries(value)) {
        const here = path ? `${path}.${key}` : key;
        const problem = stringProblem(key);
        if (problem) problems.push(`${here.replace(/\u0000/g, '\\0').replace(LONE_SURROGATES, '\uFFFD')} ${problem}`);
        else stack.push([inner, here, depth + 1]);
      }
    }
  }
  return { tooDeep: false, problems: problems.reverse() };
}

/**
 * Bodies found clean, so a second door on the same object (the HTTP hook, then the service layer)
 * does not walk it again. Parsed bodies are not changed before the service layer reads them.
 */
const clean = new WeakSet<object>();

/** The refusal for a body the guards find fault with, or undefined for a clean one. */
export function bodyGuardError(body: unknown): AppError | undefined {
  if (typeof body === 'object' && body !== null && clean.has(body)) return undefined;
  if (!isJsonContainer(body)) {
    if (typeof body === 'number' || typeof body === 'string') {
      const { problems } = inspectBody(body);
      if (problems.length > 0) return validationFailed(problems);
    }
    return undefined;
  }
  const { tooDeep, problems } = inspectBody(body);
  if (tooDeep) {
    return new AppError('malformed_request', 'The request body nests too deeply.', { details: [`body must not nest more than ${MAX_BODY_DEPTH} levels`] });
  }
  if (problems.length > 0) return validationFailed(problems);
  clean.add(body);
  return undefined;
}
