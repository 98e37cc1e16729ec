import { describe, expect, it } from 'vitest';
import { postJson, STORES, startTestApp, TestClock, useTestApp, validTask } from './support/app.js';

/** What a client sees when it goes over a limit: 429 naming it, Retry-After, no side effects. */

type Json = Record<string, unknown>;
let nextIp = 1;
const newClient = () => ({ 'x-forwarded-for': `203.0.113.${nextIp++}` });
const message = { message: 'Is the service open this weekend?', reply_to: 'agent@mail.example-agent.dev' };

describe.each(STORES)('limit refusals on %s', (store) => {
  const clock = new TestClock();
  const t = useTestApp({ store, clock, limits: 'production', env: { TRUST_PROXY: '1', READ_LIMIT_PER_MINUTE: '2' } });

  const submit = (client: Record<string, string>, overrides: Record<string, unknown> = {}) => postJson(`${t.url}/api/v1/tasks`, validTask(overrides), client);
  const taskCount = async () =>
    Number(
      (
        await t.store.db
          .selectFrom('tasks')
          .select((eb) => eb.fn.countAll().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );

  it('refuses the 4th task in an hour: 429 rate_limited, limit tasks_per_hour, Retry-After to the next hour', async () => {
    clock.set('2030-03-10T10:15:30.000Z');
    const client = newClient();
    for (let i = 0; i < 3; i++) expect((await submit(client)).status).toBe(202);
    const before = await taskCount();
    const res = await submit(client);
    expect(res.status).toBe(429);
    const body = (await res.json()) as Json;
    expect(body).toMatchObject({ error: 'rate_limited', limit: 'tasks_per_hour', retry_after_seconds: 2670 });
    expect(typeof body.message).toBe('string');
    expect(res.headers.get('retry-after')).toBe('2670');
    expect(res.headers.get('ratelimit-policy')).toBe('3;w=3600;comment="address", 5;w=86400;comment="address"');
    expect(res.headers.get('ratelimit-remaining')).toBe('0');
    expect(await taskCount()).toBe(before);
  });

  it('refuses the 6th task in a UTC day: limit tasks_per_day, Retry-After to 00:00 UTC', async () => {
    clock.set('2030-03-11T20:00:00.000Z');
    const client = newClient();
    for (let i = 0; i < 3; i++) expect((await submit(client)).status).toBe(202);
    clock.set('2030-03-11T22:00:00.000Z');
    for (let i = 0; i < 2; i++) expect((await submit(client)).status).toBe(202);
    const res = await submit(client);
    expect(res.status).toBe(429);
    expect(await res.json()).toMatchObject({ error: 'rate_limited', limit: 'tasks_per_day', retry_after_seconds: 7200 });
    expect(res.headers.get('retry-after')).toBe('7200');
  });

  it('refuses a second status_poll task in a day: limit status_poll_per_day', async () => {
    clock.set('2030-03-12T10:00:00.000Z');
    const client = newClient();
    expect((await submit(client, { delivery: 'status_poll', contact_email: undefined })).status).toBe(202);
    const res = await submit(client, { delivery: 'status_poll', contact_email: undefined });
    expect(res.status).toBe(429);
    expect(await res.json()).toMatchObject({ error: 'rate_limited', limit: 'status_poll_per_day', retry_after_seconds: 14 * 3600 });
    expect(res.headers.get('retry-after')).toBe(String(14 * 3600));
  });

  it('a refused submission uses no quota', async () => {
    clock.set('2030-03-12T15:00:00.000Z');
    const client = newClient();
    expect((await submit(client, { delivery: 'status_poll', contact_email: undefined })).status).toBe(202);
    // Refused for status_poll: the hour quota it would have taken is rolled back with it.
    expect((await submit(client, { delivery: 'status_poll', contact_email: undefined })).status).toBe(429);
    expect((await submit(client)).status).toBe(202);
    const third = await submit(client);
    expect(third.status).toBe(202);
    expect(third.headers.get('ratelimit-remaining')).toBe('0');
  });

  it('refuses the 4th message in an hour and the 6th in a day', async () => {
    clock.set('2030-03-13T10:59:00.000Z');
    const client = newClient();
    for (let i = 0; i < 3; i++) expect((await postJson(`${t.url}/api/v1/messages`, message, client)).status).toBe(201);
    const hourly = await postJson(`${t.url}/api/v1/messages`, message, client);
    expect(hourly.status).toBe(429);
    expect(await hourly.json()).toMatchObject({ error: 'rate_limited', limit: 'messages_per_hour', retry_after_seconds: 60 });
    expect(hourly.headers.get('retry-after')).toBe('60');
    clock.set('2030-03-13T11:00:00.000Z');
    for (let i = 0; i < 2; i++) expect((await postJson(`${t.url}/api/v1/messages`, message, client)).status).toBe(201);
    const daily = await postJson(`${t.url}/api/v1/messages`, message, client);
    expect(daily.status).toBe(429);
    expect(await daily.json()).toMatchObject({ error: 'rate_limited', limit: 'messages_per_day', retry_after_seconds: 13 * 3600 });
  });

  it('refuses reads over READ_LIMIT_PER_MINUTE with Retry-After to the next minute', async () => {
    clock.set('2030-03-14T10:00:40.000Z');
    const client = newClient();
    const read = () => fetch(`${t.url}/api/v1/tasks/task-2030-00000000000000000000000000000000`, { headers: client });
    expect((await read()).status).toBe(404);
    expect((await read()).status).toBe(404);
    const res = await read();
    expect(res.status).toBe(429);
    expect(await res.json()).toMatchObject({ error: 'rate_limited', limit: 'reads_per_minute', retry_after_seconds: 20 });
    expect(res.headers.get('retry-after')).toBe('20');
    expect(res.headers.get('ratelimit-policy')).toBe('2;w=60;comment="address"');
    expect(res.headers.get('ratelimit-remaining')).toBe('0');
    // Another client is not affected.
    expect((await fetch(`${t.url}/api/v1/tasks/task-2030-00000000000000000000000000000000`, { headers: newClient() })).status).toBe(404);
  });
});

describe.each(STORES)('the global daily task cap on %s', (store) => {
  const clock = new TestClock('2030-05-01T18:00:00.000Z');
  const t = useTestApp({ store, clock, limits: 'production', env: { TRUST_PROXY: '1', DAILY_TASK_CAP: '2' } });

  it('refuses every client once the cap is used: 429 capacity_reached with Retry-After to 00:00 UTC', async () => {
    expect((await postJson(`${t.url}/api/v1/tasks`, validTask(), newClient())).status).toBe(202);
    expect((await postJson(`${t.url}/api/v1/tasks`, validTask(), newClient())).status).toBe(202);
    const res = await postJson(`${t.url}/api/v1/tasks`, validTask(), newClient());
    expect(res.status).toBe(429);
    const body = (await res.json()) as Json;
    expect(body).toMatchObject({ error: 'capacity_reached', retry_after_seconds: 6 * 3600 });
    expect(body).not.toHaveProperty('limit');
    expect(res.headers.get('retry-after')).toBe(String(6 * 3600));
    expect(res.headers.get('ratelimit-policy')).toBe('3;w=3600;comment="address", 5;w=86400;comment="address"');
  });

  it('a capacity refusal uses none of the client quota', async () => {
    clock.set('2030-05-02T09:00:00.000Z');
    const client = newClient();
    expect((await postJson(`${t.url}/api/v1/tasks`, validTask(), client)).status).toBe(202);
    expect((await postJson(`${t.url}/api/v1/tasks`, validTask(), newClient())).status).toBe(202);
    expect((await postJson(`${t.url}/api/v1/tasks`, validTask(), client)).status).toBe(429);
    clock.set('2030-05-03T09:00:00.000Z');
    const res = await postJson(`${t.url}/api/v1/tasks`, validTask(), client);
    expect(res.status).toBe(202);
    expect(res.headers.get('ratelimit-remaining')).toBe('2');
  });

  it('messages are not held to the task cap', async () => {
    const res = await postJson(`${t.url}/api/v1/messages`, message, newClient());
    expect(res.status).toBe(201);
  });
});

describe('limit configuration', () => {
  it('stops the app at start for a bad limit, naming the variable', async () => {
    await expect(startTestApp({ env: { TASK_LIMIT_PER_HOUR: 'lots' } })).rejects.toThrow(/TASK_LIMIT_PER_HOUR/);
    await expect(startTestApp({ env: { READ_LIMIT_PER_MINUTE: '0' } })).rejects.toThrow(/READ_LIMIT_PER_MINUTE/);
  });
});
