import type { FastifyReply, FastifyRequest } from 'fastify';
import { contentDisposition } from '../domain/attachments.js';
import { fileStream, type StoredFile } from '../services/attachments/files.js';
import type { ServiceDeps } from '../services/context.js';

/**
 * Sends a stored file the only safe way: always as a download (`Content-Disposition: attachment`,
 * RFC 6266 name with `filename*` for non-ASCII), `nosniff`, and a CSP sandbox, so nothing an
 * uploader wrote (HTML, SVG, a lying type) ever runs on this origin. Strong ETag (the SHA-256),
 * `Content-Digest`/`Repr-Digest` (RFC 9530) and single byte ranges (RFC 9110) for video players.
 */

export const DOWNLOAD_CSP = "default-src 'none'; sandbox";

export type ByteRange = { start: number; end: number } | 'unsatisfiable' | undefined;

/**
 * One `bytes=` range of a file of `size` bytes. Several ranges, or anything malformed, are
 * ignored (the whole file is sent, as RFC 9110 allows); a range starting past the end is
 * unsatisfiable.
 */
export function parseRange(header: string | undefined, size: number): ByteRange {
  if (!header) return undefined;
  const match = /^\s*bytes\s*=\s*(\d*)\s*-\s*(\d*)\s*$/i.exec(header);
  if (!match) return undefined;
  const [, from = '', to = ''] = match;
  if (from === '' && to === '') return undefined;
  if (from === '') {
    const suffix = Number(to);
    if (suffix === 0) return 'unsatisfiable';
    return { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(from);
  if (!Number.isSafeInteger(start) || start >= size) return 'unsatisfiable';
  const end = to === '' ? size - 1 : Math.min(Number(to), size - 1);
  if (end < start) return undefined;
  return { start, end };
}

function base64Digest(sha256Hex: string): string {
  return Buffer.from(sha256Hex, 'hex').toString('base64');
}

export function downloadHeaders(reply: FastifyReply, name: string, mediaType: string, sha256: string): void {
  reply.header('Content-Type', mediaType);
  reply.header('Content-Disposition', contentDisposition(name));
  reply.header('X-Content-Type-Options', 'nosniff');
  reply.header('Content-Security-Policy', DOWNLOAD_CSP);
  // The URL carries the task id, an access token: never leak it to a page the file links to.
  reply.header('Referrer-Policy', 'no-referrer');
  reply.header('ETag', `"${sha256}"`);
  reply.header('Repr-Digest', `sha-256=:${base64Digest(sha256)}:`);
}

function etagMatches(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  return header.split(',').some((tag) => {
    const t = tag.trim();
    return t === '*' || t === etag || t === `W/${etag}`;
  });
}

export function sendStoredFile(
  deps: Pick<ServiceDeps, 'store'>,
  request: FastifyRequest,
  reply: FastifyReply,
  file: StoredFile,
  cacheControl: string,
): FastifyReply {
  const etag = `"${file.sha256}"`;
  downloadHeaders(reply, file.name, file.mediaType, file.sha256);
  reply.header('Accept-Ranges', 'bytes');
  reply.header('Cache-Control', cacheControl);
  if (etagMatches(request.headers['if-none-match'], etag)) return reply.code(304).send();
  const ifRange = request.headers['if-range'];
  // If-Range with another validator: the file changed for the client, so send all of it.
  const range = typeof ifRange === 'string' && ifRange.trim() !== etag ? undefined : parseRange(request.headers.range, file.size);
  if (range === 'unsatisfiable') {
    reply.removeHeader('Content-Type');
    return reply.code(416).header('Content-Range', `bytes */${file.size}`).send();
  }
  if (range) {
    reply
      .code(206)
      .header('Content-Range', `bytes ${range.start}-${range.end}/${file.size}`)
      .header('Content-Length', String(range.end - range.start + 1));
    return reply.send(fileStream(deps, file, range.start, range.end));
  }
  // The whole representation: its digest is the content's digest too.
  reply.header('Content-Digest', `sha-256=:${base64Digest(file.sha256)}:`).header('Content-Length', String(file.size));
  if (file.size === 0) return reply.send(Buffer.alloc(0));
  return reply.send(fileStream(deps, file, 0, file.size - 1));
}
