import { request as httpRequest } from 'node:http';
import type { TestApp } from './app.js';

/**
 * Status reads with their headers in the order they were sent, which shows who answered: the
 * status read's fast lane (src/http/lanes/fast-reads.ts) writes the per-request headers
 * (X-Request-Id, RateLimit-*) after the recorded ones, the framework writes X-Request-Id before
 * the ETag.
 */

export interface RawRead {
  status: number;
  /** Header names (lower case) in the order they were sent, with their values. */
  headers: [string, string][];
  body: string;
}

export function rawRead(t: TestApp, taskId: string, headers: Record<string, string> = {}): Promise<RawRead> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${t.url}/api/v1/tasks/${taskId}`, { headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const pairs: [string, string][] = [];
        for (let i = 0; i < res.rawHeaders.length; i += 2) pairs.push([(res.rawHeaders[i] ?? '').toLowerCase(), res.rawHeaders[i + 1] ?? '']);
        resolve({ status: res.statusCode ?? 0, headers: pairs, body: Buffer.concat(chunks).toString('utf8') });
      });
    });
    req.on('error', reject);
    req.end();
  });
}

export const header = (read: RawRead, name: string) => read.headers.find(([n]) => n === name)?.[1];
export const position = (read: RawRead, name: string) => read.headers.findIndex(([n]) => n === name);
/** True when the fast lane answered (see above). */
export const byLane = (read: RawRead) => position(read, 'x-request-id') > position(read, 'etag');
