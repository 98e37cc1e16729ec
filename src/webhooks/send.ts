import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import type { Target } from './target.js';

/**
 * One POST to a checked target (a webhook's callback, or a Web Push service: services/alerts/push.ts). It connects only to the checked address (the `lookup` hook
 * answers every lookup with it, while Host and TLS SNI/verification keep the name), follows no
 * redirect (a 3xx is just a failed attempt), reads at most RESPONSE_BYTES_MAX of the answer and
 * drops the rest, and gives up after `timeoutMs` whatever the receiver does, so a slow, hanging
 * or flooding receiver costs one socket for at most that long.
 */

export const RESPONSE_BYTES_MAX = 4096;

export interface SendOutcome {
  statusCode: number;
}

type Finish<T> = (error: Error | null, value?: T) => void;

/**
 * One request to a checked target, connecting only to its checked address, on a fresh connection
 * (no pooled socket was ever checked for this target), settled once: by `handle` through `finish`,
 * by an error, or after `timeoutMs` by `onTimeout`. The request is destroyed when it settles.
 */
function exchange<T>(
  target: Target,
  options: { method: string; headers: Record<string, string>; body?: Buffer },
  timeoutMs: number,
  onTimeout: (finish: Finish<T>) => void,
  handle: (response: http.IncomingMessage, finish: Finish<T>) => void,
): Promise<T> {
  const lookup: LookupFunction = (_hostname, lookupOptions, callback) => {
    if (lookupOptions.all) callback(null, [{ address: target.address, family: target.family }]);
    else callback(null, target.address, target.family);
  };
  const client = target.url.protocol === 'https:' ? https : http;
  return new Promise<T>((resolve, reject) => {
    let settled = false;
    const finish: Finish<T> = (error, value) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      request.destroy();
      if (error) reject(error);
      else resolve(value as T);
    };
    const request = client.request(target.url, { method: options.method, lookup, agent: false, headers: options.headers }, (response) =>
      handle(response, finish),
    );
    const timer = setTimeout(() => onTimeout(finish), timeoutMs);
    request.on('error', (error) => finish(error));
    request.end(options.body);
  });
}

export function postToTarget(target: Target, headers: Record<string, string>, body: string | Uint8Array, timeoutMs: number): Promise<SendOutcome> {
  const payload = typeof body === 'string' ? Buffer.from(body, 'utf8') : Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  // Known once the head arrives; a receiver that then stalls its body still answered.
  let statusCode: number | undefined;
  return exchange<SendOutcome>(
    target,
    {
      method: 'POST',
      // A caller's own content-type and user-agent (lower-case names) win; the length is the body's.
      headers: { 'content-type': 'application/json', 'user-agent': 'human-task-service-webhooks/1', ...headers, 'content-length': String(payload.length) },
      body: payload,
    },
    timeoutMs,
    (finish) => {
      if (statusCode !== undefined) finish(null, { statusCode });
      else finish(new Error(`no answer within ${timeoutMs} ms (timeout)`));
    },
    (response, finish) => {
      statusCode = response.statusCode ?? 0;
      let read = 0;
      response.on('data', (chunk: Buffer) => {
        read += chunk.length;
        // Enough to know the receiver answered; the body is never used, so stop reading.
        if (read >= RESPONSE_BYTES_MAX) finish(null, { statusCode: response.statusCode ?? 0 });
      });
      response.on('end', () => finish(null, { statusCode: response.statusCode ?? 0 }));
      response.on('error', (error) => finish(error));
    },
  );
}

export interface FetchedDocument {
  statusCode: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

/** A document over its size bound: refused, never read further. */
export class DocumentTooLarge extends Error {
  override readonly name = 'DocumentTooLarge';
}

/**
 * One GET of a checked target under the same rules as a delivery (the checked address only, no
 * redirect followed: a 3xx is returned as it is, fresh connection), reading at most `maxBytes`
 * (DocumentTooLarge beyond) and giving up after `timeoutMs` whatever the server does. Used for
 * agents' key directories (abuse/agent-directories.ts).
 */
export function getDocument(target: Target, headers: Record<string, string>, maxBytes: number, timeoutMs: number): Promise<FetchedDocument> {
  return exchange<FetchedDocument>(
    target,
    { method: 'GET', headers: { ...headers, 'user-agent': 'human-task-service/1' } },
    timeoutMs,
    (finish) => finish(new Error(`no answer within ${timeoutMs} ms`)),
    (response, finish) => {
      const declared = Number(response.headers['content-length'] ?? '0');
      if (declared > maxBytes) return finish(new DocumentTooLarge(`over ${maxBytes} bytes`));
      const chunks: Buffer[] = [];
      let read = 0;
      response.on('data', (chunk: Buffer) => {
        read += chunk.length;
        if (read > maxBytes) return finish(new DocumentTooLarge(`over ${maxBytes} bytes`));
        chunks.push(chunk);
      });
      response.on('end', () => finish(null, { statusCode: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks) }));
      response.on('error', (error) => finish(error));
    },
  );
}
