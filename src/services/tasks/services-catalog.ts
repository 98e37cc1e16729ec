import { AppError } from '../../domain/errors.js';
import type { ServicesPage } from '../../domain/tasks/schemas.js';
import type { ServiceDeps } from '../context.js';
import { openToken, signToken } from '../runtime/signed-token.js';

/** Page size when the client names none. */
export const DEFAULT_SERVICES_PAGE = 20;

export interface ServicesQuery {
  /** A number, or the raw query-string text; anything else is 400 malformed_request. */
  limit?: unknown;
  cursor?: unknown;
}

export type { ServicesPage };

// The cursor names the last service_id returned (see signed-token.ts); it is opaque to clients and its
// form may change at any time.
const CURSOR_SCOPE = 'cursor:services:v1';

function invalidCursor(): AppError {
  return new AppError('invalid_cursor', 'The cursor is not one this service issued. Start again without a cursor, then pass next_cursor exactly as returned.');
}

/** The index of the first entry after the cursor's position. */
function decodeCursor(deps: ServiceDeps, cursor: string): number {
  const after = openToken(deps.secret, CURSOR_SCOPE, cursor);
  if (after === null) throw invalidCursor();
  const index = deps.catalog.findIndex((entry) => entry.service_id === after);
  // A genuine cursor whose entry has since left the catalog (the operator edited it) cannot be resumed.
  if (index < 0) throw invalidCursor();
  return index + 1;
}

function parseLimit(deps: ServiceDeps, raw: unknown): number {
  const max = deps.config.limits.servicesPageMax;
  if (raw === undefined || raw === '') return Math.min(DEFAULT_SERVICES_PAGE, max);
  const value = typeof raw === 'number' ? raw : typeof raw === 'string' && /^\d{1,6}$/.test(raw.trim()) ? Number(raw.trim()) : Number.NaN;
  if (!Number.isInteger(value) || value < 1 || value > max) {
    throw new AppError('malformed_request', `limit must be an integer from 1 to ${max}.`, { details: [`limit must be an integer from 1 to ${max}`] });
  }
  return value;
}

/** One page of the services catalog, in catalog-file order. REST and MCP both call this. */
export function listServices(deps: ServiceDeps, query: ServicesQuery = {}): ServicesPage {
  const limit = parseLimit(deps, query.limit);
  let start = 0;
  // An empty cursor is the same as none: clients often send `cursor=` for a null next_cursor.
  if (query.cursor !== undefined && query.cursor !== null && query.cursor !== '') {
    if (typeof query.cursor !== 'string') throw invalidCursor();
    start = decodeCursor(deps, query.cursor);
  }
  const services = deps.catalog.slice(start, start + limit);
  const last = services.at(-1);
  const more = start + limit < deps.catalog.length;
  return { services, next_cursor: more && last ? signToken(deps.secret, CURSOR_SCOPE, last.service_id) : null };
}
