import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBackground } from '../src/background.js';
import { loadConfig } from '../src/config.js';
import { retryDelayMs } from '../src/services/delivery/mail-worker.js';
import { listOutbox } from '../src/services/delivery/outbox-admin.js';
import { postJson, STORES, startTestApp, TEST_ADMIN_KEY, type TestApp, TestClock, useTestApp, validTask } from './support/app.js';
import { startSmtpServer, type TestSmtpServer, waitUntil } from './support/smtp.js';

const OPERATOR = 'operator@ops.example-service.dev';
const admin = { authorization: `Bearer ${TEST_ADMIN_KEY}` };

async function submit(t: TestApp): Promise<string> {
  const res = await postJson(`${t.url}/api/v1/tasks`, validTask());
  expect(res.status).toBe(202);
  return ((await res.json()) as { task_id: string }).task_id;
}

async function mailOf(t: TestApp, taskId: string) {
  return t.store.db.selectFrom('outbox').selectAll().where('task_id', '=', taskId).where('kind', '=', 'task_submitted').executeTakeFirstOrThrow();
}

/** Waits until the task's operator mail satisfies `check`. */
function waitForRow(t: TestApp, taskId: string, check: (row: Awaited<ReturnType<typeof mailOf>>) => boolean, what: string) {
  return waitUntil(
    async () => {
      const row = await mailOf(t, taskId);
      return check(row) ? row : undefined;
    },
    10_000,
    what,
  );
}

const mailEnv = (smtp: TestSmtpServer, extra: Record<string, string> = {}) => ({
  SMTP_URL: smtp.url,
  OPERATOR_EMAIL: OPERATOR,
  MAIL_POLL_MS: '20',
  MAIL_MAX_ATTEMPTS: '3',
  ...extra,
});

describe('retry schedule', () => {
  it('doubles from the base and is capped, so mail goes out soon after SMTP returns', () => {
    const settings = { retryBaseMs: 2000, retryMaxMs: 30_000 };
    expect([1, 2, 3, 4, 5, 6, 50, 5000].map((n) => retryDelayMs(n, settings))).toEqual([2000, 4000, 8000, 16_000, 30_000, 30_000, 30_000, 30_000]);
  });

  it('rejects bad worker settings at start, naming the variable', () => {
    expect(() => loadConfig({ MAIL_POLL_MS: 'soon' })).toThrow(/MAIL_POLL_MS/);
    expect(() => loadConfig({ MAIL_MAX_ATTEMPTS: '0' })).toThrow(/MAIL_MAX_ATTEMPTS/);
    expect(loadConfig({}).mail).toEqual({ pollMs: 1000, retryBaseMs: 2000, retryMaxMs: 30_000, maxAttempts: 2880, leaseMs: 6000, concurrency: 4 });
  });
});

