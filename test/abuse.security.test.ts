import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientHash, clientKey } from '../src/domain/network/client.js';
import { postJson, STORES, startTestApp, TEST_ADMIN_KEY, type TestApp, TestClock, useTestApp, validTask } from './support/app.js';

/**
 * Abuse control against a hostile client: auto-block after repeated refusals, who a client is
 * (and that a header cannot make it someone else), keys that never cross clients, and an admin
 * API that says nothing without the key.
 */

type Json = Record<string, unknown>;
const admin = { authorization: `Bearer ${TEST_ADMIN_KEY}` };
let nextIp = 1;
const newIp = () => `172.16.0.${nextIp++}`;

describe.each(STORES)('auto-block on %s', (store) => {
  const clock = new TestClock();
  const t = useTestApp({ store, clock, limits: 'production', env: { TRUST_PROXY: '1', READ_LIMIT_PER_MINUTE: '1' } });

  const submit = (ip: string, overrides: Record<string, unknown> = {}) => postJson(`${t.url}/api/v1/tasks`, validTask(overrides), { 'x-forwarded-for': ip });

  it('blocks a client for 24 h after 10 rate-limit refusals within 24 h', async () => {
    clock.set('2030-03-10T10:00:00.000Z');
    const ip = newIp();
    for (let i = 0; i < 3; i++) expect((await submit(ip)).status).toBe(202);
    for (let i = 0; i < 10; i++) expect((await submit(ip)).status).toBe(429);
    const blocked = await submit(ip);
    expect(blocked.status).toBe(403);
    expect(((await blocked.json()) as Json).error).toBe('client_blocked');
    // Messages too, and the quota windows resetting does not lift it.
    clock.set('2030-03-11T09:59:00.000Z');
    expect(
      (await postJson(`${t.url}/api/v1/messages`, { message: 'Please unblock me.', reply_to: 'agent@mail.example-agent.dev' }, { 'x-forwarded-for': ip }))
        .status,
    ).toBe(403);
    clock.set('2030-03-11T10:00:00.000Z');
    expect((await submit(ip)).status).toBe(202);
  });

  it('records the block as an auto entry with an expiry, visible to the operator', async () => {
    clock.set('2030-03-12T10:00:00.000Z');
    const ip = newIp();
    for (let i = 0; i < 13; i++) await submit(ip);
    const list = (await (await fetch(`${t.url}/api/v1/admin/blocklist`, { headers: admin })).json()) as { blocklist: Json[] };
    const entry = list.blocklist.find((e) => e.value === clientHash(t.deps.secret, ip));
    expect(entry).toMatchObject({ kind: 'ip', source: 'auto', expires_at: '2030-03-13T10:00:00.000Z' });
    expect(entry?.reason).toMatch(/refusals/);
  });

  it('counts refusals over a rolling 24 h, across message and task limits', async () => {
    clock.set('2030-03-14T08:00:00.000Z');
    const ip = newIp();
    const message = () =>
      postJson(`${t.url}/api/v1/messages`, { message: 'One more question.', reply_to: 'agent@mail.example-agent.dev' }, { 'x-forwarded-for': ip });
    for (let i = 0; i < 3; i++) expect((await message()).status).toBe(201);
    for (let i = 0; i < 5; i++) expect((await message()).status).toBe(429);
    clock.set('2030-03-15T06:00:00.000Z'); // 22 h later: the first five still count
    for (let i = 0; i < 3; i++) expect((await submit(ip)).status).toBe(202);
    for (let i = 0; i < 5; i++) expect((await submit(ip)).status).toBe(429);
    expect((await submit(ip)).status).toBe(403);
  });

  it('forgets refusals older than 24 h', async () => {
    clock.set('2030-03-16T08:00:00.000Z');
    const ip = newIp();
    for (let i = 0; i < 3; i++) await submit(ip);
    for (let i = 0; i < 9; i++) expect((await submit(ip)).status).toBe(429);
    clock.set('2030-03-17T09:00:00.000Z');
    for (let i = 0; i < 3; i++) expect((await submit(ip)).status).toBe(202);
    expect((await submit(ip)).status).toBe(429);
    expect((await submit(ip)).status).toBe(429);
  });

  it('does not count validation errors, duplicates or read refusals', async () => {
    clock.set('2030-03-18T08:00:00.000Z');
    const ip = newIp();
    const task = validTask();
    expect((await postJson(`${t.url}/api/v1/tasks`, task, { 'x-forwarded-for': ip })).status).toBe(202);
    for (let i = 0; i < 12; i++) {
      expect((await submit(ip, { description: 'short' })).status).toBe(422);
      expect((await postJson(`${t.url}/api/v1/tasks`, task, { 'x-forwarded-for': ip })).status).toBe(409);
      await fetch(`${t.url}/api/v1/tasks/task-2030-00000000000000000000000000000000`, { headers: { 'x-forwarded-for': ip } });
    }
    expect((await submit(ip)).status).toBe(202);
  });
});

