import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { initDeps } from '../src/deps.js';
import { clientHash, clientKey } from '../src/domain/network/client.js';
import { migrate, openStore } from '../src/store/db.js';
import { SERVICE_VERSION } from '../src/version.js';
import { postJson, STORES, startTestApp, TestClock, useTestApp, validTask } from './support/app.js';
import { sharedDnsServer } from './support/dns-server.js';

describe.each(STORES)('what the public endpoints never reveal on %s', (store) => {
  const t = useTestApp({ store });

  it('never returns the contact e-mail, the client hash or internal columns', async () => {
    const email = 'secret.person@mail.example-agent.dev';
    const res = await postJson(`${t.url}/api/v1/tasks`, validTask({ contact_email: email }));
    const text = await res.text();
    expect(text).not.toContain('secret.person');
    const { task_id } = JSON.parse(text) as { task_id: string };
    const read = await (await fetch(`${t.url}/api/v1/tasks/${task_id}`)).text();
    for (const hidden of ['secret.person', 'client_hash', 'dedupe_key', 'request_json', 'email_unverified', 'contact_email']) {
      expect(read).not.toContain(hidden);
    }
  });

  it('never echoes the reply_to address of a message', async () => {
    const res = await postJson(`${t.url}/api/v1/messages`, { message: 'Hello, can you help?', reply_to: 'hidden.sender@mail.example-agent.dev' });
    expect(res.status).toBe(201);
    expect(await res.text()).not.toContain('hidden.sender');
  });

  it('stores a keyed hash of the client address, never the address', async () => {
    await postJson(`${t.url}/api/v1/tasks`, validTask());
    const rows = await t.store.db.selectFrom('tasks').select('client_hash').execute();
    for (const row of rows) {
      expect(row.client_hash).toMatch(/^[0-9a-f]{40}$/);
      expect(row.client_hash).not.toContain('127.0.0.1');
    }
    expect(rows[0]?.client_hash).toBe(clientHash(t.deps.secret, '127.0.0.1'));
  });

  it('returns unguessable ids: 128 random bits, never repeated', async () => {
    const ids = new Set<string>();
    for (let i = 0; i < 20; i++) {
      const res = await postJson(`${t.url}/api/v1/tasks`, validTask());
      ids.add(((await res.json()) as { task_id: string }).task_id);
    }
    expect(ids.size).toBe(20);
    for (const id of ids) expect(id).toMatch(/^task-2030-[0-9a-f]{32}$/);
  });

  it("keeps an agent-written description exactly as sent (escaping is the renderer's job)", async () => {
    const description = '<script>alert(1)</script> & "quotes" \u2028 \r\n end';
    const res = await postJson(`${t.url}/api/v1/tasks`, validTask({ description }));
    const { task_id } = (await res.json()) as { task_id: string };
    const task = (await (await fetch(`${t.url}/api/v1/tasks/${task_id}`)).json()) as { description: string };
    expect(task.description).toBe(description);
  });
});

describe('client identity', () => {
  it('uses the whole IPv4 address and the /64 prefix of IPv6', () => {
    expect(clientKey('203.0.113.7')).toBe('203.0.113.7');
    expect(clientKey('::ffff:203.0.113.7')).toBe('203.0.113.7');
    expect(clientKey('2001:db8:1:2:3:4:5:6')).toBe('2001:db8:1:2::/64');
    expect(clientKey('2001:db8:1:2::99')).toBe(clientKey('2001:0db8:0001:0002:ffff::1'));
    expect(clientKey('2001:db8:1:3::1')).not.toBe(clientKey('2001:db8:1:2::1'));
  });
});

describe('unexpected failures', () => {
  it('answer 500 internal_error with the request id and no internals', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'hts-500-'));
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _enc, done) {
        lines.push(String(chunk));
        done();
      },
    });
    const config = loadConfig({ DATA_DIR: dir, LOG_LEVEL: 'info', ADMIN_KEY: 'test-admin-key-0123456789', DNS_SERVERS: (await sharedDnsServer()).address });
    const store = openStore(config.databaseUrl);
    await migrate(store);
    const deps = await initDeps(config, store, { clock: new TestClock(), log: pino({ level: 'info' }, sink), version: SERVICE_VERSION });
    const app = await buildApp(deps);
    app.get('/__boom', async () => {
      throw new Error('secret internal detail at /srv/app.ts:12');
    });
    try {
      const res = await app.inject({ method: 'GET', url: '/__boom' });
      expect(res.statusCode).toBe(500);
      const body = res.json<{ error: string; message: string }>();
      expect(body.error).toBe('internal_error');
      expect(res.body).not.toContain('secret internal detail');
      expect(body.message).toContain(String(res.headers['x-request-id']));
      expect(lines.join('')).toContain('secret internal detail');

      const submit = await app.inject({
        method: 'POST',
        url: '/api/v1/tasks',
        headers: { 'content-type': 'application/json' },
        payload: validTask({ contact_email: 'logged.never@mail.example-agent.dev' }),
      });
      expect(submit.statusCode).toBe(202);
      const log = lines.join('');
      expect(log).toContain('task submitted');
      expect(log).toMatch(/"reqId":"[0-9a-f-]{36}"/);
      expect(log).not.toContain('logged.never');
    } finally {
      await app.close();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe.each(STORES)('status reads and open transactions on %s', (store) => {
  it('never show a change that is later rolled back, and show a committed one at once', async () => {
    const t = await startTestApp({ store });
    try {
      const res = await postJson(`${t.url}/api/v1/tasks`, validTask());
      const { task_id } = (await res.json()) as { task_id: string };
      const statusOf = async () => ((await (await fetch(`${t.url}/api/v1/tasks/${task_id}`)).json()) as { status: string }).status;
      expect(await statusOf()).toBe('submitted');

      let during: Promise<string> | undefined;
      await expect(
        t.store.db.transaction().execute(async (trx) => {
          await trx.updateTable('tasks').set({ status: 'accepted' }).where('id', '=', task_id).execute();
          // As every use case does: the change is published in its transaction (store/change-feed.ts).
          await t.deps.changes.publish({ kind: 'task', taskId: task_id }, trx);
          during = statusOf();
          await new Promise((r) => setTimeout(r, 100));
          throw new Error('roll back');
        }),
      ).rejects.toThrow('roll back');
      expect(await during).toBe('submitted');
      expect(await statusOf()).toBe('submitted');

      await t.store.db.transaction().execute(async (trx) => {
        await trx.updateTable('tasks').set({ status: 'accepted' }).where('id', '=', task_id).execute();
        await t.deps.changes.publish({ kind: 'task', taskId: task_id }, trx);
      });
      expect(await statusOf()).toBe('accepted');
    } finally {
      await t.close();
    }
  });
});
