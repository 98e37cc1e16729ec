import { describe, expect, it } from 'vitest';
import { runRetention } from '../src/services/runtime/retention.js';
import { upload } from './attachments.support.js';
import { postForm, signIn } from './console.support.js';
import { importOk, openRecord } from './import.support.js';
import { ADMIN, submit } from './operator.support.js';
import { postJson, STORES, type TestApp, type TestClock, useTestApp } from './support/app.js';
import { api, json, newOperator, type TestOperator } from './team.support.js';

/**
 * The audit log (contract "A team of operators"): every action of an operator or a key leaves its
 * entry, naming who did it. One row per action: what to do, and the entry it must leave.
 */

interface Entry {
  at: string;
  actor: string;
  action: string;
  task_id: string | null;
  details: Record<string, unknown>;
}

interface Case {
  action: string;
  /** Does it as `op` (or as the owner); returns the task the entry names, if any. */
  run(t: TestApp, op: TestOperator): Promise<string | null>;
  /** Who the entry must name: the operator, the owner, or nobody (a failed sign-in). */
  actor: 'operator' | 'owner' | 'anonymous';
}

async function patchAs(t: TestApp, op: TestOperator, taskId: string, body: unknown): Promise<void> {
  await json(await api(t, 'PATCH', `/api/v1/admin/tasks/${taskId}`, body, op.auth), 200);
}