describe('client identity', () => {
  it('is the whole IPv4 address, the /64 of an IPv6 one, and the IPv4 inside a mapped address', () => {
    expect(clientKey('192.0.2.7')).toBe('192.0.2.7');
    expect(clientKey('2001:db8:1:2:3:4:5:6')).toBe('2001:db8:1:2::/64');
    expect(clientKey('2001:DB8:1:2::9')).toBe('2001:db8:1:2::/64');
    expect(clientKey('2001:0db8:0001:0002::')).toBe('2001:db8:1:2::/64');
    expect(clientKey('2001:db8::1')).toBe('2001:db8:0:0::/64');
    expect(clientKey('::ffff:192.0.2.7')).toBe('192.0.2.7');
    const secret = Buffer.alloc(32, 7);
    expect(clientHash(secret, '2001:db8:1:2::1')).toBe(clientHash(secret, '2001:db8:1:2:ffff::1'));
    expect(clientHash(secret, '2001:db8:1:2::1')).not.toBe(clientHash(secret, '2001:db8:1:3::1'));
    expect(clientHash(secret, '192.0.2.7')).not.toBe(clientHash(Buffer.alloc(32, 8), '192.0.2.7'));
    expect(clientHash(secret, '192.0.2.7')).toMatch(/^[0-9a-f]{40}$/);
  });
});

