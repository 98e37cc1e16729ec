import { describe, expect, it } from 'vitest';
import { type TestAgent, useCountedAgents } from './support/agents.js';
import { postJson, STORES, TestClock, useTestApp, validTask } from './support/app.js';

/**
 * Verified agents (docs/verified-agents.md), what the key counts: duplicates are per client, and a
 * verified agent's client is its key, not its address; and an unsigned 429 invites signing
 * (Accept-Signature) only where the verified tier would have room.
 */

const ACCEPT = 'sig1=("@authority" "signature-agent");tag="web-bot-auth";alg="ed25519"';

describe.each(STORES)('what a verified agent is counted by, on %s', (store) => {
  const clock = new TestClock('2030-03-10T10:20:00.000Z');
  const { t, keys, alice, bob } = useCountedAgents(store, clock);

  const submit = async (agent: TestAgent, address: string, task: Record<string, unknown>) =>
    postJson(`${t.url}/api/v1/tasks`, task, {
      'x-forwarded-for': address,
      ...(await keys.sign(agent, 'POST', '/api/v1/tasks', clock.now())),
    });

  it('does not take two agents behind one address for duplicates of each other', async () => {
    // Contact e-mails apart: a match by contact e-mail is a duplicate whoever sends it.
    const description = 'Photograph the notice board at the station, both sides.';
    expect((await submit(alice, '198.51.100.7', validTask({ description, contact_email: 'alice@mail.example-agent.dev' }))).status).toBe(202);
    const other = await submit(bob, '198.51.100.7', validTask({ description, contact_email: 'bob@mail.example-agent.dev' }));
    expect(other.status).toBe(202);
  });

  it('takes one agent from two addresses for the same client', async () => {
    const description = 'Call the bakery on Main Street about the Sunday order.';
    const first = await submit(alice, '198.51.100.20', validTask({ description, contact_email: 'one@mail.example-agent.dev' }));
    expect(first.status).toBe(202);
    const { task_id } = (await first.json()) as { task_id: string };
    const again = await submit(alice, '203.0.113.40', validTask({ description, contact_email: 'two@mail.example-agent.dev' }));
    expect(again.status).toBe(409);
    expect(await again.json()).toMatchObject({ error: 'duplicate_task', existing_task_id: task_id });
  });
});

describe.each(STORES)('Accept-Signature where the verified tier has no room, on %s', (store) => {
  const clock = new TestClock('2030-03-10T10:20:00.000Z');
  // The verified hourly limit no higher than the address's, the read limit shared by both tiers.
  const t = useTestApp({ store, clock, limits: 'production', env: { VERIFIED_TASK_LIMIT_PER_HOUR: '3', READ_LIMIT_PER_MINUTE: '2', TRUST_PROXY: '1' } });

  it('does not invite signing when the signed tier would be refused as well', async () => {
    const client = { 'x-forwarded-for': '203.0.113.9' };
    for (let i = 0; i < 3; i++) expect((await postJson(`${t.url}/api/v1/tasks`, validTask(), client)).status).toBe(202);
    const refused = await postJson(`${t.url}/api/v1/tasks`, validTask(), client);
    expect(refused.status).toBe(429);
    expect(((await refused.json()) as { limit: string }).limit).toBe('tasks_per_hour');
    expect(refused.headers.get('accept-signature')).toBeNull();
  });

  it('does not invite signing on a read limit both tiers share', async () => {
    const client = { 'x-forwarded-for': '203.0.113.10' };
    for (let i = 0; i < 2; i++) expect((await fetch(`${t.url}/api/v1/services`, { headers: client })).status).toBe(200);
    const refused = await fetch(`${t.url}/api/v1/services`, { headers: client });
    expect(refused.status).toBe(429);
    expect(refused.headers.get('accept-signature')).toBeNull();
  });

  it('still invites signing where the verified tier has room (the daily limit)', async () => {
    clock.set('2030-03-10T11:20:00.000Z');
    const client = { 'x-forwarded-for': '203.0.113.9' };
    // 3 more this hour makes 6 today, over the address's 5 a day; the verified tier allows 100.
    for (let i = 0; i < 2; i++) expect((await postJson(`${t.url}/api/v1/tasks`, validTask(), client)).status).toBe(202);
    const refused = await postJson(`${t.url}/api/v1/tasks`, validTask(), client);
    expect(refused.status).toBe(429);
    expect(((await refused.json()) as { limit: string }).limit).toBe('tasks_per_day');
    expect(refused.headers.get('accept-signature')).toBe(ACCEPT);
  });
});