describe.each(STORES)('mail through SMTP outages on %s', (store) => {
  let smtp: TestSmtpServer;
  let t: TestApp;
  let clock: TestClock;
  beforeAll(async () => {
    smtp = await startSmtpServer();
    clock = new TestClock();
    t = await startTestApp({ store, clock, background: true, env: mailEnv(smtp) });
  });
  afterAll(async () => {
    await t.close();
    await smtp.close();
  });

  it('loses nothing while SMTP is down and sends everything once it is back', async () => {
    await smtp.setMode('down');
    const ids = [await submit(t), await submit(t), await submit(t)];
    const message = await postJson(`${t.url}/api/v1/messages`, { message: `Question about ${ids[0]}`, reply_to: 'q@agents.example-agent.dev' });
    expect(message.status).toBe(201);
    const messageId = ((await message.json()) as { message_id: string }).message_id;

    const failed = await Promise.all(ids.map((id) => waitForRow(t, id, (r) => r.attempts === 1, 'a first failed attempt')));
    const messageAttempts = async () =>
      (await t.store.db.selectFrom('outbox').select('attempts').where('message_id', '=', messageId).executeTakeFirstOrThrow()).attempts;
    await waitUntil(async () => (await messageAttempts()) === 1, 10_000, 'the message mail to fail once');
    for (const row of failed) {
      expect(row.status).toBe('pending');
      expect(row.last_error).toMatch(/ECONNECTION|ECONNREFUSED/);
      // The first retry is due a few seconds later, by the service clock.
      expect(row.next_attempt_at).toBe(new Date(clock.now().getTime() + 2000).toISOString());
    }
    expect(smtp.received).toHaveLength(0);

    // Still down at the first retry: the delay doubles.
    clock.advance(2000);
    const second = await Promise.all(ids.map((id) => waitForRow(t, id, (r) => r.attempts === 2, 'a second attempt')));
    expect(second[0]!.next_attempt_at).toBe(new Date(clock.now().getTime() + 4000).toISOString());
    await waitUntil(async () => (await messageAttempts()) === 2, 10_000, 'the message mail to fail twice');

    await smtp.setMode('accept');
    clock.advance(30_000);
    const mails = await smtp.waitFor(4);
    expect(mails.filter((m) => ids.some((id) => m.text.includes(id)) && m.subject.startsWith('New task'))).toHaveLength(3);
    expect(mails.filter((m) => m.text.includes(messageId))).toHaveLength(1);
    for (const id of ids) {
      const row = await waitForRow(t, id, (r) => r.status === 'sent', 'sent');
      expect(row.last_error).toBeNull();
    }
    smtp.clear();
  });

  it('treats a 4xx answer as an outage and retries', async () => {
    await smtp.setMode('tempfail');
    const id = await submit(t);
    const row = await waitForRow(t, id, (r) => r.attempts === 1, 'a failed attempt');
    expect(row.status).toBe('pending');
    expect(row.last_error).toContain('421');
    await smtp.setMode('accept');
    clock.advance(2000);
    await smtp.waitFor(1, (m) => m.text.includes(id));
    expect((await waitForRow(t, id, (r) => r.status === 'sent', 'sent')).attempts).toBe(2);
    smtp.clear();
  });

  it('marks a mail failed after MAIL_MAX_ATTEMPTS failures, with the last error', async () => {
    await smtp.setMode('tempfail');
    const id = await submit(t);
    await waitForRow(t, id, (r) => r.attempts === 1, 'attempt 1');
    clock.advance(2000);
    await waitForRow(t, id, (r) => r.attempts === 2, 'attempt 2');
    clock.advance(4000);
    const row = await waitForRow(t, id, (r) => r.status === 'failed', 'failed');
    expect(row.attempts).toBe(3);
    expect(row.last_error).toContain('421');
    await smtp.setMode('accept');
  });

  it('fails a permanently rejected mail at once; the operator sees it and can retry it', async () => {
    await smtp.setMode('reject');
    const id = await submit(t);
    const row = await waitForRow(t, id, (r) => r.status === 'failed', 'failed');
    expect(row.attempts).toBe(1);
    expect(row.last_error).toContain('550');

    const list = await fetch(`${t.url}/api/v1/admin/outbox?status=failed`, { headers: admin });
    expect(list.status).toBe(200);
    const listed = ((await list.json()) as { outbox: { id: string; last_error: string; status: string }[] }).outbox;
    expect(listed.find((e) => e.id === row.id)).toMatchObject({ status: 'failed', last_error: expect.stringContaining('550') });

    await smtp.setMode('accept');
    const retry = await fetch(`${t.url}/api/v1/admin/outbox/${row.id}/retry`, { method: 'POST', headers: admin });
    expect(retry.status).toBe(200);
    expect(await retry.json()).toMatchObject({ id: row.id, status: 'pending', attempts: 0, next_attempt_at: clock.now().toISOString() });
    await smtp.waitFor(1, (m) => m.text.includes(id));
    await waitForRow(t, id, (r) => r.status === 'sent', 'sent after retry');

    const again = await fetch(`${t.url}/api/v1/admin/outbox/${row.id}/retry`, { method: 'POST', headers: admin });
    expect(again.status).toBe(409);
    expect(await again.json()).toMatchObject({ error: 'invalid_transition', from: 'sent', to: 'pending' });
    smtp.clear();
  });

  it('stopping the worker waits for the send in flight', async () => {
    const extra = await startTestApp({ shareDatabaseWith: t, env: mailEnv(smtp) });
    try {
      smtp.setDataDelay(400);
      await t.background?.stop();
      const before = smtp.dataStarted;
      const id = await submit(extra);
      const worker = await startBackground(extra.deps);
      // In flight means its DATA has reached the server (held there by the delay). A claimed mail
      // may still be waiting for its cap unit: stopping then gives it back unsent, as it should.
      await waitUntil(() => smtp.dataStarted > before, 10_000, 'the mail in flight');
      await worker.stop();
      expect((await mailOf(t, id)).status).toBe('sent');
      expect(smtp.received.filter((m) => m.text.includes(id))).toHaveLength(1);
    } finally {
      smtp.setDataDelay(0);
      await extra.close();
    }
  });
});

