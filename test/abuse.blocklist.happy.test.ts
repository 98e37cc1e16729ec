import { describe, expect, it } from 'vitest';
import { clientHash } from '../src/domain/network/client.js';
import { OWNER } from '../src/domain/team/actor.js';
import { addBlock, listBlocks, removeBlock } from '../src/services/console/blocklist.js';
import { postJson, STORES, TEST_ADMIN_KEY, TestClock, useTestApp, validTask } from './support/app.js';

/** The blocklist through the admin API: every kind blocks, expiry ends a block, removal too. */

type Json = Record<string, unknown>;
const admin = { authorization: `Bearer ${TEST_ADMIN_KEY}` };
let nextIp = 1;
const newIp = () => `100.64.0.${nextIp++}`;
let nextName = 1;
const unique = (label: string) => `${label}-${nextName++}`;
const message = (overrides: Record<string, unknown> = {}) => ({
  message: 'A question about the service.',
  reply_to: 'agent@mail.example-agent.dev',
  ...overrides,
});

describe.each(STORES)('blocklist on %s', (store) => {
  const clock = new TestClock();
  const t = useTestApp({ store, clock, env: { TRUST_PROXY: '1' } });

  const block = async (body: Json) => {
    const res = await postJson(`${t.url}/api/v1/admin/blocklist`, body, admin);
    expect(res.status).toBe(201);
    return (await res.json()) as Json;
  };
  const submit = (ip: string, overrides: Record<string, unknown> = {}) => postJson(`${t.url}/api/v1/tasks`, validTask(overrides), { 'x-forwarded-for': ip });
  const expectBlocked = async (res: Response, text: RegExp) => {
    expect(res.status).toBe(403);
    const body = (await res.json()) as Json;
    expect(body.error).toBe('client_blocked');
    expect(body.message).toMatch(text);
    return body;
  };

  it('adds an entry: 201 with the entry, listed until removed (204)', async () => {
    const entry = await block({ kind: 'requester', value: unique('Spam Bot'), reason: 'floods the queue' });
    expect(entry).toMatchObject({ kind: 'requester', reason: 'floods the queue', source: 'admin', created_at: '2030-03-10T10:00:00.000Z', expires_at: null });
    expect(entry.id).toMatch(/^blk-[0-9a-f]{24}$/);
    expect(Object.keys(entry).sort()).toEqual(['created_at', 'expires_at', 'id', 'kind', 'reason', 'source', 'value']);
    const list = (await (await fetch(`${t.url}/api/v1/admin/blocklist`, { headers: admin })).json()) as { blocklist: Json[] };
    expect(list.blocklist).toContainEqual(entry);
    const removed = await fetch(`${t.url}/api/v1/admin/blocklist/${String(entry.id)}`, { method: 'DELETE', headers: admin });
    expect(removed.status).toBe(204);
    const after = (await (await fetch(`${t.url}/api/v1/admin/blocklist`, { headers: admin })).json()) as { blocklist: Json[] };
    expect(after.blocklist.map((e) => e.id)).not.toContain(entry.id);
  });

  it('kind ip: blocks the client, storing only its keyed hash', async () => {
    const ip = newIp();
    const entry = await block({ kind: 'ip', value: ip });
    expect(entry.value).toBe(clientHash(t.deps.secret, ip));
    expect(JSON.stringify(entry)).not.toContain(ip);
    const rows = await t.store.db.selectFrom('blocklist').selectAll().execute();
    expect(JSON.stringify(rows)).not.toContain(ip);
    await expectBlocked(await submit(ip), /client/);
    await expectBlocked(await postJson(`${t.url}/api/v1/messages`, message(), { 'x-forwarded-for': ip }), /client/);
    expect((await submit(newIp())).status).toBe(202);
  });

  it('kind ip with an IPv6 /64: blocks every address in the prefix', async () => {
    await block({ kind: 'ip', value: '2001:db8:77:1::/64' });
    await expectBlocked(await submit('2001:db8:77:1::abcd'), /client/);
    await expectBlocked(await submit('2001:db8:77:1:ffff:1:2:3'), /client/);
    expect((await submit('2001:db8:77:2::1')).status).toBe(202);
  });

  it('kind email: blocks that contact_email and reply_to, in any case', async () => {
    const email = `${unique('blocked')}@mail.example-agent.dev`;
    await block({ kind: 'email', value: email.toUpperCase() });
    await expectBlocked(await submit(newIp(), { contact_email: email }), /e-mail address/);
    await expectBlocked(await postJson(`${t.url}/api/v1/messages`, message({ reply_to: email }), { 'x-forwarded-for': newIp() }), /e-mail address/);
    expect((await submit(newIp(), { contact_email: `other-${email}` })).status).toBe(202);
  });

  it('kind domain: blocks the domain and its subdomains', async () => {
    const domain = `${unique('spam')}.dev`;
    await block({ kind: 'domain', value: domain });
    await expectBlocked(await submit(newIp(), { contact_email: `a@${domain}` }), /domain/);
    await expectBlocked(await submit(newIp(), { contact_email: `a@mx.${domain.toUpperCase()}` }), /domain/);
    expect((await submit(newIp(), { contact_email: `a@not${domain}` })).status).toBe(202);
  });

  it("kind requester: blocks a task's requester and a message's from, whitespace and case aside", async () => {
    const name = unique('Bulk Agent');
    await block({ kind: 'requester', value: name });
    await expectBlocked(await submit(newIp(), { requester: `  ${name.toLowerCase().replace(' ', '   ')} ` }), /requester/);
    await expectBlocked(await postJson(`${t.url}/api/v1/messages`, message({ from: name }), { 'x-forwarded-for': newIp() }), /requester/);
    expect((await submit(newIp(), { requester: `${name} 2` })).status).toBe(202);
  });

  it('an entry with expires_at blocks until then, and is no longer listed after', async () => {
    clock.set('2030-03-10T10:00:00.000Z');
    const ip = newIp();
    const entry = await block({ kind: 'ip', value: ip, expires_at: '2030-03-10T12:00:00+01:00' });
    expect(entry.expires_at).toBe('2030-03-10T11:00:00.000Z');
    clock.set('2030-03-10T10:59:59.999Z');
    expect((await submit(ip)).status).toBe(403);
    clock.set('2030-03-10T11:00:00.000Z');
    expect((await submit(ip)).status).toBe(202);
    const list = (await (await fetch(`${t.url}/api/v1/admin/blocklist`, { headers: admin })).json()) as { blocklist: Json[] };
    expect(list.blocklist.map((e) => e.id)).not.toContain(entry.id);
    clock.set('2030-03-10T10:00:00.000Z');
  });

  it('adding the same kind and value again replaces the entry (how an expiry is changed)', async () => {
    const ip = newIp();
    const first = await block({ kind: 'ip', value: ip, expires_at: '2030-03-10T10:30:00Z' });
    const second = await block({ kind: 'ip', value: ip });
    const list = (await (await fetch(`${t.url}/api/v1/admin/blocklist`, { headers: admin })).json()) as { blocklist: Json[] };
    const ids = list.blocklist.map((e) => e.id);
    expect(ids).toContain(second.id);
    expect(ids).not.toContain(first.id);
  });

  it('removing an entry lifts the block at once', async () => {
    const ip = newIp();
    const entry = await block({ kind: 'ip', value: ip });
    expect((await submit(ip)).status).toBe(403);
    await fetch(`${t.url}/api/v1/admin/blocklist/${String(entry.id)}`, { method: 'DELETE', headers: admin });
    expect((await submit(ip)).status).toBe(202);
  });

  it('a blocked client can still read the status of its tasks', async () => {
    const ip = newIp();
    const created = (await (await submit(ip)).json()) as { task_id: string };
    await block({ kind: 'ip', value: ip });
    const res = await fetch(`${t.url}/api/v1/tasks/${created.task_id}`, { headers: { 'x-forwarded-for': ip } });
    expect(res.status).toBe(200);
  });

  it('lists a page at a time, newest first, every active entry once; a cursor edited or from elsewhere is 400', async () => {
    const added: string[] = [];
    for (let i = 0; i < 7; i++) {
      clock.set(`2030-03-10T09:${String(10 + i).padStart(2, '0')}:00.000Z`);
      added.push(String((await block({ kind: 'requester', value: unique('Paged') })).id));
    }
    clock.set('2030-03-10T10:00:00.000Z');
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const url = `${t.url}/api/v1/admin/blocklist?limit=3${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
      const page = (await (await fetch(url, { headers: admin })).json()) as { blocklist: Json[]; next_cursor: string | null };
      expect(page.blocklist.length).toBeLessThanOrEqual(3);
      seen.push(...page.blocklist.map((e) => String(e.id)));
      cursor = page.next_cursor;
      pages += 1;
    } while (cursor !== null && pages < 100);
    expect(new Set(seen).size).toBe(seen.length);
    // Newest first: the seven in reverse order of addition, one after another.
    const mine = seen.filter((id) => added.includes(id));
    expect(mine).toEqual([...added].reverse());
    const first = (await (await fetch(`${t.url}/api/v1/admin/blocklist?limit=1`, { headers: admin })).json()) as { next_cursor: string };
    // Its MAC's first character changed (an edit at its end could spell the same bytes, operator.error.test.ts).
    const [payload, mac = ''] = first.next_cursor.split('.');
    const editedCursor = `${payload}.${mac.startsWith('A') ? 'B' : 'A'}${mac.slice(1)}`;
    const edited = await fetch(`${t.url}/api/v1/admin/blocklist?cursor=${encodeURIComponent(editedCursor)}`, { headers: admin });
    expect(edited.status).toBe(400);
    expect(((await edited.json()) as Json).error).toBe('invalid_cursor');
    const tooMany = await fetch(`${t.url}/api/v1/admin/blocklist?limit=201`, { headers: admin });
    expect(tooMany.status).toBe(400);
  });

  it('the service functions the operator console uses: addBlock, listBlocks, removeBlock', async () => {
    const entry = await addBlock(t.deps, OWNER, { kind: 'domain', value: `${unique('console')}.dev`, reason: 'from the console' });
    expect(entry).toMatchObject({ kind: 'domain', source: 'admin', reason: 'from the console', expires_at: null });
    const auto = await addBlock(t.deps, OWNER, { kind: 'ip', value: newIp(), expires_at: '2030-03-11T10:00:00Z' }, { source: 'auto' });
    expect(auto.source).toBe('auto');
    const listed = (await listBlocks(t.deps)).blocklist;
    expect(listed).toContainEqual(entry);
    expect(listed).toContainEqual(auto);
    expect(await removeBlock(t.deps, OWNER, entry.id)).toBe(true);
    expect(await removeBlock(t.deps, OWNER, entry.id)).toBe(false);
  });
});
