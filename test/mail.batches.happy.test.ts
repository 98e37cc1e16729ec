import { type CompiledQuery, DefaultQueryExecutor } from 'kysely';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { type Background, startBackground } from '../src/background.js';
import { postJson, STORES, startTestApp, type TestApp, validTask } from './support/app.js';
import { startSmtpServer, type TestSmtpServer } from './support/smtp.js';

/**
 * Issue 28, item 2: the mail worker claims and marks mail in batches. A busy outbox must not cost
 * a claim and a mark — two commits, two fsyncs on SQLite — per mail: counted, not timed.
 */

const executorPrototype = Object.getPrototypeOf(DefaultQueryExecutor.prototype) as { executeQuery: (query: CompiledQuery) => unknown };

let t: TestApp | undefined;
let smtp: TestSmtpServer | undefined;
let background: Background | undefined;
afterEach(async () => {
  vi.restoreAllMocks();
  await background?.stop();
  background = undefined;
  await t?.close();
  t = undefined;
  await smtp?.close();
});

describe.each(STORES)('the mail worker in batches on %s', (store) => {
  it('sends 60 queued mails with a handful of outbox writes, every one marked sent once', async () => {
    smtp = await startSmtpServer();
    // Each send takes 300 ms, so the eight slots' sends finish in waves (as under load, when many
    // finish within the marks' 50 ms window), whatever the speed of this machine.
    smtp.setDataDelay(300);
    t = await startTestApp({ store, env: { SMTP_URL: smtp.url, OPERATOR_EMAIL: 'operator@ops.example-service.dev', MAIL_CONCURRENCY: '8' } });
    for (let i = 0; i < 60; i += 1) expect((await postJson(`${t.url}/api/v1/tasks`, validTask())).status).toBe(202);
    const statements = vi.spyOn(executorPrototype, 'executeQuery');
    background = await startBackground(t.deps);
    await smtp.waitFor(60, undefined, 30_000);
    const db = t.store.db;
    await vi.waitFor(async () => {
      const pending = await db.selectFrom('outbox').select('id').where('status', '!=', 'sent').execute();
      expect(pending).toEqual([]);
    }, 10_000);
    const outboxWrites = statements.mock.calls.filter(([query]) => /^update "outbox"/i.test(query.sql));
    const claims = outboxWrites.filter(([query]) => /^update "outbox" set "locked_until" = \$?\??\d*, "claim_token"/i.test(query.sql));
    const marks = outboxWrites.filter(([query]) => /^update "outbox" set "status"/i.test(query.sql));
    // One claim per 64 mails (8 per sending slot) and the idle polls after them; one mark per wave
    // of sends finishing together (about 8; waves drift apart on a busy machine). One of each per
    // mail was 120.
    expect(claims.length).toBeLessThanOrEqual(4);
    expect(marks.length).toBeLessThanOrEqual(20);
    const rows = await db.selectFrom('outbox').select(['attempts', 'sent_at', 'claim_token']).execute();
    expect(rows).toHaveLength(60);
    for (const row of rows) expect([Number(row.attempts), row.sent_at !== null, row.claim_token]).toEqual([1, true, null]);
    expect(smtp.received).toHaveLength(60);
  }, 60_000);
});
