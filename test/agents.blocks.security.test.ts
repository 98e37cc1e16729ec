import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AGENTS_ENV, type TestAgent, useAgents } from './support/agents.js';
import { postJson, STORES, startTestApp, TEST_ADMIN_KEY, type TestApp, TestClock, useTestApp, validTask } from './support/app.js';

/**
 * Blocking a verified agent (docs/verified-agents.md): by key or by directory host, through the
 * admin API, effective at once on every instance (on PostgreSQL, a second instance on the same
 * store); a nonce is single-use across instances; the address behind a blocked agent is not blocked.
 */

const admin = { authorization: `Bearer ${TEST_ADMIN_KEY}` };

describe.each(STORES)('blocking verified agents on %s', (store) => {
  const clock = new TestClock('2030-03-10T10:00:00.000Z');
  const env = AGENTS_ENV;
  const a = useTestApp({ store, clock, env });
  const keys = useAgents(2);
  const [agent, other] = keys.agents as [TestAgent, TestAgent];
  let b: TestApp;

  beforeAll(async () => {
    b = store === 'postgres' ? await startTestApp({ store, clock, env, shareDatabaseWith: a }) : a;
  });
  afterAll(async () => {
    if (b !== a) await b.close();
  });

  const submit = async (t: TestApp, who: TestAgent | undefined, options = {}) =>
    postJson(`${t.url}/api/v1/tasks`, validTask(), who ? await keys.sign(who, 'POST', '/api/v1/tasks', clock.now(), options) : {});
  const block = async (kind: string, value: string) => {
    const res = await postJson(`${a.url}/api/v1/admin/blocklist`, { kind, value }, admin);
    expect(res.status).toBe(201);
    return (await res.json()) as { id: string; kind: string; value: string };
  };

  it('signs with the Dictionary form of Signature-Agent too', async () => {
    const res = await submit(a, agent, { dictionary: true });
    expect(res.status).toBe(202);
  });

  it('stops a blocked key at once on every instance, and not its address or another key', async () => {
    expect((await submit(a, agent)).status).toBe(202);
    expect((await submit(b, agent)).status).toBe(202);
    const entry = await block('agent_key', agent.keyId);
    expect(entry).toMatchObject({ kind: 'agent_key', value: agent.keyId });
    for (const t of [a, b]) {
      const res = await submit(t, agent);
      expect(res.status).toBe(403);
      expect(((await res.json()) as { error: string }).error).toBe('client_blocked');
      expect((await submit(t, undefined)).status).toBe(202);
      expect((await submit(t, other)).status).toBe(202);
    }
    await fetch(`${a.url}/api/v1/admin/blocklist/${entry.id}`, { method: 'DELETE', headers: admin });
    expect((await submit(b, agent)).status).toBe(202);
  });

  it('blocks every key of a directory host by agent_directory', async () => {
    const entry = await block('agent_directory', `http://${keys.directory.host}/.well-known/http-message-signatures-directory`);
    expect(entry.value).toBe(keys.directory.host);
    for (const who of [agent, other]) expect((await submit(b, who)).status).toBe(403);
    expect((await submit(b, undefined)).status).toBe(202);
    await fetch(`${a.url}/api/v1/admin/blocklist/${entry.id}`, { method: 'DELETE', headers: admin });
  });

  it('refuses a malformed agent_key or agent_directory value', async () => {
    for (const [kind, value] of [
      ['agent_key', 'not a thumbprint'],
      ['agent_directory', 'http://'],
    ]) {
      const res = await postJson(`${a.url}/api/v1/admin/blocklist`, { kind, value }, admin);
      expect(res.status).toBe(422);
      expect(((await res.json()) as { details: string[] }).details.join(' ')).toMatch(kind as string);
    }
  });

  it('takes a nonce once across instances', async () => {
    const headers = await keys.sign(agent, 'POST', '/api/v1/tasks', clock.now());
    expect((await postJson(`${a.url}/api/v1/tasks`, validTask(), headers)).status).toBe(202);
    const replay = await postJson(`${b.url}/api/v1/tasks`, validTask(), headers);
    // On SQLite there is one instance: the replay is refused by the same one.
    expect(replay.status).toBe(400);
    expect(((await replay.json()) as { details: string[] }).details).toEqual(['signature: the nonce was already used (a replay)']);
  });
});