const CASES: Case[] = [
  {
    action: 'task.accepted',
    actor: 'operator',
    run: async (t, op) => {
      const id = await submit(t);
      await patchAs(t, op, id, { status: 'accepted' });
      return id;
    },
  },
  {
    action: 'task.updated',
    actor: 'operator',
    run: async (t, op) => {
      const id = await submit(t);
      await patchAs(t, op, id, { operator_notes: 'draft' });
      return id;
    },
  },
  {
    action: 'task.delivered',
    actor: 'operator',
    run: async (t, op) => {
      const id = await submit(t);
      await patchAs(t, op, id, { status: 'accepted' });
      await patchAs(t, op, id, { status: 'delivered', operator_notes: 'Done.' });
      return id;
    },
  },
  {
    action: 'task.rejected',
    actor: 'operator',
    run: async (t, op) => {
      const id = await submit(t);
      await patchAs(t, op, id, { status: 'rejected', operator_notes: 'Out of scope.' });
      return id;
    },
  },
  {
    action: 'message.replied',
    actor: 'operator',
    run: async (t, op) => {
      const id = await submit(t);
      const sent = await postJson(`${t.url}/api/v1/messages`, { message: `About ${id}: any news?`, reply_to: 'agent@mail.example-agent.dev' });
      const messageId = ((await sent.json()) as { message_id: string }).message_id;
      await json(await api(t, 'POST', `/api/v1/admin/messages/${messageId}/reply`, { message: 'Tomorrow.' }, op.auth), 201);
      return id;
    },
  },
  {
    action: 'attachment.added',
    actor: 'operator',
    run: async (t, op) => {
      const id = await submit(t);
      await patchAs(t, op, id, { status: 'accepted' });
      expect((await upload(t, id, 'evidence', { name: 'note.txt', type: 'text/plain', headers: op.auth })).status).toBe(201);
      return id;
    },
  },
  {
    action: 'attachment.removed',
    actor: 'operator',
    run: async (t, op) => {
      const id = await submit(t);
      await patchAs(t, op, id, { status: 'accepted' });
      const added = (await (await upload(t, id, 'evidence', { name: 'note.txt', type: 'text/plain', headers: op.auth })).json()) as { attachment_id: string };
      expect((await api(t, 'DELETE', `/api/v1/admin/tasks/${id}/attachments/${added.attachment_id}`, undefined, op.auth)).status).toBe(204);
      return id;
    },
  },
  {
    action: 'blocklist.added',
    actor: 'owner',
    run: async (t) => {
      await json(await api(t, 'POST', '/api/v1/admin/blocklist', { kind: 'domain', value: `audit-${Date.now()}.example.org` }), 201);
      return null;
    },
  },
  {
    action: 'blocklist.removed',
    actor: 'owner',
    run: async (t) => {
      const entry = await json(await api(t, 'POST', '/api/v1/admin/blocklist', { kind: 'domain', value: `gone-${Date.now()}.example.org` }), 201);
      expect((await api(t, 'DELETE', `/api/v1/admin/blocklist/${entry.id as string}`)).status).toBe(204);
      return null;
    },
  },
  {
    action: 'key.created',
    actor: 'operator',
    run: async (t, op) => {
      await json(await api(t, 'POST', `/api/v1/admin/operators/${op.operator_id}/keys`, undefined, op.auth), 201);
      return null;
    },
  },
  {
    action: 'key.revoked',
    actor: 'operator',
    run: async (t, op) => {
      const key = await json(await api(t, 'POST', `/api/v1/admin/operators/${op.operator_id}/keys`, undefined, op.auth), 201);
      expect((await api(t, 'DELETE', `/api/v1/admin/operators/${op.operator_id}/keys/${key.key_id as string}`, undefined, op.auth)).status).toBe(204);
      return null;
    },
  },
  {
    action: 'operator.created',
    actor: 'owner',
    run: async (t) => {
      await json(await api(t, 'POST', '/api/v1/admin/operators', { name: 'New', email: `new-${Date.now()}@team.example.org`, role: 'operator' }), 201);
      return null;
    },
  },
  {
    action: 'signin.succeeded',
    actor: 'operator',
    run: async (t, op) => {
      await signIn(t, op.key);
      return null;
    },
  },
  {
    action: 'signout.succeeded',
    actor: 'operator',
    run: async (t, op) => {
      const { cookie, csrf } = await signIn(t, op.key);
      expect((await postForm(t, '/operator/logout', { _csrf: csrf }, cookie)).status).toBe(303);
      return null;
    },
  },
  {
    action: 'task.imported',
    actor: 'owner',
    run: async (t) => {
      const record = openRecord('submitted');
      expect(await importOk(t, [record])).toMatchObject({ imported: 1 });
      return String(record.task_id);
    },
  },
  {
    action: 'outbox.retried',
    actor: 'owner',
    run: async (t) => {
      const id = await submit(t);
      await json(await api(t, 'PATCH', `/api/v1/admin/tasks/${id}`, { status: 'accepted' }), 200);
      // The task's acceptance mail (no worker runs here) fails for good; an admin queues it again.
      const mail = await t.store.db.selectFrom('outbox').select('id').where('task_id', '=', id).executeTakeFirstOrThrow();
      await t.store.db.updateTable('outbox').set({ status: 'failed', last_error: 'test' }).where('id', '=', mail.id).execute();
      await json(await api(t, 'POST', `/api/v1/admin/outbox/${mail.id}/retry`), 200);
      return id;
    },
  },
  {
    action: 'webhook.retried',
    actor: 'owner',
    run: async (t) => {
      const id = await submit(t, { callback_url: 'https://hooks.example-agent.dev/audit' });
      await json(await api(t, 'PATCH', `/api/v1/admin/tasks/${id}`, { status: 'accepted' }), 200);
      const events = await json(await api(t, 'GET', `/api/v1/admin/webhooks?task_id=${id}`), 200);
      const [event] = events.webhooks as { id: string }[];
      await json(await api(t, 'POST', `/api/v1/admin/webhooks/${event?.id}/retry`), 200);
      return id;
    },
  },
  {
    action: 'signin.failed',
    actor: 'anonymous',
    run: async (t) => {
      expect((await postForm(t, '/operator/login', { key: 'not-a-key' })).status).toBe(401);
      return null;
    },
  },
];

