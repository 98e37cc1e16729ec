import type { ResponseStep } from './pipeline.js';

/**
 * Response hygiene for JSON: every response carries `X-Content-Type-Options: nosniff`; a JSON
 * response carries a Cache-Control — `no-store` for errors (a refusal must not be replayed from a
 * cache) and for anything that did not choose its own; status reads choose `private, no-cache`
 * with an ETag (the task id is an access token: no shared cache may keep it, but the poller may
 * revalidate cheaply and get 304). A step of the request pipeline (pipeline.ts).
 */

const JSON_TYPE = /^application\/(?:[\w.+-]*\+)?json/i;

export const responseHygiene: ResponseStep = (_request, reply) => {
  reply.header('x-content-type-options', 'nosniff');
  const type = reply.getHeader('content-type');
  if (typeof type === 'string' && JSON_TYPE.test(type)) {
    if (reply.statusCode >= 400 || !reply.hasHeader('cache-control')) reply.header('cache-control', 'no-store');
  }
};
