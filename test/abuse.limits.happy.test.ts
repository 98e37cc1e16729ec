import { describe, expect, it } from 'vitest';
import { postJson, STORES, TestClock, useTestApp, validTask } from './support/app.js';

/**
 * Per-client limits with the production defaults (3/h + 5/day tasks and messages, 1 status_poll
 * task per day): what a client may do, and when its windows open again. Each test is its own
 * client: TRUST_PROXY=1 and a distinct X-Forwarded-For address.
 */

let nextIp = 1;
const newClient = () => ({ 'x-forwarded-for': `198.51.100.${nextIp++}` });
const message = (overrides: Record<string, unknown> = {}) => ({
  message: 'Is the service open this weekend?',
  reply_to: 'agent@mail.example-agent.dev',
  ...overrides,
});

describe.each(STORES)('per-client limits on %s', (store) => {
  const clock = new TestClock();
  const t = useTestApp({ store, clock, limits: 'production', env: { TRUST_PROXY: '1' } });

  const submit = (client: Record<string, string>, overrides: Record<string, unknown> = {}) => postJson(`${t.url}/api/v1/tasks`, validTask(overrides), client);
  const send = (client: Record<string, string>) => postJson(`${t.url}/api/v1/messages`, message(), client);

  it('admits 3 task submissions in an hour, counting RateLimit-Remaining down', async () => {
    clock.set('2030-03-10T10:20:00.000Z');
    const client = newClient();
    const remaining: (string | null)[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await submit(client);
      expect(res.status).toBe(202);
      expect(res.headers.get('ratelimit-policy')).toBe('3;w=3600;comment="address", 5;w=86400;comment="address"');
      expect(res.headers.get('ratelimit-limit')).toBe('3');
      remaining.push(res.headers.get('ratelimit-remaining'));
      // Fixed clock hours: 10:20 → the window resets at 11:00, 2400 s later.
      expect(res.headers.get('ratelimit-reset')).toBe('2400');
    }
    expect(remaining).toEqual(['2', '1', '0']);
  });

  it('opens a new hour window at the top of the next clock hour', async () => {
    clock.set('2030-03-10T12:59:59.000Z');
    const client = newClient();
    for (let i = 0; i < 3; i++) expect((await submit(client)).status).toBe(202);
    expect((await submit(client)).status).toBe(429);
    clock.set('2030-03-10T13:00:00.000Z');
    const res = await submit(client);
    expect(res.status).toBe(202);
    // 4 of 5 used today: the day policy (1 left) is now closest to running out.
    expect(res.headers.get('ratelimit-limit')).toBe('5');
    expect(res.headers.get('ratelimit-remaining')).toBe('1');
    expect(res.headers.get('ratelimit-reset')).toBe(String(11 * 3600));
  });

  it('admits 5 submissions in a UTC day and resets at 00:00 UTC', async () => {
    clock.set('2030-03-11T21:10:00.000Z');
    const client = newClient();
    for (let i = 0; i < 3; i++) expect((await submit(client)).status).toBe(202);
    clock.set('2030-03-11T23:59:00.000Z');
    for (let i = 0; i < 2; i++) expect((await submit(client)).status).toBe(202);
    expect((await submit(client)).status).toBe(429);
    clock.set('2030-03-12T00:00:00.000Z');
    const res = await submit(client);
    expect(res.status).toBe(202);
    expect(res.headers.get('ratelimit-remaining')).toBe('2');
  });

  it('admits one status_poll task per client per day, besides e-mail tasks', async () => {
    clock.set('2030-03-13T08:00:00.000Z');
    const client = newClient();
    expect((await submit(client, { delivery: 'status_poll', contact_email: undefined })).status).toBe(202);
    expect((await submit(client)).status).toBe(202);
    clock.set('2030-03-14T00:00:00.000Z');
    expect((await submit(client, { delivery: 'status_poll', contact_email: undefined })).status).toBe(202);
  });

  it('admits 3 messages an hour and 5 a day with RateLimit headers', async () => {
    clock.set('2030-03-15T09:30:00.000Z');
    const client = newClient();
    for (let i = 0; i < 3; i++) {
      const res = await send(client);
      expect(res.status).toBe(201);
      expect(res.headers.get('ratelimit-policy')).toBe('3;w=3600;comment="address", 5;w=86400;comment="address"');
      expect(res.headers.get('ratelimit-remaining')).toBe(String(2 - i));
      expect(res.headers.get('ratelimit-reset')).toBe('1800');
    }
    clock.set('2030-03-15T10:00:00.000Z');
    expect((await send(client)).status).toBe(201);
    expect((await send(client)).status).toBe(201);
    clock.set('2030-03-15T11:00:00.000Z');
    expect((await send(client)).status).toBe(429);
    clock.set('2030-03-16T00:00:00.000Z');
    expect((await send(client)).status).toBe(201);
  });

  it('keeps task and message quotas apart', async () => {
    clock.set('2030-03-17T09:00:00.000Z');
    const client = newClient();
    for (let i = 0; i < 3; i++) expect((await submit(client)).status).toBe(202);
    expect((await send(client)).status).toBe(201);
  });

  it('counts reads per minute with RateLimit headers on every read', async () => {
    clock.set('2030-03-18T09:00:15.000Z');
    const client = newClient();
    const res = await fetch(`${t.url}/api/v1/tasks/task-2030-00000000000000000000000000000000`, { headers: client });
    expect(res.status).toBe(404);
    expect(res.headers.get('ratelimit-policy')).toBe('600;w=60;comment="address"');
    expect(res.headers.get('ratelimit-limit')).toBe('600');
    expect(res.headers.get('ratelimit-remaining')).toBe('599');
    expect(res.headers.get('ratelimit-reset')).toBe('45');
    const again = await fetch(`${t.url}/api/v1/tasks/task-2030-00000000000000000000000000000000`, { headers: client });
    expect(again.headers.get('ratelimit-remaining')).toBe('598');
  });
});

