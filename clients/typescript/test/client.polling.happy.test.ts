import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { HumanTaskClient, RateLimitedError, WaitTimeoutError } from '../src/index.js';

/**
 * How waitForResult paces itself, against a scripted service on a real socket: the long-poll
 * protocol of the contract (ETag, If-None-Match, Prefer: wait, Preference-Applied), and the
 * fallback for a service that ignores Prefer (growing delay, RateLimit-Reset, Retry-After).
 */

const ID = 'task-2030-0123456789abcdef0123456789abcdef';

interface Seen {
  at: number;
  headers: IncomingHttpHeaders;
}

type Answer = { status: number; headers?: Record<string, string>; body?: unknown; holdMs?: number };

let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((r) => server?.close(r));
  server = undefined;
});

function task(status: string): Record<string, unknown> {
  return {
    task_id: ID,
    status,
    eta: status === 'accepted' ? '2030-03-11T12:00:00.000Z' : null,
    operator_notes: status === 'delivered' ? 'Done.' : null,
    updated_at: new Date().toISOString(),
  };
}

/** A service answering the n-th request with script(n); records what each request carried. */
async function scripted(script: (n: number, headers: IncomingHttpHeaders) => Answer): Promise<{ url: string; seen: Seen[] }> {
  const seen: Seen[] = [];
  const listening = createServer((req, res) => {
    seen.push({ at: Date.now(), headers: req.headers });
    const answer = script(seen.length, req.headers);
    setTimeout(() => {
      res.writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers });
      res.end(answer.body === undefined ? '' : JSON.stringify(answer.body));
    }, answer.holdMs ?? 0);
  });
  server = listening;
  await new Promise<void>((r) => listening.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(listening.address() as AddressInfo).port}`, seen };
}

describe('waitForResult pacing', () => {
  it('long-polls with If-None-Match and Prefer: wait, asking again at once after a held answer', async () => {
    const { url, seen } = await scripted((n): Answer => {
      if (n === 1) return { status: 200, headers: { etag: '"v1"' }, body: task('submitted') };
      if (n < 4) return { status: 304, headers: { etag: '"v1"', 'preference-applied': 'wait=50' }, holdMs: 1_100 };
      return { status: 200, headers: { etag: '"v2"', 'preference-applied': 'wait=50' }, body: task('delivered'), holdMs: 200 };
    });
    const client = new HumanTaskClient({ baseUrl: url });
    const done = await client.waitForResult(ID, { timeoutMs: 60_000 });
    expect(done.status).toBe('delivered');
    expect(seen).toHaveLength(4);
    expect(seen[0]?.headers.prefer).toBeUndefined();
    for (const later of seen.slice(1)) {
      expect(later.headers['if-none-match']).toBe('"v1"');
      expect(later.headers.prefer).toBe('wait=50');
    }
    // The first ETag starts the long-poll at once, and a held answer is followed at once by the next request (no polling delay in between).
    expect(Number(seen[1]?.at) - Number(seen[0]?.at)).toBeLessThan(900);
    expect(Number(seen[3]?.at) - Number(seen[2]?.at)).toBeLessThan(1_100 + 900);
  });

  it('never asks to be held longer than the time left', async () => {
    const { url, seen } = await scripted((n) =>
      n === 1 ? { status: 200, headers: { etag: '"v1"' }, body: task('submitted') } : { status: 200, headers: { etag: '"v2"' }, body: task('delivered') },
    );
    await new HumanTaskClient({ baseUrl: url }).waitForResult(ID, { timeoutMs: 20_000, pollIntervalMs: 100 });
    expect(seen[1]?.headers.prefer).toMatch(/^wait=(19|20)$/);
  });

  it('against a service that ignores Prefer, polls with a growing delay', async () => {
    const { url, seen } = await scripted((n) => ({ status: 200, body: task(n < 4 ? 'submitted' : 'delivered') }));
    await new HumanTaskClient({ baseUrl: url }).waitForResult(ID, { timeoutMs: 60_000, pollIntervalMs: 300 });
    expect(seen).toHaveLength(4);
    const gaps = seen.slice(1).map((s, i) => s.at - Number(seen[i]?.at));
    expect(gaps[0]).toBeGreaterThanOrEqual(280);
    expect(Number(gaps[2])).toBeGreaterThan(Number(gaps[0]));
  });

  it('waits out an exhausted read quota (RateLimit-Remaining: 0, RateLimit-Reset)', async () => {
    const { url, seen } = await scripted((n) =>
      n === 1
        ? { status: 200, headers: { 'ratelimit-remaining': '0', 'ratelimit-reset': '2' }, body: task('accepted') }
        : { status: 200, body: task('delivered') },
    );
    await new HumanTaskClient({ baseUrl: url }).waitForResult(ID, { timeoutMs: 60_000, pollIntervalMs: 100 });
    expect(Number(seen[1]?.at) - Number(seen[0]?.at)).toBeGreaterThanOrEqual(1_900);
  });

  it('waits out Retry-After on a 429, then carries on', async () => {
    const { url, seen } = await scripted((n) =>
      n === 1
        ? {
            status: 429,
            headers: { 'retry-after': '2' },
            body: { error: 'rate_limited', message: 'Slow down.', limit: 'reads_per_minute', retry_after_seconds: 2 },
          }
        : { status: 200, body: task('delivered') },
    );
    // maxRetries 0: the wait loop itself must honour the Retry-After.
    const done = await new HumanTaskClient({ baseUrl: url, maxRetries: 0 }).waitForResult(ID, { timeoutMs: 60_000, pollIntervalMs: 100 });
    expect(done.status).toBe('delivered');
    expect(Number(seen[1]?.at) - Number(seen[0]?.at)).toBeGreaterThanOrEqual(1_900);
  });

  it('gives the 429 to the caller at once when its Retry-After outlasts the deadline', async () => {
    const { url } = await scripted(() => ({
      status: 429,
      headers: { 'retry-after': '3600' },
      body: { error: 'rate_limited', message: 'Slow down.', retry_after_seconds: 3600 },
    }));
    const started = Date.now();
    const error = await new HumanTaskClient({ baseUrl: url }).waitForResult(ID, { timeoutMs: 30_000 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RateLimitedError);
    expect((error as RateLimitedError).retryAfterSeconds).toBe(3600);
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('stops at the deadline with WaitTimeoutError carrying the last state', async () => {
    const { url } = await scripted(() => ({ status: 200, body: task('accepted') }));
    const started = Date.now();
    const error = await new HumanTaskClient({ baseUrl: url })
      .waitForResult(ID, { deadline: new Date(Date.now() + 1_500), pollIntervalMs: 200 })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WaitTimeoutError);
    expect((error as WaitTimeoutError<{ status: string }>).task?.status).toBe('accepted');
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_400);
    expect(Date.now() - started).toBeLessThan(6_000);
  });

  it('stops when its AbortSignal aborts, even in the middle of a held request', async () => {
    const { url } = await scripted((n) => (n === 1 ? { status: 200, headers: { etag: '"v1"' }, body: task('submitted') } : { status: 304, holdMs: 30_000 }));
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('caller gave up')), 500);
    const started = Date.now();
    await expect(new HumanTaskClient({ baseUrl: url }).waitForResult(ID, { signal: controller.signal, pollIntervalMs: 100 })).rejects.toThrow('caller gave up');
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('getTask answers a 304 from its last copy', async () => {
    const { url, seen } = await scripted((n) =>
      n === 1 ? { status: 200, headers: { etag: '"v1"' }, body: task('accepted') } : { status: 304, headers: { etag: '"v1"' } },
    );
    const client = new HumanTaskClient({ baseUrl: url });
    const first = await client.getTask(ID);
    const second = await client.getTask(ID);
    expect(second).toEqual(first);
    expect(seen[1]?.headers['if-none-match']).toBe('"v1"');
  });
});
