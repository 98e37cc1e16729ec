import { afterEach, describe, expect, it } from 'vitest';
import { type Background, startBackground } from '../src/background.js';
import { enqueueTaskSubmitted } from '../src/mail/outbox.js';
import { withTransaction } from '../src/store/db.js';
import type { TaskRow } from '../src/store/tasks/tasks-repo.js';
import { postJson, STORES, startTestApp, type TestApp, TestClock, validTask } from './support/app.js';
import { startSmtpServer, type TestSmtpServer } from './support/smtp.js';

/**
 * Mail queued under the worker's claim and handed to it after the commit (mail/wake.ts): what must
 * never be handed over. A row of a transaction that rolled back does not exist; a row whose id was
 * already queued was not written by this transaction (sending it again would send a mail twice);
 * a row whose lease runs out before the worker's next renewal could be claimed by another instance
 * meanwhile, so it is left to a claim from the store once the lease has ended.
 */

let t: TestApp | undefined;
let smtp: TestSmtpServer | undefined;
let background: Background | undefined;
afterEach(async () => {
  await background?.stop();
  background = undefined;
  await t?.close();
  t = undefined;
  await smtp?.close();
});

const OPERATOR = 'operator@ops.example-service.dev';

/**
 * An app with its worker running, a task submitted and its notification sent: the task's row, a
 * copy of it under another id (a new task's notification), and the app and SMTP server.
 */
async function withWorker(store: 'sqlite' | 'postgres', options: { env?: Record<string, string>; clock?: TestClock } = {}) {
  const server = await startSmtpServer();
  smtp = server;
  const app = await startTestApp({
    store,
    ...(options.clock ? { clock: options.clock } : {}),
    env: { SMTP_URL: server.url, OPERATOR_EMAIL: OPERATOR, ...options.env },
  });
  t = app;
  background = await startBackground(app.deps);
  const created = await postJson(`${app.url}/api/v1/tasks`, validTask());
  expect(created.status).toBe(202);
  const { task_id } = (await created.json()) as { task_id: string };
  const row = await app.store.db.selectFrom('tasks').selectAll().where('id', '=', task_id).executeTakeFirstOrThrow();
  await server.waitFor(1, (mail) => mail.text.includes(row.id));
  return { app, smtp: server, row, copy: (id: string): TaskRow => ({ ...row, id }) };
}

const mailsFor = (server: TestSmtpServer, taskId: string) => server.received.filter((mail) => mail.text.includes(taskId));

describe.each(STORES)('mail handed to the worker on %s', (store) => {
  it('never hands over the mail of a transaction that rolled back', async () => {
    const { app, smtp, copy } = await withWorker(store);
    await expect(
      withTransaction(app.store.db, async (trx) => {
        await enqueueTaskSubmitted(trx, app.deps, [copy('task-rolled-back')]);
        throw new Error('the change failed after its mail was queued');
      }),
    ).rejects.toThrow('the change failed');
    // A committed one after it goes out; the rolled-back one never does.
    await withTransaction(app.store.db, (trx) => enqueueTaskSubmitted(trx, app.deps, [copy('task-committed')]));
    await smtp.waitFor(1, (mail) => mail.text.includes('task-committed'));
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(mailsFor(smtp, 'task-rolled-back')).toEqual([]);
    expect(await app.store.db.selectFrom('outbox').select('id').where('task_id', '=', 'task-rolled-back').execute()).toEqual([]);
  }, 30_000);

  it('does not hand over a mail whose id was already queued, so it is not sent twice', async () => {
    const { app, smtp, row, copy } = await withWorker(store);
    // The same task's notification again (one id per task and kind): nothing is written.
    await withTransaction(app.store.db, (trx) => enqueueTaskSubmitted(trx, app.deps, [row, copy('task-next')]));
    await smtp.waitFor(1, (mail) => mail.text.includes('task-next'));
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(mailsFor(smtp, row.id)).toHaveLength(1);
  }, 30_000);

  it('leaves a mail whose lease runs out before the next renewal to a claim once the lease has ended', async () => {
    // A 600 ms lease is renewed every 200 ms: a mail whose transaction took 450 ms has 150 ms left.
    const clock = new TestClock();
    const { app, smtp, copy } = await withWorker(store, { clock, env: { MAIL_LEASE_MS: '600', MAIL_POLL_MS: '100' } });
    await withTransaction(app.store.db, async (trx) => {
      await enqueueTaskSubmitted(trx, app.deps, [copy('task-slow')]);
      clock.advance(450);
    });
    // Not handed over: not sent while its lease holds (a hand-over sends at once) …
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(mailsFor(smtp, 'task-slow')).toEqual([]);
    // … and claimed from the store, and sent once, when it has ended.
    clock.advance(200);
    await smtp.waitFor(1, (mail) => mail.text.includes('task-slow'));
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(mailsFor(smtp, 'task-slow')).toHaveLength(1);
  }, 30_000);
});