describe.each(STORES)('small configured limits on %s', (store) => {
  const clock = new TestClock('2030-04-01T10:00:00.000Z');
  const t = useTestApp({
    store,
    clock,
    limits: 'production',
    env: { TRUST_PROXY: '1', READ_LIMIT_PER_MINUTE: '3', TASK_LIMIT_PER_HOUR: '10', TASK_LIMIT_PER_DAY: '20', DAILY_TASK_CAP: '4' },
  });

  it('publishes the configured limits in RateLimit-Policy', async () => {
    const res = await postJson(`${t.url}/api/v1/tasks`, validTask(), newClient());
    expect(res.status).toBe(202);
    expect(res.headers.get('ratelimit-policy')).toBe('10;w=3600;comment="address", 20;w=86400;comment="address"');
    expect(res.headers.get('ratelimit-remaining')).toBe('9');
  });

  it('opens a new read window at the next minute', async () => {
    clock.set('2030-04-01T10:05:59.000Z');
    const client = newClient();
    const read = () => fetch(`${t.url}/api/v1/tasks/task-2030-00000000000000000000000000000000`, { headers: client });
    for (let i = 0; i < 3; i++) expect((await read()).status).toBe(404);
    expect((await read()).status).toBe(429);
    clock.set('2030-04-01T10:06:00.000Z');
    const res = await read();
    expect(res.status).toBe(404);
    expect(res.headers.get('ratelimit-remaining')).toBe('2');
    expect(res.headers.get('ratelimit-reset')).toBe('60');
  });

  it('reopens the global daily task cap at 00:00 UTC', async () => {
    clock.set('2030-04-02T23:00:00.000Z');
    for (let i = 0; i < 4; i++) expect((await postJson(`${t.url}/api/v1/tasks`, validTask(), newClient())).status).toBe(202);
    expect((await postJson(`${t.url}/api/v1/tasks`, validTask(), newClient())).status).toBe(429);
    clock.set('2030-04-03T00:00:00.000Z');
    expect((await postJson(`${t.url}/api/v1/tasks`, validTask(), newClient())).status).toBe(202);
  });
});
