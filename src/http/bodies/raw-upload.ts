import type { IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../../domain/errors.js';
import type { UploadInput } from '../../services/attachments/attachments.js';

/**
 * File uploads take the raw request body as a stream. The parser only hands the stream over (no
 * bytes are read, so no body limit applies here: the upload service counts and cuts at
 * ATTACHMENT_MAX_BYTES). The stream is wrapped in an object with no enumerable fields so the
 * generic body checks (http/guards.ts) see nothing to inspect.
 */
export class RawUpload {
  readonly #stream: Readable;
  constructor(stream: Readable) {
    this.#stream = stream;
  }
  get stream(): Readable {
    return this.#stream;
  }
}

/** For a plugin scope that takes uploads: every content type, streamed. */
export function acceptRawBodies(scope: FastifyInstance): void {
  scope.removeAllContentTypeParsers();
  scope.addContentTypeParser('*', (_request: FastifyRequest, payload: IncomingMessage, done: (error: Error | null, body?: unknown) => void) => {
    done(null, new RawUpload(payload));
  });
}

/**
 * Runs an upload; on any refusal the connection closes after the answer, so the unread rest of
 * the body is dropped rather than read (a 413 must not cost the whole oversized upload).
 */
export async function withUpload<T>(request: FastifyRequest, reply: FastifyReply, run: (input: UploadInput) => Promise<T>): Promise<T> {
  try {
    return await run(uploadFrom(request));
  } catch (error) {
    if (!request.raw.complete) reply.header('Connection', 'close');
    throw error;
  }
}

/** The upload of a request: its stream and the headers describing the file. */
export function uploadFrom(request: FastifyRequest): UploadInput {
  // A request without a body (or without Content-Type) never reaches a parser.
  const body = request.body instanceof RawUpload ? request.body.stream : request.raw;
  const length = request.headers['content-length'];
  if (length === '0' || (length === undefined && request.headers['transfer-encoding'] === undefined)) {
    throw new AppError('malformed_request', 'Send the file as the request body.', {
      details: ['body must be the file itself (raw bytes, with its Content-Type)'],
    });
  }
  const contentLength = length !== undefined && /^\d+$/.test(length) ? Number(length) : undefined;
  const disposition = request.headers['content-disposition'];
  return {
    body,
    declaredType: request.headers['content-type'],
    disposition: typeof disposition === 'string' ? disposition : undefined,
    contentLength,
  };
}
