import type { TestApp } from './support/app.js';

/** Helpers for the conditional-read and long-poll suites. */

export interface Read {
  status: number;
  headers: Headers;
  text: string;
  /** Milliseconds the request took. */
  ms: number;
}

/** GET /api/v1/tasks/{id} with the given headers; resolves when the whole answer is in. */
export async function readTask(t: TestApp, taskId: string, headers: Record<string, string> = {}, signal?: AbortSignal): Promise<Read> {
  const started = Date.now();
  const res = await fetch(`${t.url}/api/v1/tasks/${taskId}`, { headers, ...(signal ? { signal } : {}) });
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, ms: Date.now() - started };
}

/** The current ETag of a task. */
export async function etagOf(t: TestApp, taskId: string): Promise<string> {
  const read = await readTask(t, taskId);
  if (read.status !== 200) throw new Error(`read failed: ${read.status} ${read.text}`);
  const etag = read.headers.get('etag');
  if (!etag) throw new Error('no ETag');
  return etag;
}

/** Resolves once `count` requests are held on this instance. */
export async function heldCount(t: TestApp, count: number, timeoutMs = 5000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (t.deps.waits.size < count) {
    if (Date.now() > until) throw new Error(`expected ${count} held requests, have ${t.deps.waits.size}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
