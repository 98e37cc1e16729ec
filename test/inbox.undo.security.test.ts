import { describe, expect, it } from 'vitest';
import { postForm, signIn } from './console.support.js';
import { outboxesDrained } from './inbox.support.js';
import { STORES, startTestApp, type TestApp, TestClock, useTestApp } from './support/app.js';
import { waitUntil } from './support/smtp.js';
import { api, json, newOperator } from './team.support.js';
import { submitWithCallback, useReceiver, WEBHOOK_TEST_ENV } from './webhooks.support.js';

/**
 * Held console actions under attack (docs/inbox.md#undo): racing status changes on two instances
 * hold one and commit one; an operator disabled during the window does not commit in their name;
 * only the one who acted, or an admin, may undo.
 */

const WINDOW_MS = 10_000;
const UNDO_ENV = { ...WEBHOOK_TEST_ENV, CONSOLE_UNDO_SECONDS: String(WINDOW_MS / 1000), CONSOLE_UNDO_POLL_MS: '50' };

describe.each(STORES)('held console actions on %s', (store) => {
  const receiver = useReceiver();
  const clock = new TestClock(new Date('2030-07-01T09:00:00.000Z'));
  const t = useTestApp({ store, clock, smtp: true, background: true, env: UNDO_ENV });

  const settled = () => outboxesDrained(t);

  const held = () => t.store.db.selectFrom('held_actions').select(['id', 'task_id', 'kind']).execute();
  const statusOf = async (app: TestApp, id: string) => ((await (await fetch(`${app.url}/api/v1/tasks/${id}`)).json()) as { status: string }).status;

  it('20 simultaneous accepts and rejects of one task (two instances on PostgreSQL): one held, the rest refused, one commit', async () => {
    // SQLite is one process's file: one instance. PostgreSQL: two instances on one database.
    const second =
      store === 'postgres' ? await startTestApp({ shareDatabaseWith: t, clock, background: true, env: { ...UNDO_ENV, SMTP_URL: t.smtp.url } }) : undefined;
    try {
      const apps = second ? [t, second] : [t];
      const { cookie, csrf } = await signIn(t);
      const id = await submitWithCallback(t, `${receiver.url}/ok-race-${store}`);
      await fetch(`${t.url}/operator/tasks/${id}`, { headers: { cookie } });
      await settled();
      const mailsBefore = t.smtp.received.filter((m) => m.to === 'agent@mail.example-agent.dev').length;
      const hooksBefore = receiver.to(`/ok-race-${store}`).length;

      const answers = await Promise.all(
        Array.from({ length: 20 }, (_, i) => {
          const app = apps[i % apps.length] as TestApp;
          const accept = i % 2 === 0;
          return postForm(
            app,
            `/operator/tasks/${id}/${accept ? 'accept' : 'reject'}`,
            { _csrf: csrf, ...(accept ? {} : { operator_notes: 'Out of scope.' }) },
            cookie,
          ).then(async (res) => ({ status: res.status, text: await res.text() }));
        }),
      );
      expect(answers.filter((a) => a.status === 303)).toHaveLength(1);
      const refused = answers.filter((a) => a.status !== 303);
      expect(refused).toHaveLength(19);
      for (const r of refused) {
        expect(r.status).toBe(409);
        expect(r.text).toContain('waiting to be committed');
      }
      expect(await held()).toHaveLength(1);

      clock.advance(WINDOW_MS + 1000);
      await waitUntil(async () => (await held()).length === 0, 10_000, 'the held action to commit');
      await waitUntil(() => receiver.to(`/ok-race-${store}`).length > hooksBefore, 15_000, 'the webhook');
      await new Promise((resolve) => setTimeout(resolve, 300)); // both committers run again
      await settled();
      const status = await statusOf(t, id);
      expect(['accepted', 'rejected']).toContain(status);
      const changes = await t.store.db
        .selectFrom('audit_log')
        .select('action')
        .where('task_id', '=', id)
        .where('action', 'in', ['task.accepted', 'task.rejected'])
        .execute();
      expect(changes).toEqual([{ action: `task.${status}` }]);
      expect(t.smtp.received.filter((m) => m.to === 'agent@mail.example-agent.dev').length - mailsBefore).toBe(1);
      expect(receiver.to(`/ok-race-${store}`).length - hooksBefore).toBe(1);
    } finally {
      await second?.close();
    }
  });

  it('an operator disabled during the undo window: the held accept is dropped with an audit entry, nothing commits in their name', async () => {
    const ada = await newOperator(t, 'operator', 'Ada');
    const { cookie, csrf } = await signIn(t, ada.key);
    const id = await submitWithCallback(t, `${receiver.url}/ok-disabled-${store}`);
    await settled();
    const hooksBefore = receiver.to(`/ok-disabled-${store}`).length;
    expect((await postForm(t, `/operator/tasks/${id}/accept`, { _csrf: csrf }, cookie)).status).toBe(303);
    expect(await held()).toHaveLength(1);

    await json(await api(t, 'PATCH', `/api/v1/admin/operators/${ada.operator_id}`, { disabled: true }), 200);
    clock.advance(WINDOW_MS + 1000);
    await waitUntil(async () => (await held()).length === 0, 10_000, 'the held accept to be dropped');
    await new Promise((resolve) => setTimeout(resolve, 300));
    await settled();

    expect(await statusOf(t, id)).toBe('submitted');
    expect(receiver.to(`/ok-disabled-${store}`).length).toBe(hooksBefore);
    const audit = await t.store.db.selectFrom('audit_log').select(['action', 'actor', 'details']).where('task_id', '=', id).execute();
    expect(audit.map((a) => a.action)).not.toContain('task.accepted');
    const dropped = audit.find((a) => a.action === 'held.dropped');
    expect(dropped?.actor).toBe(ada.operator_id);
    expect(JSON.parse(dropped?.details ?? '{}')).toMatchObject({ kind: 'accept', reason: 'actor_disabled' });
  });

  it("another operator may not undo someone's held action; the one who acted and an admin may", async () => {
    const ada = await newOperator(t, 'operator', 'Ada');
    const bob = await newOperator(t, 'operator', 'Bob');
    const adaSession = await signIn(t, ada.key);
    const bobSession = await signIn(t, bob.key);
    const owner = await signIn(t);

    const undoOf = async (taskId: string): Promise<string> => {
      const page = await (await fetch(`${t.url}/operator/tasks/${taskId}`, { headers: { cookie: adaSession.cookie } })).text();
      return /action="(\/operator\/held\/[^/]+\/undo)"/.exec(page)?.[1] ?? '';
    };
    for (const who of ['ada', 'owner'] as const) {
      const id = await submitWithCallback(t, `${receiver.url}/ok-undo-${who}-${store}`);
      expect((await postForm(t, `/operator/tasks/${id}/accept`, { _csrf: adaSession.csrf }, adaSession.cookie)).status).toBe(303);
      const undo = await undoOf(id);
      expect(undo).not.toBe('');

      const refused = await postForm(t, undo, { _csrf: bobSession.csrf }, bobSession.cookie);
      expect(refused.status).toBe(403);
      expect(await refused.text()).toContain('Only the operator who took this action, or an admin, may undo it.');
      expect(await held()).toHaveLength(1);

      const by = who === 'ada' ? adaSession : owner;
      const undone = await postForm(t, undo, { _csrf: by.csrf }, by.cookie);
      expect(undone.status).toBe(200);
      expect(await held()).toHaveLength(0);
    }
  });
});
