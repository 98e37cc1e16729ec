import { createHash } from 'node:crypto';
import type { FastifyInstance, onSendHookHandler } from 'fastify';

/**
 * Response hygiene for JSON: every response carries `X-Content-Type-Options: nosniff`; a JSON
 * response carries a Cache-Control — `no-store` for errors (a refusal must not be replayed from a
 * cache) and for anything that did not choose its own; status reads choose `private, no-cache`
 * with an ETag (the task id is an access token: no shared cache may keep it, but the poller may
 * revalidate cheaply and get 304).
 */

const JSON_TYPE = /^application\/(?:[\w.+-]*\+)?json/i;

export function installResponseHeaders(app: FastifyInstance): void {
  app.addHook('onSend', (_request, reply, payload, done) => {
    reply.header('X-Content-Type-Options', 'nosniff');
    const type = reply.getHeader('content-type');
    if (typeof type === 'string' && JSON_TYPE.test(type)) {
      if (reply.statusCode >= 400 || !reply.hasHeader('cache-control')) reply.header('Cache-Control', 'no-store');
    }
    done(null, payload);
  });
}

/**
 * onSend of a status read: `private, no-cache`, and — unless the route set its own — a strong ETag
 * of the bytes, with 304 on a match.
 */
export const statusReadCaching: onSendHookHandler = (request, reply, payload, done) => {
  if (reply.statusCode !== 200 || typeof payload !== 'string') return done(null, payload);
  reply.header('Cache-Control', 'private, no-cache');
  if (reply.hasHeader('etag')) return done(null, payload);
  const etag = `"${createHash('sha256').update(payload).digest('base64url').slice(0, 27)}"`;
  reply.header('ETag', etag);
  const match = request.headers['if-none-match'];
  if (typeof match === 'string' && match.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag)) {
    reply.code(304);
    return done(null, '');
  }
  return done(null, payload);
};