describe.each(STORES)('mail across restarts on %s', (store) => {
  let smtp: TestSmtpServer;
  beforeAll(async () => {
    smtp = await startSmtpServer();
  });
  afterAll(async () => {
    await smtp.close();
  });

  it('a restarted instance sends the mail the previous one could not', async () => {
    const clock = new TestClock();
    const first = await startTestApp({ store, clock, background: true, env: mailEnv(smtp) });
    const second: { app?: TestApp } = {};
    try {
      await smtp.setMode('down');
      const id = await submit(first);
      await waitForRow(first, id, (r) => r.attempts === 1, 'a failed attempt');
      // Shut the first instance down (worker, then HTTP), keeping its database.
      await first.background?.stop();
      await first.app.close();

      await smtp.setMode('accept');
      second.app = await startTestApp({ shareDatabaseWith: first, background: true, env: mailEnv(smtp) });
      clock.advance(2000);
      const [mail] = await smtp.waitFor(1, (m) => m.text.includes(id));
      expect(mail!.to).toBe(OPERATOR);
      expect((await waitForRow(second.app, id, (r) => r.status === 'sent', 'sent')).attempts).toBe(2);
    } finally {
      await second.app?.close();
      await first.close();
    }
  });

  it('pending mail written while no worker ran goes out when one starts', async () => {
    const first = await startTestApp({ store, env: mailEnv(smtp) });
    try {
      const ids = [await submit(first), await submit(first)];
      expect(smtp.received.filter((m) => ids.some((id) => m.text.includes(id)))).toHaveLength(0);
      const worker = await startBackground(first.deps);
      await smtp.waitFor(2, (m) => ids.some((id) => m.text.includes(id)));
      await worker.stop();
    } finally {
      await first.close();
    }
  });

  it("a crashed worker's claim expires and another worker sends the mail", async () => {
    const clock = new TestClock();
    const t = await startTestApp({ store, clock, env: mailEnv(smtp) });
    try {
      const id = await submit(t);
      // A worker that claimed the mail and died: its lease runs for two minutes.
      await t.store.db
        .updateTable('outbox')
        .set({ claim_token: 'dead-worker', locked_until: new Date(clock.now().getTime() + 120_000).toISOString() })
        .where('task_id', '=', id)
        .execute();
      const worker = await startBackground(t.deps);
      try {
        await new Promise((resolve) => setTimeout(resolve, 200));
        expect((await mailOf(t, id)).status).toBe('pending');
        clock.advance(120_000);
        await smtp.waitFor(1, (m) => m.text.includes(id));
        expect((await waitForRow(t, id, (r) => r.status === 'sent', 'sent')).claim_token).toBeNull();
      } finally {
        await worker.stop();
      }
    } finally {
      await t.close();
    }
  });
});

