import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { AppError } from '../domain/errors.js';

function sha256(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}

export function adminKeyMatches(expectedHash: Buffer, candidate: string | undefined): boolean {
  if (!candidate) return false;
  return timingSafeEqual(sha256(candidate), expectedHash);
}

/** The bearer token of a request, if any. */
export function bearerToken(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  const match = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
  return match?.[1];
}

/** preHandler for the admin API: 401 `unauthorized` (never with WWW-Authenticate) without the key. */
export function requireAdmin(expectedHash: Buffer) {
  return async (request: FastifyRequest): Promise<void> => {
    if (!adminKeyMatches(expectedHash, bearerToken(request))) {
      throw new AppError('unauthorized', 'This endpoint needs the operator key: Authorization: Bearer <ADMIN_KEY>.');
    }
  };
}
