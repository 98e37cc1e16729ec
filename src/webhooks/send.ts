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

export function postToTarget(target: Target, headers: Record<string, string>, body: string | Uint8Array, timeoutMs: number): Promise<SendOutcome> {
  const lookup: LookupFunction = (_hostname, options, callback) => {
    if (options.all) callback(null, [{ address: target.address, family: target.family }]);
    else callback(null, target.address, target.family);
  };
  const client = target.url.protocol === 'https:' ? https : http;
  const payload = typeof body === 'string' ? Buffer.from(body, 'utf8') : Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  return new Promise<SendOutcome>((resolve, reject) => {
    let settled = false;
    // Known once the head arrives; a receiver that then stalls its body still answered.
    let statusCode: number | undefined;
    const finish = (error: Error | null, outcome?: SendOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      request.destroy();
      if (error) reject(error);
      else resolve(outcome as SendOutcome);
    };
    const request = client.request(
      target.url,
      {
        method: 'POST',
        lookup,
        // A fresh connection per delivery: no pooled socket was ever checked for this target.
        agent: false,
        // A caller's own content-type and user-agent (lower-case names) win; the length is the body's.
        headers: { 'content-type': 'application/json', 'user-agent': 'human-task-service-webhooks/1', ...headers, 'content-length': String(payload.length) },
      },
      (response) => {
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
    const timer = setTimeout(() => {
      if (statusCode !== undefined) finish(null, { statusCode });
      else finish(new Error(`no answer within ${timeoutMs} ms (timeout)`));
    }, timeoutMs);
    request.on('error', (error) => finish(error));
    request.end(payload);
  });
}
