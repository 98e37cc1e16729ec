import type { FastifyRequest } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppError } from '../src/domain/errors.js';
import { quietRequestLog } from '../src/http/admin-auth.js';
import { signIn } from './console.support.js';
import { postJson, startTestApp, TEST_ADMIN_KEY, type TestApp, validTask } from './support/app.js';

/**
 * Guessing the operator key (issue 15, defect 4): failed attempts are throttled per client and
 * globally, count toward auto-block, and a request with the right key (or a valid console
 * session) is never refused, from any address.
 */

const THROTTLE = {
  TRUST_PROXY: '1',
  ADMIN_FAILURES_PER_MINUTE: '3',
  ADMIN_FAILURES_GLOBAL_PER_MINUTE: '12',
  ADMIN_FAILURE_DELAY_MS: '1500',
};

function admin(t: TestApp, ip: string, key: string): Promise<Response> {
  return fetch(`${t.url}/api/v1/admin/tasks`, { headers: { authorization: `Bearer ${key}`, 'x-forwarded-for': ip } });
}

function signInForm(t: TestApp, ip: string, key: string): Promise<Response> {
  return fetch(`${t.url}/operator/login`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-for': ip },
    body: new URLSearchParams({ key, next: '/operator' }).toString(),
  });
}

describe('failed operator-key attempts, per client', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ env: THROTTLE });
  });
  afterAll(async () => {
    await t.close();
  });

  it('answers 401 up to the limit, then holds each failure and answers 429 with Retry-After', async () => {
    for (let i = 0; i < 3; i += 1) expect((await admin(t, '198.51.100.1', `wrong-key-${i}-aaaaaaaaaaaa`)).status).toBe(401);
    const started = Date.now();
    const limited = await admin(t, '198.51.100.1', 'wrong-key-x-aaaaaaaaaaaa');
    expect(Date.now() - started).toBeGreaterThanOrEqual(1400);
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(limited.headers.get('ratelimit-policy')).toBe('3;w=60;comment="address"');
    const body = (await limited.json()) as { error: string; limit: string };
    expect(body).toMatchObject({ error: 'rate_limited', limit: 'admin_key_failures_per_minute' });
  });

  it('never refuses the right key from the throttled address', async () => {
    const started = Date.now();
    const ok = await admin(t, '198.51.100.1', TEST_ADMIN_KEY);
    expect(ok.status).toBe(200);
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it('does not count requests without any key', async () => {
    for (let i = 0; i < 5; i += 1) expect((await fetch(`${t.url}/api/v1/admin/tasks`, { headers: { 'x-forwarded-for': '198.51.100.2' } })).status).toBe(401);
    expect((await admin(t, '198.51.100.2', 'wrong-key-aaaaaaaaaaaaaaa')).status).toBe(401);
  });

  it('throttles console sign-in the same way, and lets the right key and a valid session through', async () => {
    for (let i = 0; i < 3; i += 1) expect((await signInForm(t, '198.51.100.3', `nope-${i}`)).status).toBe(401);
    const limited = await signInForm(t, '198.51.100.3', 'nope-again');
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(await limited.text()).toContain('Too many failed attempts');
    const ok = await signInForm(t, '198.51.100.3', TEST_ADMIN_KEY);
    expect(ok.status).toBe(303);
    const { cookie } = await signIn(t);
    const queue = await fetch(`${t.url}/operator`, { headers: { cookie, 'x-forwarded-for': '198.51.100.3' } });
    expect(queue.status).toBe(200);
  });
});

describe('failed operator-key attempts, over all clients', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ env: THROTTLE });
  });
  afterAll(async () => {
    await t.close();
  });

  it('throttles every failure once many addresses together pass the global limit; the right key still passes', async () => {
    for (let i = 0; i < 6; i += 1) {
      for (let j = 0; j < 2; j += 1) expect((await admin(t, `203.0.113.${i + 1}`, `guess-${i}-${j}-aaaaaaaaaaaa`)).status).toBe(401);
    }
    const fresh = await admin(t, '203.0.113.200', 'guess-fresh-aaaaaaaaaaaa');
    expect(fresh.status).toBe(429);
    expect((await admin(t, '203.0.113.201', TEST_ADMIN_KEY)).status).toBe(200);
  });
});

describe('failed operator-key attempts and auto-block', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ env: { ...THROTTLE, ADMIN_FAILURES_PER_MINUTE: '100', AUTO_BLOCK_REFUSALS: '4' } });
  });
  afterAll(async () => {
    await t.close();
  });

  it('blocks a client after enough failures, and still never refuses the right key', async () => {
    for (let i = 0; i < 3; i += 1) expect((await admin(t, '192.0.2.77', `guess-${i}-aaaaaaaaaaaaaa`)).status).toBe(401);
    const blocked = await admin(t, '192.0.2.77', 'guess-last-aaaaaaaaaaaa');
    expect(blocked.status).toBe(403);
    expect(((await blocked.json()) as { error: string }).error).toBe('client_blocked');
    expect((await postJson(`${t.url}/api/v1/tasks`, validTask(), { 'x-forwarded-for': '192.0.2.77' })).status).toBe(403);
    expect((await admin(t, '192.0.2.77', TEST_ADMIN_KEY)).status).toBe(200);
  });
});

describe('failed operator-key attempts in the log', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ env: { ...THROTTLE, ADMIN_FAILURE_DELAY_MS: '0' } });
  });
  afterAll(async () => {
    await t.close();
  });

  it('writes a few warn lines a minute per client, not one per attempt', async () => {
    const warnings: string[] = [];
    const log = { warn: (_details: object, message: string) => void warnings.push(message) };
    const unauthorized = new AppError('unauthorized', 'wrong key');
    for (let i = 0; i < 50; i += 1) await t.deps.abuse.adminThrottle.failed(t.deps, { clientHash: 'client-a', source: 'api' }, log, unauthorized);
    // The first failure, crossing the client limit, crossing the global limit.
    expect(warnings.length).toBeLessThanOrEqual(3);
    expect(warnings.length).toBeGreaterThan(0);
  });

  it('leaves the per-request info lines out for a wrong bearer on an admin path, and keeps them otherwise', () => {
    const quiet = quietRequestLog(t.deps.adminKeyHash);
    const request = (url: string, authorization?: string, method = 'GET') =>
      ({ url, method, headers: authorization ? { authorization } : {}, raw: {} }) as unknown as FastifyRequest;
    expect(quiet(request('/api/v1/admin/tasks', 'Bearer wrong-key-aaaaaaaaaaaa'))).toBe(true);
    expect(quiet(request('/api/v1/tasks/task-x', 'Bearer wrong-key-aaaaaaaaaaaa', 'PATCH'))).toBe(true);
    expect(quiet(request('/api/v1/admin/tasks', `Bearer ${TEST_ADMIN_KEY}`))).toBe(false);
    expect(quiet(request('/api/v1/tasks'))).toBe(false);
  });
});
