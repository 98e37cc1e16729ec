import { describe, expect, it } from 'vitest';
import { postJson, STORES, TestClock, useTestApp, validTask } from './support/app.js';

/**
 * Duplicate detection (contract): same client or same contact e-mail, same task_type, same
 * description (trimmed, whitespace collapsed, case folded) within 24 h → 409 duplicate_task with
 * existing_task_id. A duplicate uses no quota.
 */

type Json = Record<string, unknown>;
let nextIp = 1;
const newClient = () => ({ 'x-forwarded-for': `192.0.2.${nextIp++}` });
let nextDescription = 1;
const uniqueDescription = () => `Photograph the notice board at the town hall entrance, item ${nextDescription++}.`;

describe.each(STORES)('duplicate submissions on %s', (store) => {
  const clock = new TestClock();
  const t = useTestApp({ store, clock, limits: 'production', env: { TRUST_PROXY: '1' } });

  const submit = async (client: Record<string, string>, overrides: Record<string, unknown>) => {
    const res = await postJson(`${t.url}/api/v1/tasks`, validTask(overrides), client);
    return { res, body: (await res.json()) as Json };
  };

  it('refuses the same task from the same client: 409 duplicate_task with existing_task_id', async () => {
    const client = newClient();
    const description = uniqueDescription();
    const first = await submit(client, { description });
    expect(first.res.status).toBe(202);
    const second = await submit(client, { description });
    expect(second.res.status).toBe(409);
    expect(second.body).toMatchObject({ error: 'duplicate_task', existing_task_id: first.body.task_id });
    expect(typeof second.body.message).toBe('string');
    expect(second.res.headers.get('ratelimit-policy')).toBe('3;w=3600;comment="address", 5;w=86400;comment="address"');
  });

  it('compares descriptions trimmed, whitespace collapsed and case folded', async () => {
    const client = newClient();
    const description = uniqueDescription();
    const first = await submit(client, { description });
    const second = await submit(client, { description: `  ${description.toUpperCase().replace(/ /g, ' \n\t ')}  ` });
    expect(second.res.status).toBe(409);
    expect(second.body.existing_task_id).toBe(first.body.task_id);
  });

  it('refuses the same task from another client with the same contact e-mail (any case), without its id', async () => {
    const description = uniqueDescription();
    const first = await submit(newClient(), { description, contact_email: 'ops@mail.example-agent.dev' });
    expect(first.res.status).toBe(202);
    const second = await submit(newClient(), { description, contact_email: 'OPS@Mail.Example-Agent.dev' });
    expect(second.res.status).toBe(409);
    expect(second.body.error).toBe('duplicate_task');
    expect(second.body).not.toHaveProperty('existing_task_id');
    expect(JSON.stringify(second.body)).not.toContain(String(first.body.task_id));
  });

  it('accepts the same description from another client with another e-mail', async () => {
    const description = uniqueDescription();
    expect((await submit(newClient(), { description, contact_email: 'one@mail.example-agent.dev' })).res.status).toBe(202);
    expect((await submit(newClient(), { description, contact_email: 'two@mail.example-agent.dev' })).res.status).toBe(202);
  });

  it('accepts the same description under another task_type', async () => {
    const client = newClient();
    const description = uniqueDescription();
    expect((await submit(client, { description })).res.status).toBe(202);
    expect((await submit(client, { description, task_type: 'data_collection' })).res.status).toBe(202);
  });

  it('still refuses 1 ms before 24 h and accepts again at 24 h', async () => {
    clock.set('2030-03-20T10:00:00.000Z');
    const client = newClient();
    const description = uniqueDescription();
    expect((await submit(client, { description })).res.status).toBe(202);
    clock.set('2030-03-21T09:59:59.999Z');
    expect((await submit(client, { description })).res.status).toBe(409);
    clock.set('2030-03-21T10:00:00.000Z');
    expect((await submit(client, { description })).res.status).toBe(202);
  });

  it('a duplicate uses no quota', async () => {
    clock.set('2030-03-22T10:00:00.000Z');
    const client = newClient();
    const description = uniqueDescription();
    expect((await submit(client, { description })).res.status).toBe(202);
    for (let i = 0; i < 4; i++) expect((await submit(client, { description })).res.status).toBe(409);
    const next = await submit(client, { description: uniqueDescription() });
    expect(next.res.status).toBe(202);
    expect(next.res.headers.get('ratelimit-remaining')).toBe('1');
  });

  it('status_poll tasks without an e-mail are duplicates only from the same client', async () => {
    clock.set('2030-03-23T10:00:00.000Z');
    const description = uniqueDescription();
    const poll = { description, delivery: 'status_poll', contact_email: undefined };
    const client = newClient();
    const first = await submit(client, poll);
    expect(first.res.status).toBe(202);
    expect((await submit(client, { description })).body.existing_task_id).toBe(first.body.task_id);
    expect((await submit(newClient(), poll)).res.status).toBe(202);
  });
});

describe.each(STORES)('duplicate window configuration on %s', (store) => {
  const t = useTestApp({ store, env: { DUPLICATE_WINDOW_HOURS: '0' } });

  it('DUPLICATE_WINDOW_HOURS=0 turns duplicate detection off', async () => {
    const task = validTask();
    expect((await postJson(`${t.url}/api/v1/tasks`, task)).status).toBe(202);
    expect((await postJson(`${t.url}/api/v1/tasks`, task)).status).toBe(202);
  });
});
