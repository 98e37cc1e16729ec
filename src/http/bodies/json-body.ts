import type { FastifyInstance } from 'fastify';
import { AppError } from '../../domain/errors.js';

/**
 * The JSON body parser: Fastify's own (secure-json-parse, `__proto__` and `constructor` refused),
 * but fed from bytes checked as UTF-8 first. Fastify decodes a body with Buffer#toString, which
 * turns every invalid byte sequence into U+FFFD: a body such as `{"a":"\xFF\xFE\xC3"}` would be
 * stored as something the client never sent. Invalid UTF-8 is therefore 400 `invalid_json`, as
 * RFC 8259 §8.1 requires JSON exchanged between systems to be UTF-8. A leading BOM is dropped.
 */
const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

export function installJsonParser(app: FastifyInstance): void {
  app.removeContentTypeParser('application/json');
  addJsonParser(app, 'application/json');
}

/**
 * The same parser for another JSON media type (A2A's application/a2a+json), in the scope given.
 * `emptyIsNone`: an empty body is no body (A2A clients POST `:cancel` and `:subscribe` bare, with a
 * JSON Content-Type).
 */
export function addJsonParser(app: FastifyInstance, contentType: string, options: { emptyIsNone?: boolean } = {}): void {
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.addContentTypeParser(contentType, { parseAs: 'buffer' }, (request, body, done) => {
    if (options.emptyIsNone === true && (body as Buffer).length === 0) {
      done(null, undefined);
      return;
    }
    let text: string;
    try {
      text = strictUtf8.decode(body as Buffer);
    } catch {
      done(new AppError('invalid_json', 'The request body is not valid UTF-8; send JSON encoded as UTF-8.'), undefined);
      return;
    }
    parseJson(request, text, done);
  });
}
