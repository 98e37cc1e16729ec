import { afterEach, describe, expect, it } from 'vitest';
import { type Background, startBackground } from '../src/background.js';
import { postJson, STORES, startTestApp, TEST_ADMIN_KEY, type TestApp, validTask } from './support/app.js';
import { startSmtpServer, type TestSmtpServer } from './support/smtp.js';

/**
 * Mail under pressure (issue 15, defects 6 and 8): requesters' mail about their own task never
 * waits behind operator notifications; notifications are charged to the daily cap first and
 * collapse into a digest when it is near; many mails go out over pooled connections, several at
 * a time.
 */

const OPERATOR = 'operator@ops.example-service.dev';
const REQUESTER = 'agent@mail.example-agent.dev';

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

async function accept(app: TestApp, taskId: string): Promise<void> {
  const res = await fetch(`${app.url}/api/v1/admin/tasks/${taskId}`, {
    method: 'PATCH',
    headers: { authorization: `Bearer ${TEST_ADMIN_KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify({ status: 'accepted' }),
  });
  expect(res.status).toBe(200);
}

describe.each(STORES)('mail priority under a small daily cap on %s', (store) => {
  it('sends the acceptance first, keeps cap room for it, and digests the notifications', async () => {
    smtp = await startSmtpServer();
    // One at a time, so the order of arrival is the order of claiming.
    t = await startTestApp({
      store,
      env: { SMTP_URL: smtp.url, OPERATOR_EMAIL: OPERATOR, DAILY_EMAIL_CAP: '6', MAIL_POLL_MS: '20', TRUST_PROXY: '1', MAIL_CONCURRENCY: '1' },
    });
    // One task (a notification), then eight messages from eight addresses (eight notifications),
    // then the acceptance: queued last, while the worker is not running.
    const created = await postJson(`${t.url}/api/v1/tasks`, validTask({ contact_email: REQUESTER }));
    const { task_id } = (await created.json()) as { task_id: string };
    for (let i = 0; i < 8; i += 1) {
      const sent = await postJson(
        `${t.url}/api/v1/messages`,
        { message: `Question number ${i} for the operator`, reply_to: `q${i}@agents.example-agent.dev` },
        { 'x-forwarded-for': `198.51.100.${i + 1}` },
      );
      expect(sent.status).toBe(201);
    }
    await accept(t, task_id);

    background = await startBackground(t.deps);
    const first = await smtp.waitFor(1, undefined, 10_000);
    expect(first[0]?.to).toBe(REQUESTER);
    // The rest: two notifications one by one, then one digest of the remaining seven.
    const digest = (await smtp.waitFor(1, (mail) => /digest/i.test(mail.subject), 10_000))[0];
    expect(digest?.to).toBe(OPERATOR);
    expect(digest?.text).toMatch(/7 notifications/);
    await new Promise((r) => setTimeout(r, 500));
    expect(smtp.received.length).toBe(4);
    const rows = await t.store.db.selectFrom('outbox').select(['kind', 'status']).execute();
    expect(rows.filter((r) => r.status !== 'sent')).toEqual([]);

    // The cap is now 4 of 6: a delivery to the requester still goes out today.
    const delivered = await fetch(`${t.url}/api/v1/admin/tasks/${task_id}`, {
      method: 'PATCH',
      headers: { authorization: `Bearer ${TEST_ADMIN_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ status: 'delivered', operator_notes: 'Open on Sundays from 8 to 12.' }),
    });
    expect(delivered.status).toBe(200);
    await smtp.waitFor(2, (mail) => mail.to === REQUESTER, 10_000);
  });
});

describe('mail throughput', () => {
  it('sends many mails over pooled connections, several at a time', async () => {
    smtp = await startSmtpServer();
    smtp.setDataDelay(400);
    t = await startTestApp({ env: { SMTP_URL: smtp.url, OPERATOR_EMAIL: OPERATOR, MAIL_POLL_MS: '20', MAIL_CONCURRENCY: '5' } });
    for (let i = 0; i < 40; i += 1) expect((await postJson(`${t.url}/api/v1/tasks`, validTask())).status).toBe(202);
    const started = Date.now();
    background = await startBackground(t.deps);
    await smtp.waitFor(40, undefined, 30_000);
    // One at a time would take at least 40 × 400 ms = 16 s; five at a time about 3.2 s.
    expect(Date.now() - started).toBeLessThan(10_000);
    // Pooled: far fewer connections than mails.
    expect(smtp.connections).toBeLessThanOrEqual(10);
  });
});
