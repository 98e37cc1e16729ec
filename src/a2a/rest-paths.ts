import type { FastifyRequest } from 'fastify';
import { AppError } from '../domain/errors.js';

/**
 * The HTTP+JSON binding's paths (A2A 1.0 §11.3) as the method they name and its params, taken
 * from the path, the query (camelCase, A2A 1.0 §11.5) and the body.
 */

export const REST_PREFIX = '/a2a/v1/';

export interface RestCall {
  method: string;
  params: Record<string, unknown>;
}

/** A query value as the method expects it: numbers and booleans from their decimal and lowercase forms. */
function queryParams(request: FastifyRequest): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries((request.query ?? {}) as Record<string, unknown>)) {
    const text = Array.isArray(value) ? value[0] : value;
    if (typeof text !== 'string' || name === 'A2A-Version') continue;
    if (name === 'pageSize' || name === 'historyLength') out[name] = /^-?\d{1,9}$/.test(text) ? Number(text) : text;
    else if (name === 'includeArtifacts') out[name] = text === 'true' ? true : text === 'false' ? false : text;
    else out[name] = text;
  }
  return out;
}

function bodyParams(request: FastifyRequest): Record<string, unknown> {
  const body = request.body;
  if (body === undefined || body === null) return {};
  if (typeof body !== 'object' || Array.isArray(body)) {
    throw new AppError('malformed_request', 'The request body must be a JSON object.', { details: ['body: must be a JSON object'] });
  }
  return body as Record<string, unknown>;
}

function notFound(path: string): AppError {
  return new AppError('not_found', `No A2A HTTP+JSON operation at ${path.slice(0, 120)}: see A2A 1.0 §11.3 and /.well-known/agent-card.json.`);
}

/** The method and params of a request under /a2a/v1; 404 not_found for a path A2A does not define. */
export function restCall(request: FastifyRequest): RestCall {
  const path = request.url.split('?')[0] ?? '';
  let segments: string[];
  try {
    segments = path.slice(REST_PREFIX.length).split('/').map(decodeURIComponent);
  } catch {
    throw notFound(path);
  }
  const verb = request.method;
  const [first, second, third, fourth] = segments;
  if (segments.length === 1 && verb === 'POST' && first === 'message:send') return { method: 'SendMessage', params: bodyParams(request) };
  if (segments.length === 1 && verb === 'POST' && first === 'message:stream') return { method: 'SendStreamingMessage', params: bodyParams(request) };
  if (segments.length === 1 && verb === 'GET' && first === 'extendedAgentCard') return { method: 'GetExtendedAgentCard', params: {} };
  if (segments.length === 1 && verb === 'GET' && first === 'tasks') return { method: 'ListTasks', params: queryParams(request) };
  if (first !== 'tasks' || second === undefined || second === '') throw notFound(path);
  if (segments.length === 2) {
    const action = /^(.+):(cancel|subscribe)$/.exec(second);
    if (action && verb === 'POST' && action[2] === 'cancel') return { method: 'CancelTask', params: { ...bodyParams(request), id: action[1] } };
    if (action && (verb === 'POST' || verb === 'GET') && action[2] === 'subscribe') return { method: 'SubscribeToTask', params: { id: action[1] } };
    if (!action && verb === 'GET') return { method: 'GetTask', params: { ...queryParams(request), id: second } };
    throw notFound(path);
  }
  if (third !== 'pushNotificationConfigs') throw notFound(path);
  if (segments.length === 3 && verb === 'POST') return { method: 'CreateTaskPushNotificationConfig', params: { ...bodyParams(request), taskId: second } };
  if (segments.length === 3 && verb === 'GET') return { method: 'ListTaskPushNotificationConfigs', params: { ...queryParams(request), taskId: second } };
  if (segments.length === 4 && fourth !== undefined && fourth !== '') {
    if (verb === 'GET') return { method: 'GetTaskPushNotificationConfig', params: { taskId: second, id: fourth } };
    if (verb === 'DELETE') return { method: 'DeleteTaskPushNotificationConfig', params: { taskId: second, id: fourth } };
  }
  throw notFound(path);
}
