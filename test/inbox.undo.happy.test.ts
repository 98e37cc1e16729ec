import { describe, expect, it } from 'vitest';
import { postForm, signIn } from './console.support.js';
import { outboxesDrained } from './inbox.support.js';
import { patchOk } from './operator.support.js';
import { postJson, STORES, startTestApp, type TestApp, TestClock, useTestApp, validTask } from './support/app.js';
import { waitUntil } from './support/smtp.js';
import { submitWithCallback, useReceiver, WEBHOOK_TEST_ENV } from './webhooks.support.js';

/**
 * Issue 31: undo for a few seconds after accept, reject, deliver and reply in the console. The
 * action is held in the store and committed by the background committer when its window passes;
 * undone within the window it leaves no trace: task row, audit log, mail (a real SMTP server) and
 * webhooks (a real receiver) are as before. Without undo the change lands after the window, with
 * its audit row, mail and webhook.
 */

const WINDOW_MS = 10_000;

describe.each(STORES)('undo in the console on %s', (store) => {
  const receiver = useReceiver();
  const clock = new TestClock(new Date('2030-06-01T09:00:00.000Z'));
  const t = useTestApp({
    store,
    clock,
    smtp: true,
    background: true,
    env: { ...WEBHOOK_TEST_ENV, CONSOLE_UNDO_SECONDS: String(WINDOW_MS / 1000), CONSOLE_UNDO_POLL_MS: '50' },
  });

  const settled = outboxesDrained;

  /** Everything the requester or the record could show of a task. */
  async function traces(id: string, path: string) {
    const db = t.store.db;
    const [task, audit, replies, held] = await Promise.all([
      db.selectFrom('tasks').selectAll().where('id', '=', id).executeTakeFirstOrThrow(),
      db.selectFrom('audit_log').select(['action']).where('task_id', '=', id).execute(),
      db.selectFrom('message_replies').select('id').execute(),
      db.selectFrom('held_actions').select('id').execute(),
    ]);
    const status = (await (await fetch(`${t.url}/api/v1/tasks/${id}`)).json()) as { status: string };
    return {
      task,
      audit: audit.map((a) => a.action).sort(),
      replies: replies.length,
      held: held.length,
      publicStatus: status.status,
      mails: t.smtp.received.length,
      webhooks: receiver.to(path).length,
    };
  }

  it('an accept, reject, delivery or reply undone within the window leaves no trace in the store, mail, webhooks or audit', async () => {
    const { cookie, csrf } = await signIn(t);
    const cases: {
      name: string;
      path: string;
      create?: () => Promise<string>;
      prepare: (id: string) => Promise<Record<string, string>>;
      action: (id: string) => string;
    }[] = [
      { name: 'accept', path: '/ok-undo-accept', prepare: async () => ({ eta_local: '2030-06-05T12:00' }), action: (id) => `/operator/tasks/${id}/accept` },
      { name: 'reject', path: '/ok-undo-reject', prepare: async () => ({ operator_notes: 'Out of scope.' }), action: (id) => `/operator/tasks/${id}/reject` },
      {
        name: 'deliver',
        path: '/ok-undo-deliver',
        prepare: async (id) => {
          await patchOk(t, id, { status: 'accepted' });
          return { operator_notes: 'The bakery opens at 7:30 on Sundays.', confirmed: '1' };
        },
        action: (id) => `/operator/tasks/${id}/deliver`,
      },
    ];
    // A structured result (a task with a response schema) is held like a text deliverable.
    cases.push({
      name: 'deliver a result',
      path: '/ok-undo-result',
      create: () =>
        submitWithCallback(t, `${receiver.url}/ok-undo-result`, {
          response_schema: { type: 'object', properties: { open: { type: 'boolean' } }, required: ['open'] },
        }),
      prepare: async (id) => {
        await patchOk(t, id, { status: 'accepted' });
        return { result_source: 'json', result_json: '{"open":true}', confirmed: '1' };
      },
      action: (id) => `/operator/tasks/${id}/result`,
    });
    for (const c of cases) {
      const id = await (c.create ?? (() => submitWithCallback(t, `${receiver.url}${c.path}`)))();
      const fields = await c.prepare(id);
      // The operator has the task open (the first view stamps it as seen: not part of the action).
      await fetch(`${t.url}/operator/tasks/${id}`, { headers: { cookie } });
      await settled(t);
      const before = await traces(id, c.path);

      const acted = await postForm(t, c.action(id), { _csrf: csrf, ...fields }, cookie);
      expect(acted.status, c.name).toBe(303);
      const page = await (await fetch(`${t.url}${acted.headers.get('location')}`, { headers: { cookie } })).text();
      expect(page, c.name).toMatch(/Accepting…|Rejecting…|Delivering…/);
      const undo = /action="(\/operator\/held\/[^/]+\/undo)"/.exec(page)?.[1];
      expect(undo, c.name).toBeDefined();
      // Held: the requester sees nothing yet.
      expect((await traces(id, c.path)).publicStatus, c.name).toBe(before.publicStatus);

      const undone = await postForm(t, undo ?? '', { _csrf: csrf }, cookie);
      expect(undone.status, c.name).toBe(200);
      expect(await undone.text()).toContain('Undone. Nothing was sent to the requester.');

      clock.advance(WINDOW_MS + 1000);
      await new Promise((resolve) => setTimeout(resolve, 400)); // several committer runs
      await settled(t);
      expect(await traces(id, c.path), c.name).toEqual({ ...before, held: 0 });
      // Too late to undo twice.
      expect((await postForm(t, undo ?? '', { _csrf: csrf }, cookie)).status).toBe(409);
    }

    // A reply to a message, undone: no reply recorded, no mail to its sender.
    const id = await submitWithCallback(t, `${receiver.url}/ok-undo-reply`);
    const sent = await postJson(`${t.url}/api/v1/messages`, { message: `A question about ${id}, please.`, reply_to: 'asker@mail.example-agent.dev' });
    const messageId = ((await sent.json()) as { message_id: string }).message_id;
    await fetch(`${t.url}/operator/tasks/${id}`, { headers: { cookie } });
    await settled(t);
    const before = await traces(id, '/ok-undo-reply');
    const replied = await postForm(t, `/operator/messages/${messageId}/reply`, { _csrf: csrf, task_id: id, message: 'Yes, tomorrow morning.' }, cookie);
    expect(replied.status).toBe(303);
    const page = await (await fetch(`${t.url}/operator/tasks/${id}`, { headers: { cookie } })).text();
    expect(page).toContain('Sending reply…');
    const undo = /action="(\/operator\/held\/[^/]+\/undo)"/.exec(page)?.[1] ?? '';
    expect((await postForm(t, undo, { _csrf: csrf }, cookie)).status).toBe(200);
    clock.advance(WINDOW_MS + 1000);
    await new Promise((resolve) => setTimeout(resolve, 400));
    await settled(t);
    expect(await traces(id, '/ok-undo-reply')).toEqual({ ...before, held: 0 });
    expect(t.smtp.received.some((m) => m.to === 'asker@mail.example-agent.dev')).toBe(false);

    // A reply from the messages list (no task page): its own page offers Undo.
    const fromList = await postForm(t, `/operator/messages/${messageId}/reply`, { _csrf: csrf, message: 'Typed into the wrong box.' }, cookie);
    expect(fromList.status).toBe(303);
    const heldPage = await (await fetch(`${t.url}${fromList.headers.get('location')}`, { headers: { cookie } })).text();
    expect(heldPage).toContain('Sending reply…');
    const undoFromList = /action="(\/operator\/held\/[^/]+\/undo)"/.exec(heldPage)?.[1] ?? '';
    const undoneFromList = await postForm(t, undoFromList, { _csrf: csrf }, cookie);
    expect(await undoneFromList.text()).toContain('Undone. Nothing was sent.');
    clock.advance(WINDOW_MS + 1000);
    await new Promise((resolve) => setTimeout(resolve, 400));
    await settled(t);
    expect(await t.store.db.selectFrom('message_replies').select('id').execute()).toHaveLength(before.replies);
    expect(t.smtp.received.some((m) => m.to === 'asker@mail.example-agent.dev')).toBe(false);
  });

  it('without undo, the held accept lands after the window: status, audit row, mail and webhook together', async () => {
    const { cookie, csrf } = await signIn(t);
    const id = await submitWithCallback(t, `${receiver.url}/ok-lands-accept`);
    await settled(t);
    const mailsBefore = t.smtp.received.length;
    expect((await postForm(t, `/operator/tasks/${id}/accept`, { _csrf: csrf, eta_local: '2030-06-05T12:00' }, cookie)).status).toBe(303);

    // Within the window nothing is visible to the requester.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(((await (await fetch(`${t.url}/api/v1/tasks/${id}`)).json()) as { status: string }).status).toBe('submitted');
    expect(receiver.to('/ok-lands-accept')).toHaveLength(0);
    expect(await t.store.db.selectFrom('audit_log').select('action').where('task_id', '=', id).where('action', '=', 'task.accepted').execute()).toHaveLength(0);

    clock.advance(WINDOW_MS + 1000);
    await waitUntil(
      async () => ((await (await fetch(`${t.url}/api/v1/tasks/${id}`)).json()) as { status: string }).status === 'accepted',
      10_000,
      'the held accept to commit',
    );
    await waitUntil(() => receiver.to('/ok-lands-accept').length > 0, 15_000, 'the webhook');
    await settled(t);
    expect(t.smtp.received.length).toBeGreaterThan(mailsBefore);
    const audit = await t.store.db
      .selectFrom('audit_log')
      .select(['action', 'actor'])
      .where('task_id', '=', id)
      .where('action', '=', 'task.accepted')
      .execute();
    expect(audit).toEqual([{ action: 'task.accepted', actor: 'owner' }]);
    expect(await t.store.db.selectFrom('held_actions').select('id').execute()).toEqual([]);
    const task = (await (await fetch(`${t.url}/api/v1/tasks/${id}`)).json()) as { eta: string };
    expect(task.eta).toBe('2030-06-05T12:00:00.000Z');
  });

  it('a held action survives a restart: a fresh instance on the same store commits it', async () => {
    const restartClock = new TestClock(new Date('2030-06-02T09:00:00.000Z'));
    const env = { CONSOLE_UNDO_SECONDS: String(WINDOW_MS / 1000), CONSOLE_UNDO_POLL_MS: '50' };
    const before = await startTestApp({ store, clock: restartClock, env });
    let after: TestApp | undefined;
    try {
      const res = await postJson(`${before.url}/api/v1/tasks`, validTask());
      const id = ((await res.json()) as { task_id: string }).task_id;
      const { cookie, csrf } = await signIn(before);
      expect((await postForm(before, `/operator/tasks/${id}/accept`, { _csrf: csrf }, cookie)).status).toBe(303);
      expect(await before.store.db.selectFrom('held_actions').select('task_id').execute()).toEqual([{ task_id: id }]);
      // The first instance never runs its committer (as if it stopped); the next one commits on start.
      after = await startTestApp({ store, clock: restartClock, shareDatabaseWith: before, background: true, env });
      restartClock.advance(WINDOW_MS + 1000);
      await waitUntil(
        async () => ((await (await fetch(`${after?.url}/api/v1/tasks/${id}`)).json()) as { status: string }).status === 'accepted',
        10_000,
        'the held accept to commit after the restart',
      );
      expect(await before.store.db.selectFrom('held_actions').select('id').execute()).toEqual([]);
    } finally {
      await after?.close();
      await before.close();
    }
  });
});