describe.each(STORES)('audit log on %s', (store) => {
  const t = useTestApp({ store });

  for (const c of CASES) {
    it(`records ${c.action}`, async () => {
      const op = await newOperator(t);
      const taskId = await c.run(t, op);
      const query = taskId ? `task_id=${taskId}` : `limit=5`;
      const list = await json(await api(t, 'GET', `/api/v1/admin/audit?${query}`), 200);
      const entries = list.entries as Entry[];
      const actor = c.actor === 'operator' ? op.operator_id : c.actor;
      const found = entries.find((e) => e.action === c.action && e.actor === actor);
      expect(found, JSON.stringify(entries)).toBeDefined();
      expect(found?.task_id).toBe(taskId);
    });
  }

  it('pages newest first, filters by task and operator, and refuses a cursor carried to another filter', async () => {
    const op = await newOperator(t);
    const id = await submit(t);
    await patchAs(t, op, id, { operator_notes: 'one' });
    await patchAs(t, op, id, { status: 'accepted' });
    await patchAs(t, op, id, { status: 'rejected' });
    const first = await json(await api(t, 'GET', `/api/v1/admin/audit?task_id=${id}&limit=2`), 200);
    expect((first.entries as Entry[]).map((e) => e.action)).toEqual(['task.rejected', 'task.accepted']);
    const second = await json(await api(t, 'GET', `/api/v1/admin/audit?task_id=${id}&limit=2&cursor=${first.next_cursor as string}`), 200);
    expect((second.entries as Entry[]).map((e) => e.action)).toEqual(['task.updated']);
    expect(second.next_cursor).toBeNull();
    const mine = await json(await api(t, 'GET', `/api/v1/admin/audit?operator_id=${op.operator_id}`), 200);
    expect((mine.entries as Entry[]).every((e) => e.actor === op.operator_id)).toBe(true);
    const carried = await api(t, 'GET', `/api/v1/admin/audit?operator_id=${op.operator_id}&cursor=${first.next_cursor as string}`);
    expect(carried.status).toBe(400);
    expect(await carried.json()).toMatchObject({ error: 'invalid_cursor' });
    expect((await api(t, 'GET', '/api/v1/admin/audit?limit=0')).status).toBe(400);
  });

  it('shows who did what on the task page, names escaped', async () => {
    const op = await newOperator(t, 'operator', '<img src=x onerror=alert(1)>');
    const id = await submit(t);
    await patchAs(t, op, id, { status: 'accepted' });
    const { cookie } = await signIn(t);
    const page = await (await fetch(`${t.url}/operator/tasks/${id}`, { headers: { cookie } })).text();
    expect(page).toContain('Who did what');
    expect(page).toContain('data-audit="task.accepted"');
    // In words, with the API's name on hover (issue 31).
    expect(page).toContain('<span title="task.accepted">accepted the task</span>');
    expect(page).toContain('&lt;img src=x onerror=alert(1)&gt;');
    expect(page).not.toContain('<img src=x');
  });

  it('keeps the entries of a task whose private fields retention erased, and sweeps finished sign-in state', async () => {
    const op = await newOperator(t);
    const id = await submit(t);
    await patchAs(t, op, id, { status: 'rejected', operator_notes: 'Out of scope.' });
    (t.clock as TestClock).advance(91 * 24 * 3_600_000);
    const run = await runRetention(t.deps);
    expect(run?.erased_tasks).toBeGreaterThanOrEqual(1);
    const list = await json(await api(t, 'GET', `/api/v1/admin/audit?task_id=${id}`), 200);
    expect((list.entries as Entry[]).map((e) => e.action)).toEqual(['task.rejected']);
    expect(await t.store.db.selectFrom('webauthn_challenges').select('id').execute()).toEqual([]);
  });

  it('is readable by admins only', async () => {
    const op = await newOperator(t);
    expect((await api(t, 'GET', '/api/v1/admin/audit', undefined, op.auth)).status).toBe(403);
    expect((await api(t, 'GET', '/api/v1/admin/audit', undefined, ADMIN)).status).toBe(200);
  });
});
