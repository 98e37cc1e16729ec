import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';

/** A document body computed once, with its validator. */
export interface StaticBody {
  body: string;
  etag: string;
  contentType: string;
}

export function etagOf(body: string): string {
  return `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;
}

export function staticBody(body: string, contentType: string): StaticBody {
  return { body, etag: etagOf(body), contentType };
}

/** Indented for people and models reading it raw; `compact` for the large OpenAPI document. */
export function jsonBody(value: unknown, compact = false): StaticBody {
  return staticBody(`${compact ? JSON.stringify(value) : JSON.stringify(value, null, 2)}\n`, 'application/json; charset=utf-8');
}

/** RFC 9110 If-None-Match: weak comparison, a list, or `*`. */
export function matchesEtag(request: FastifyRequest, etag: string): boolean {
  const header = request.headers['if-none-match'];
  if (!header) return false;
  const bare = etag.replace(/^W\//, '');
  return header.split(',').some((candidate) => {
    const tag = candidate.trim();
    return tag === '*' || tag.replace(/^W\//, '') === bare;
  });
}

/** Sends a document with its ETag; 304 without a body when the client already has it. */
export function sendBody(request: FastifyRequest, reply: FastifyReply, doc: StaticBody, maxAgeSeconds: number): FastifyReply {
  reply.header('ETag', doc.etag).header('Cache-Control', `public, max-age=${maxAgeSeconds}`).header('X-Content-Type-Options', 'nosniff');
  if (matchesEtag(request, doc.etag)) return reply.code(304).send();
  return reply.type(doc.contentType).send(doc.body);
}

/**
 * Whether the client prefers markdown to HTML: `Accept` names text/markdown with a q-value at
 * least that of text/html (and of any wildcard that would cover HTML).
 */
export function prefersMarkdown(request: FastifyRequest): boolean {
  const accept = request.headers.accept;
  if (!accept) return false;
  let markdown = -1;
  let htmlQ = -1;
  for (const part of accept.split(',')) {
    const [type = '', ...params] = part.trim().toLowerCase().split(';');
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    const weight = q ? Number(q.slice(2)) || 0 : 1;
    if (type === 'text/markdown' || type === 'text/x-markdown') markdown = Math.max(markdown, weight);
    if (type === 'text/html' || type === 'application/xhtml+xml') htmlQ = Math.max(htmlQ, weight);
  }
  return markdown > 0 && markdown >= htmlQ;
}
