import { type CompiledQuery, DefaultQueryExecutor } from 'kysely';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { type Background, startBackground } from '../src/background.js';
import { enqueueTaskSubmitted } from '../src/mail/outbox.js';
import { CLAIM_RANKS } from '../src/mail/priority.js';
import { type OutboxWorker, startOutboxWorker } from '../src/services/delivery/mail-worker.js';
import { withTransaction } from '../src/store/db.js';
import { postJson, STORES, startTestApp, type TestApp, validTask } from './support/app.js';
import { startSmtpServer, type TestSmtpServer } from './support/smtp.js';

/**
 * Issue 28, item 2: mail queued while this instance's worker runs is written under the worker's
 * claim and handed to it once its transaction has committed (mail/wake.ts), so the worker does not
 * claim it from the store: a claim rewrote every row, its body included, one more write per mail.
 * Counted, not timed.
 */

const executorPrototype = Object.getPrototypeOf(DefaultQueryExecutor.prototype) as { executeQuery: (query: CompiledQuery) => unknown };
const CLAIM = /^update "outbox" set "locked_until" = \$?\??\d*, "claim_token"/i;

let t: TestApp | undefined;
let smtp: TestSmtpServer | undefined;
let background: Background | undefined;
let worker: OutboxWorker | undefined;
afterEach(async () => {
  vi.restoreAllMocks();
  await background?.stop();
  background = undefined;
  await worker?.stop();
  worker = undefined;
  await t?.close();
  t = undefined;
  await smtp?.close();
});

/** The claim token each outbox insert wrote its first row under (null: queued unclaimed). */
function insertedClaims(calls: [CompiledQuery][]): unknown[] {
  return calls
    .map(([query]) => query)
    .filter((query) => /^insert into "outbox"/i.test(query.sql))
    .map((query) => {
      const columns = [...query.sql.slice(0, query.sql.indexOf(')')).matchAll(/"(\w+)"/g)].map((m) => m[1]).slice(1);
      return query.parameters[columns.indexOf('claim_token')];
    });
}

async function allSent(app: TestApp, count: number): Promise<void> {
  await vi.waitFor(async () => {
    const rows = await app.store.db.selectFrom('outbox').select(['status', 'attempts', 'claim_token']).execute();
    expect(rows).toHaveLength(count);
    for (const row of rows) expect([row.status, Number(row.attempts), row.claim_token]).toEqual(['sent', 1, null]);
  }, 10_000);
}

describe.each(STORES)('mail handed to the worker on %s', (store) => {
  it('sends the mail of submissions made while it runs without claiming it from the store', async () => {
    smtp = await startSmtpServer();
    // Polls far apart: any claim in this test comes from the worker's start or from a wake.
    t = await startTestApp({ store, env: { SMTP_URL: smtp.url, OPERATOR_EMAIL: 'operator@ops.example-service.dev', MAIL_POLL_MS: '60000' } });
    const statements = vi.spyOn(executorPrototype, 'executeQuery');
    background = await startBackground(t.deps);
    for (let i = 0; i < 30; i += 1) expect((await postJson(`${t.url}/api/v1/tasks`, validTask())).status).toBe(202);
    await smtp.waitFor(30, undefined, 20_000);
    await allSent(t, 30);
    const claims = statements.mock.calls.filter(([query]) => CLAIM.test(query.sql));
    // The one claim at the worker's start (a statement per rank); before, every submission's wake
    // started a pass that claimed its mail (6 statements here).
    expect(claims.length).toBeLessThanOrEqual(CLAIM_RANKS.length);
    // Each mail was written under the worker's claim.
    const inserted = insertedClaims(statements.mock.calls);
    expect(inserted).toHaveLength(30);
    for (const token of inserted) expect(token).toEqual(expect.any(String));
    expect(smtp.received).toHaveLength(30);
  }, 60_000);

  it('queues mail unclaimed once it holds its bound, and that mail is claimed and sent', async () => {
    // A poll too slow to matter: the worker is woken once each submission's batch has committed.
    smtp = await startSmtpServer();
    t = await startTestApp({ store, env: { SMTP_URL: smtp.url, OPERATOR_EMAIL: 'operator@ops.example-service.dev', MAIL_POLL_MS: '60000' } });
    const statements = vi.spyOn(executorPrototype, 'executeQuery');
    worker = startOutboxWorker(t.deps, { ...t.deps.config.mail, handoverMax: 0 });
    for (let i = 0; i < 5; i += 1) expect((await postJson(`${t.url}/api/v1/tasks`, validTask())).status).toBe(202);
    await smtp.waitFor(5, undefined, 20_000);
    await allSent(t, 5);
    // Every mail was queued unclaimed (the worker was woken and claimed it from the store).
    expect(insertedClaims(statements.mock.calls)).toEqual([null, null, null, null, null]);
    expect(smtp.received).toHaveLength(5);
  }, 60_000);

  it('wakes the worker once a slow transaction has committed, not before, so its mail waits for no poll', async () => {
    // Queued unclaimed (the worker holds its bound), in a transaction that commits 300 ms after
    // the mail was queued: a wake sent at once would have the worker claim 25 ms later, see
    // nothing on PostgreSQL (another connection) and leave the mail to the poll a minute away.
    smtp = await startSmtpServer();
    t = await startTestApp({ store, env: { SMTP_URL: smtp.url, OPERATOR_EMAIL: 'operator@ops.example-service.dev', MAIL_POLL_MS: '60000' } });
    worker = startOutboxWorker(t.deps, { ...t.deps.config.mail, handoverMax: 0 });
    const app = t;
    const created = await postJson(`${app.url}/api/v1/tasks`, validTask());
    const { task_id } = (await created.json()) as { task_id: string };
    await smtp.waitFor(1, undefined, 5_000);
    const row = await app.store.db.selectFrom('tasks').selectAll().where('id', '=', task_id).executeTakeFirstOrThrow();
    await withTransaction(app.store.db, async (trx) => {
      await enqueueTaskSubmitted(trx, app.deps, [{ ...row, id: 'task-slow-commit' }]);
      await new Promise((resolve) => setTimeout(resolve, 300));
    });
    await smtp.waitFor(1, (mail) => mail.text.includes('task-slow-commit'), 5_000);
  }, 30_000);
});