describe.each(STORES)('the daily e-mail cap on %s', (store) => {
  let smtp: TestSmtpServer;
  let t: TestApp;
  let clock: TestClock;
  beforeAll(async () => {
    smtp = await startSmtpServer();
    clock = new TestClock('2030-03-10T23:00:00.000Z');
    // A cap of 4 keeps 1 unit for requester mail: notifications may use 3, the last one as a digest.
    t = await startTestApp({ store, clock, background: true, env: mailEnv(smtp, { DAILY_EMAIL_CAP: '4', MAIL_MAX_ATTEMPTS: '100' }) });
  });
  afterAll(async () => {
    await t.close();
    await smtp.close();
  });

  it('counts sent mail only: failed attempts during an outage do not use it up', async () => {
    await smtp.setMode('down');
    const ids = [await submit(t), await submit(t)];
    for (let attempt = 1; attempt <= 3; attempt += 1) {
      if (attempt > 1) clock.advance(30_000);
      // Every attempt recorded before the clock moves again, so none is in flight across a change.
      await Promise.all(ids.map((id) => waitForRow(t, id, (r) => r.attempts === attempt, `attempt ${attempt}`)));
    }
    await smtp.setMode('accept');
    clock.advance(30_000);
    await smtp.waitFor(2);
  });

  it('bundles the last unit of the notifications share into a digest, then holds notifications until the next UTC day', async () => {
    const bundled = await submit(t);
    const digest = await smtp.waitFor(1, (m) => /^Digest/.test(m.subject));
    expect(digest[0]?.text).toContain(bundled);
    // It has no Reply-To, and says so: a bundled message's sender is not reached by replying.
    expect(digest[0]?.replyTo).toBeUndefined();
    expect(digest[0]?.text).toContain('Replying to this digest reaches no sender');
    const id = await submit(t);
    const row = await waitForRow(t, id, (r) => r.next_attempt_at === '2030-03-11T00:00:00.000Z', 'postponed to midnight');
    expect(row).toMatchObject({ status: 'pending', attempts: 0, claim_token: null });
    const usage = await t.store.db.selectFrom('counters').select('count').where('key', '=', 'cap:emails:2030-03-10').executeTakeFirstOrThrow();
    expect(Number(usage.count)).toBe(3);
    clock.set('2030-03-11T00:00:01.000Z');
    await smtp.waitFor(1, (m) => m.text.includes(id));
    expect((await waitForRow(t, id, (r) => r.status === 'sent', 'sent')).attempts).toBe(1);
  });
});

describe.each(STORES)('the outbox admin API refusals on %s', (store) => {
  const t = useTestApp({ store, env: { OPERATOR_EMAIL: OPERATOR } });

  it('401 without the operator key or with a wrong one, and no WWW-Authenticate', async () => {
    const attempts: Record<string, string>[] = [{}, { authorization: 'Bearer wrong-key-wrong-key-wrong' }, { authorization: TEST_ADMIN_KEY }];
    for (const headers of attempts) {
      const list = await fetch(`${t.url}/api/v1/admin/outbox?status=bogus`, { headers });
      expect(list.status).toBe(401);
      expect(list.headers.get('www-authenticate')).toBeNull();
      expect(await list.json()).toMatchObject({ error: 'unauthorized' });
      const retry = await fetch(`${t.url}/api/v1/admin/outbox/mail-x/retry`, { method: 'POST', headers });
      expect(retry.status).toBe(401);
    }
  });

  it('400 for a bad status or limit', async () => {
    for (const query of ['status=bogus', 'limit=0', 'limit=201', 'limit=many']) {
      const res = await fetch(`${t.url}/api/v1/admin/outbox?${query}`, { headers: admin });
      expect(res.status, query).toBe(400);
      expect(await res.json()).toMatchObject({ error: 'malformed_request' });
    }
  });

  it('404 when retrying an unknown mail, 409 when retrying a pending one', async () => {
    const unknown = await fetch(`${t.url}/api/v1/admin/outbox/mail-${'0'.repeat(32)}/retry`, { method: 'POST', headers: admin });
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toMatchObject({ error: 'not_found' });
    const id = await submit(t);
    const row = await mailOf(t, id);
    const pending = await fetch(`${t.url}/api/v1/admin/outbox/${row.id}/retry`, { method: 'POST', headers: admin });
    expect(pending.status).toBe(409);
    expect(await pending.json()).toMatchObject({ error: 'invalid_transition', from: 'pending', to: 'pending' });
  });

  it('lists newest first and honours the limit', async () => {
    const ids = [await submit(t), await submit(t)];
    (t.clock as TestClock).advance(1000);
    const newest = await submit(t);
    const res = await fetch(`${t.url}/api/v1/admin/outbox?limit=1`, { headers: admin });
    const body = (await res.json()) as { outbox: { task_id: string }[]; counts: { pending: number } };
    expect(body.outbox.map((e) => e.task_id)).toEqual([newest]);
    expect(body.counts.pending).toBeGreaterThanOrEqual(ids.length + 1);
    // The function the console calls clamps what it is given.
    expect(await listOutbox(t.deps, { limit: Number.NaN })).toHaveLength(Math.min(50, body.counts.pending));
    expect(await listOutbox(t.deps, { limit: -5, status: 'pending' })).toHaveLength(1);
    expect(await listOutbox(t.deps, { status: 'failed' })).toEqual([]);
  });
});