describe.each(STORES)('client identity through the app on %s', (store) => {
  let proxied: TestApp;
  const direct = useTestApp({ store, limits: 'production' });
  beforeAll(async () => {
    proxied = await startTestApp({ store, limits: 'production', env: { TRUST_PROXY: '1' } });
  });
  afterAll(async () => {
    await proxied.close();
  });

  const storedHash = async (t: TestApp, taskId: string) =>
    (await t.store.db.selectFrom('tasks').select('client_hash').where('id', '=', taskId).executeTakeFirstOrThrow()).client_hash;

  it('without TRUST_PROXY, ignores X-Forwarded-For: a forged header does not buy a new quota', async () => {
    for (let i = 0; i < 3; i++) {
      const res = await postJson(`${direct.url}/api/v1/tasks`, validTask(), { 'x-forwarded-for': `198.51.100.${i + 1}` });
      expect(res.status).toBe(202);
      const { task_id } = (await res.json()) as { task_id: string };
      expect(await storedHash(direct, task_id)).toBe(clientHash(direct.deps.secret, '127.0.0.1'));
    }
    expect((await postJson(`${direct.url}/api/v1/tasks`, validTask(), { 'x-forwarded-for': '198.51.100.99' })).status).toBe(429);
  });

  it('with TRUST_PROXY=1, takes the address the proxy appended, not one the client forged before it', async () => {
    const res = await postJson(`${proxied.url}/api/v1/tasks`, validTask(), { 'x-forwarded-for': '10.9.9.9, 203.0.113.77' });
    const { task_id } = (await res.json()) as { task_id: string };
    expect(await storedHash(proxied, task_id)).toBe(clientHash(proxied.deps.secret, '203.0.113.77'));
    for (let i = 0; i < 2; i++) {
      expect((await postJson(`${proxied.url}/api/v1/tasks`, validTask(), { 'x-forwarded-for': `10.0.0.${i}, 203.0.113.77` })).status).toBe(202);
    }
    expect((await postJson(`${proxied.url}/api/v1/tasks`, validTask(), { 'x-forwarded-for': '203.0.113.77' })).status).toBe(429);
    expect((await postJson(`${proxied.url}/api/v1/tasks`, validTask(), { 'x-forwarded-for': '203.0.113.78' })).status).toBe(202);
  });

  it('with TRUST_PROXY=1, one IPv6 /64 is one client', async () => {
    for (let i = 0; i < 3; i++) {
      expect((await postJson(`${proxied.url}/api/v1/tasks`, validTask(), { 'x-forwarded-for': `2001:db8:aa:1::${i + 1}` })).status).toBe(202);
    }
    expect((await postJson(`${proxied.url}/api/v1/tasks`, validTask(), { 'x-forwarded-for': '2001:db8:aa:1:ffff::1' })).status).toBe(429);
    expect((await postJson(`${proxied.url}/api/v1/tasks`, validTask(), { 'x-forwarded-for': '2001:db8:aa:2::1' })).status).toBe(202);
  });

  it('stores only keyed hashes: no client address appears in the store', async () => {
    const tables = ['tasks', 'counters', 'idempotency_keys', 'blocklist', 'messages'] as const;
    for (const table of tables) {
      const rows = await proxied.store.db.selectFrom(table).selectAll().execute();
      const text = JSON.stringify(rows);
      expect(text).not.toContain('203.0.113.77');
      expect(text).not.toContain('2001:db8:aa');
    }
  });

  it('never returns another client’s task for the same Idempotency-Key', async () => {
    const task = validTask();
    const mine = await postJson(`${proxied.url}/api/v1/tasks`, task, { 'x-forwarded-for': '192.0.2.201', 'idempotency-key': 'shared-key' });
    const theirs = await postJson(`${proxied.url}/api/v1/tasks`, validTask(), { 'x-forwarded-for': '192.0.2.202', 'idempotency-key': 'shared-key' });
    expect(theirs.status).toBe(202);
    const a = (await mine.json()) as Json;
    const b = (await theirs.json()) as Json;
    expect(b.task_id).not.toBe(a.task_id);
    // Even with the very same payload, another client gets no replay (202 + my Location): with the
    // same contact e-mail it is a duplicate, 409, as it would be without the key.
    const same = await postJson(`${proxied.url}/api/v1/tasks`, task, { 'x-forwarded-for': '192.0.2.203', 'idempotency-key': 'shared-key' });
    expect(same.status).toBe(409);
    expect(same.headers.get('location')).toBeNull();
  });
});

describe.each(STORES)('admin blocklist without the key on %s', (store) => {
  const t = useTestApp({ store });

  it.each([
    ['no key', {}],
    ['a wrong key', { authorization: 'Bearer not-the-admin-key-at-all' }],
    ['the key in another scheme', { authorization: `Basic ${TEST_ADMIN_KEY}` }],
  ])('answers 401 unauthorized with %s, never a WWW-Authenticate challenge', async (_label, headers: Record<string, string>) => {
    const responses = [
      await fetch(`${t.url}/api/v1/admin/blocklist`, { headers }),
      await postJson(`${t.url}/api/v1/admin/blocklist`, { kind: 'ip', value: '192.0.2.1' }, headers),
      await fetch(`${t.url}/api/v1/admin/blocklist/blk-000000000000000000000000`, { method: 'DELETE', headers }),
    ];
    for (const res of responses) {
      expect(res.status).toBe(401);
      expect(((await res.json()) as Json).error).toBe('unauthorized');
      expect(res.headers.get('www-authenticate')).toBeNull();
    }
    expect(await t.store.db.selectFrom('blocklist').selectAll().execute()).toEqual([]);
  });

  it('tells a blocked client only the kind of block, never the entry', async () => {
    await postJson(`${t.url}/api/v1/admin/blocklist`, { kind: 'domain', value: 'blocked-agents.dev', reason: 'secret operator note' }, admin);
    const res = await postJson(`${t.url}/api/v1/tasks`, validTask({ contact_email: 'x@mail.blocked-agents.dev' }));
    expect(res.status).toBe(403);
    const text = await res.text();
    expect(JSON.parse(text)).toEqual({ error: 'client_blocked', message: expect.stringMatching(/domain/) });
    expect(text).not.toContain('blocked-agents');
    expect(text).not.toContain('secret operator note');
    expect(text).not.toContain('blk-');
  });
});
