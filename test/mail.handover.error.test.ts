import { afterEach, describe, expect, it } from 'vitest';
import { type Background, startBackground } from '../src/background.js';
import { enqueueTaskSubmitted } from '../src/mail/outbox.js';
import { withTransaction } from '../src/store/db.js';
import type { TaskRow } from '../src/store/tasks-repo.js';
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

/** A submitted task's row (its notification already sent), and a copy of it under another id. */
async function submittedTask(app: TestApp): Promise<{ row: TaskRow; copy: (id: string) => TaskRow }> {
  const created = await postJson(`${app.url}/api/v1/tasks`, validTask());
  expect(created.status).toBe(202);
  const { task_id } = (await created.json()) as { task_id: string };
  const row = await app.store.db.selectFrom('tasks').selectAll().where('id', '=', task_id).executeTakeFirstOrThrow();
  return { row, copy: (id) => ({ ...row, id }) };
}

const mailsFor = (server: TestSmtpServer, taskId: string) => server.received.filter((mail) => mail.text.includes(taskId));

describe.each(STORES)('mail handed to the worker on %s', (store) => {
  it('never hands over the mail of a transaction that rolled back', async () => {
    smtp = await startSmtpServer();
    t = await startTestApp({ store, env: { SMTP_URL: smtp.url, OPERATOR_EMAIL: OPERATOR } });
    background = await startBackground(t.deps);
    const { row, copy } = await submittedTask(t);
    await smtp.waitFor(1, (mail) => mail.text.includes(row.id));
    const app = t;
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
    smtp = await startSmtpServer();
    t = await startTestApp({ store, env: { SMTP_URL: smtp.url, OPERATOR_EMAIL: OPERATOR } });
    background = await startBackground(t.deps);
    const { row, copy } = await submittedTask(t);
    await smtp.waitFor(1, (mail) => mail.text.includes(row.id));
    const app = t;
    // The same task's notification again (one id per task and kind): nothing is written.
    await withTransaction(app.store.db, (trx) => enqueueTaskSubmitted(trx, app.deps, [row, copy('task-next')]));
    await smtp.waitFor(1, (mail) => mail.text.includes('task-next'));
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(mailsFor(smtp, row.id)).toHaveLength(1);
  }, 30_000);

  it('leaves a mail whose lease runs out before the next renewal to a claim once the lease has ended', async () => {
    smtp = await startSmtpServer();
    // A 600 ms lease is renewed every 200 ms: a mail whose transaction took 450 ms has 150 ms left.
    const clock = new TestClock();
    t = await startTestApp({ store, clock, env: { SMTP_URL: smtp.url, OPERATOR_EMAIL: OPERATOR, MAIL_LEASE_MS: '600', MAIL_POLL_MS: '100' } });
    background = await startBackground(t.deps);
    const { row, copy } = await submittedTask(t);
    await smtp.waitFor(1, (mail) => mail.text.includes(row.id));
    const app = t;
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
