import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { JSONWebKeySet } from 'jose';
import { describe, expect, it } from 'vitest';
import { verifyReceipt } from '../src/receipts/verify.js';
import { postJson, STORES, smtpOf, TEST_ADMIN_KEY, type TestApp, useTestApp, validTask } from './support/app.js';
import { driveTransition, parseMail, type ReceivedMail, waitUntil } from './support/smtp.js';

const BASE_URL = 'https://hitl.example-service.dev';
const OPERATOR = 'operator@ops.example-service.dev';
const FROM = 'tasks@hitl.example-service.dev';
const CONTACT = 'agent@mail.example-agent.dev';

async function submit(t: TestApp, overrides: Record<string, unknown> = {}): Promise<string> {
  const res = await postJson(`${t.url}/api/v1/tasks`, validTask(overrides));
  expect(res.status).toBe(202);
  return ((await res.json()) as { task_id: string }).task_id;
}

async function outboxKinds(t: TestApp, taskId: string): Promise<string[]> {
  const rows = await t.store.db.selectFrom('outbox').select('kind').where('task_id', '=', taskId).orderBy('created_at').execute();
  return rows.map((r) => r.kind).sort();
}

const about = (id: string) => (mail: ReceivedMail) => mail.text.includes(id);

/** Agent text as the operator mail's text part shows it: every line after `| `. */
const quoted = (text: string) =>
  text
    .split('\n')
    .map((line) => `| ${line}`)
    .join('\n');
describe.each(STORES)('lifecycle mail over SMTP on %s', (store) => {
  const t = useTestApp({
    store,
    smtp: true,
    background: true,
    env: { OPERATOR_EMAIL: OPERATOR, MAIL_FROM: FROM, BASE_URL, MAIL_POLL_MS: '20' },
  });
  const smtp = smtpOf(t);

  it('mails the operator every new task, with its details and a console link', async () => {
    const description = 'Photograph the opening hours sign at the hardware store on 5 Elm Road.\nSecond line: include the door.';
    const id = await submit(t, {
      description,
      deadline: '2030-04-01T12:00:00Z',
      location_detail: 'Springfield, 5 Elm Road',
      output_format: 'text_report_with_photos',
      requester: 'shopping-agent/2.1',
    });
    const [mail] = await smtp.waitFor(1, about(id));
    expect(mail!.envelope.to).toEqual([OPERATOR]);
    expect(mail!.to).toBe(OPERATOR);
    expect(mail!.from).toBe(FROM);
    expect(mail!.envelope.from).toBe(FROM);
    expect(mail!.replyTo).toBe(CONTACT);
    expect(mail!.subject).toContain('New task real_world_verification');
    expect(mail!.subject).toContain('Photograph the opening hours sign');
    for (const part of [mail!.text, mail!.html]) {
      expect(part).toContain(id);
      expect(part).toContain('real_world_verification');
      expect(part).toContain('2030-04-01T12:00:00.000Z');
      expect(part).toContain('Springfield, 5 Elm Road');
      expect(part).toContain('text_report_with_photos');
      expect(part).toContain('shopping-agent/2.1');
      expect(part).toContain(`${BASE_URL}/operator/tasks/${id}`);
    }
    // Agent text is quoted in the text part, every line set apart (issue 33).
    expect(mail!.text).toContain(quoted(description));
    expect(mail!.html).toContain('Photograph the opening hours sign at the hardware store on 5 Elm Road.');
    expect(mail!.html).toContain(`href="${BASE_URL}/operator/tasks/${id}"`);
    expect(mail!.parsed.messageId).toMatch(/^<mail-[0-9a-f]{32}@hitl\.example-service\.dev>$/);

    const row = await t.store.db.selectFrom('outbox').selectAll().where('task_id', '=', id).executeTakeFirstOrThrow();
    await waitUntil(async () => (await t.store.db.selectFrom('outbox').select('status').where('id', '=', row.id).executeTakeFirstOrThrow()).status === 'sent');
    const sent = await t.store.db.selectFrom('outbox').selectAll().where('id', '=', row.id).executeTakeFirstOrThrow();
    expect(sent).toMatchObject({ kind: 'task_submitted', recipient: OPERATOR, status: 'sent', attempts: 1, last_error: null });
    expect(sent.sent_at).toBe(t.clock.now().toISOString());
  });

  it('mails the operator every message, Reply-To the sender, with the task it names', async () => {
    const id = await submit(t);
    await smtp.waitFor(1, about(id));
    const text = `Please cancel ${id}, plans changed.\nThanks!`;
    const res = await postJson(`${t.url}/api/v1/messages`, {
      message: text,
      reply_to: 'ops@agents.example-agent.dev',
      from: 'planner-bot',
      subject: 'Withdrawal',
    });
    expect(res.status).toBe(201);
    const messageId = ((await res.json()) as { message_id: string }).message_id;
    const [mail] = await smtp.waitFor(1, (m) => m.text.includes(messageId));
    expect(mail!.envelope.to).toEqual([OPERATOR]);
    expect(mail!.to).toBe(OPERATOR);
    expect(mail!.from).toBe(FROM);
    expect(mail!.replyTo).toBe('ops@agents.example-agent.dev');
    expect(mail!.subject).toBe('Message from planner-bot: Withdrawal');
    expect(mail!.text).toContain(quoted(text));
    expect(mail!.text).toContain(`${id} (real_world_verification, submitted)`);
    expect(mail!.text).toContain(`${BASE_URL}/operator/tasks/${id}`);
    expect(mail!.html).toContain(`href="${BASE_URL}/operator/tasks/${id}"`);
    expect(mail!.html).toContain('Please cancel');
  });

  it('a message without subject or sender is summarised by its text', async () => {
    const res = await postJson(`${t.url}/api/v1/messages`, { message: 'Do you cover Lyon, France for store checks?', reply_to: 'q@agents.example-agent.dev' });
    const messageId = ((await res.json()) as { message_id: string }).message_id;
    const [mail] = await smtp.waitFor(1, (m) => m.text.includes(messageId));
    expect(mail!.subject).toBe('Message: Do you cover Lyon, France for store checks?');
    expect(mail!.text).not.toContain('It names these tasks');
  });

  it('mails the requester on acceptance: eta and status page', async () => {
    const id = await submit(t);
    await driveTransition(t, id, { status: 'accepted', eta: '2030-03-11T18:00:00.000Z', accepted_at: t.clock.now().toISOString() });
    const [mail] = await smtp.waitFor(1, (m) => m.to === CONTACT && m.text.includes(id));
    expect(mail!.envelope.to).toEqual([CONTACT]);
    expect(mail!.from).toBe(FROM);
    expect(mail!.replyTo).toBeUndefined();
    expect(mail!.subject).toBe(`Task accepted: ${id}`);
    for (const part of [mail!.text, mail!.html]) {
      expect(part).toContain('2030-03-11T18:00:00.000Z');
      expect(part).toContain(`${BASE_URL}/tasks?id=${id}`);
    }
  });

  it('mails the requester on delivery: deliverable, hash, receipt and how to verify it', async () => {
    const id = await submit(t);
    await driveTransition(t, id, { status: 'accepted' });
    const deliverable = 'The bakery opens at 7:00 on Sundays.\nPhoto: <attached link> & notes';
    const receipt = 'eyJhbGciOiJFZERTQSJ9.eyJzdWIiOiJ0YXNrIn0.c2lnbmF0dXJl';
    await driveTransition(t, id, {
      status: 'delivered',
      operator_notes: deliverable,
      deliverable_sha256: 'a'.repeat(64),
      receipt,
      receipt_issued_at: '2030-03-10T10:00:00.000Z',
      delivered_at: '2030-03-10T10:00:00.000Z',
    });
    const [mail] = await smtp.waitFor(1, (m) => m.subject === `Task delivered: ${id}`);
    expect(mail!.envelope.to).toEqual([CONTACT]);
    expect(mail!.text).toContain(deliverable);
    expect(mail!.html).toContain('Photo: &lt;attached link&gt; &amp; notes');
    for (const part of [mail!.text, mail!.html]) {
      expect(part).toContain('a'.repeat(64));
      expect(part).toContain(receipt);
      expect(part).toContain(`${BASE_URL}/.well-known/jwks.json`);
      expect(part).toContain('npm run verify-receipt');
    }
  });

  it('mails the requester on rejection: the reason', async () => {
    const id = await submit(t);
    await driveTransition(t, id, { status: 'rejected', operator_notes: 'We cannot enter private property.' });
    const [mail] = await smtp.waitFor(1, (m) => m.subject === `Task rejected: ${id}`);
    expect(mail!.envelope.to).toEqual([CONTACT]);
    expect(mail!.text).toContain('We cannot enter private property.');
    expect(mail!.html).toContain('We cannot enter private property.');
  });

  it('a rejection without notes says no reason was given', async () => {
    const id = await submit(t);
    await driveTransition(t, id, { status: 'rejected' });
    const [mail] = await smtp.waitFor(1, (m) => m.subject === `Task rejected: ${id}`);
    expect(mail!.text).toContain('No reason was given.');
  });

  it('sends status_poll tasks no requester mail, only the operator notification', async () => {
    const id = await submit(t, { delivery: 'status_poll', contact_email: undefined });
    await smtp.waitFor(1, about(id));
    await driveTransition(t, id, { status: 'accepted' });
    await driveTransition(t, id, { status: 'delivered', operator_notes: 'Result text', deliverable_sha256: 'b'.repeat(64), receipt: 'x.y.z' });
    expect(await outboxKinds(t, id)).toEqual(['task_submitted']);
    const mails = smtp.received.filter(about(id));
    expect(mails.map((m) => m.to)).toEqual([OPERATOR]);
    expect(mails[0]!.replyTo).toBeUndefined();
  });

  it('transitions made through the admin API mail the requester, with a receipt that verifies', async () => {
    const id = await submit(t);
    const patch = (body: Record<string, unknown>) =>
      fetch(`${t.url}/api/v1/admin/tasks/${id}`, {
        method: 'PATCH',
        headers: { authorization: `Bearer ${TEST_ADMIN_KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    expect((await patch({ status: 'accepted', eta: '2030-03-12T09:00:00Z' })).status).toBe(200);
    const [accepted] = await smtp.waitFor(1, (m) => m.subject === `Task accepted: ${id}`);
    expect(accepted!.envelope.to).toEqual([CONTACT]);
    expect(accepted!.text).toContain('2030-03-12T09:00:00.000Z');

    const notes = 'Open Sundays 7:00–12:00 (sign photographed).\nSecond line of the result.';
    expect((await patch({ status: 'delivered', operator_notes: notes })).status).toBe(200);
    const [delivered] = await smtp.waitFor(1, (m) => m.subject === `Task delivered: ${id}`);
    const task = (await (await fetch(`${t.url}/api/v1/tasks/${id}`)).json()) as { receipt: string; deliverable_sha256: string };
    expect(delivered!.text).toContain(notes);
    expect(delivered!.text).toContain(task.deliverable_sha256);
    const receipt = /Receipt:\n(\S+)/.exec(delivered!.text)?.[1];
    expect(receipt).toBe(task.receipt);
    expect(delivered!.text).toContain(`npm run verify-receipt -- ${id} --base-url ${BASE_URL}`);
    // What the mail says to do works: verify against the published keys and the deliverable.
    const jwks = (await (await fetch(`${t.url}/.well-known/jwks.json`)).json()) as JSONWebKeySet;
    const verdict = await verifyReceipt(receipt!, { jwks, expectedTaskId: id, operatorNotes: notes });
    expect(verdict.valid).toBe(true);
    expect(await outboxKinds(t, id)).toEqual(['task_accepted', 'task_delivered', 'task_submitted']);
  });

  it('a rejection through the admin API mails the reason', async () => {
    const id = await submit(t);
    const res = await fetch(`${t.url}/api/v1/admin/tasks/${id}`, {
      method: 'PATCH',
      headers: { authorization: `Bearer ${TEST_ADMIN_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ status: 'rejected', operator_notes: 'Outside our service area.' }),
    });
    expect(res.status).toBe(200);
    const [mail] = await smtp.waitFor(1, (m) => m.subject === `Task rejected: ${id}`);
    expect(mail!.text).toContain('Outside our service area.');
  });

  it('queues one mail per transition even when the transition code is called twice', async () => {
    const id = await submit(t);
    await driveTransition(t, id, { status: 'accepted' });
    await driveTransition(t, id, { status: 'accepted', eta: '2030-03-12T00:00:00.000Z' });
    expect(await outboxKinds(t, id)).toEqual(['task_accepted', 'task_submitted']);
  });

  it('lists the outbox for the operator and shows counts', async () => {
    const id = await submit(t);
    await waitUntil(async () => (await t.store.db.selectFrom('outbox').select('status').where('task_id', '=', id).executeTakeFirst())?.status === 'sent');
    const res = await fetch(`${t.url}/api/v1/admin/outbox?status=sent&limit=2`, { headers: { authorization: `Bearer ${TEST_ADMIN_KEY}` } });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { outbox: Record<string, unknown>[]; counts: Record<string, number> };
    expect(body.outbox).toHaveLength(2);
    expect(body.outbox.every((e) => e.status === 'sent')).toBe(true);
    expect(Object.keys(body.outbox[0]!).sort()).toEqual(
      ['attempts', 'created_at', 'id', 'kind', 'last_error', 'message_id', 'next_attempt_at', 'recipient', 'sent_at', 'status', 'subject', 'task_id'].sort(),
    );
    expect(body.counts.sent).toBeGreaterThanOrEqual(2);
    expect(body.counts).toMatchObject({ pending: expect.any(Number), failed: 0 });
  });
});

describe.each(STORES)('mail without SMTP_URL on %s', (store) => {
  const t = useTestApp({ store, background: true, env: { OPERATOR_EMAIL: OPERATOR, BASE_URL, MAIL_POLL_MS: '20' } });

  it('writes each mail as an .eml file under DATA_DIR/outbox and marks it sent', async () => {
    const id = await submit(t);
    const directory = path.join(t.dataDir, 'outbox');
    const file = await waitUntil(() => {
      try {
        return readdirSync(directory).find((name) => name.endsWith('.eml') && name.includes('task_submitted'));
      } catch {
        return undefined;
      }
    });
    expect(file).toMatch(/^2030-03-10T10-00-00-000Z_task_submitted_mail-[0-9a-f]{32}\.eml$/);
    const mail = await parseMail(readFileSync(path.join(directory, file)));
    expect(mail.subject).toContain('New task real_world_verification');
    expect(mail.to && !Array.isArray(mail.to) ? mail.to.value[0]?.address : undefined).toBe(OPERATOR);
    expect(mail.from?.value[0]?.address).toBe('no-reply@hitl.example-service.dev');
    expect(mail.text).toContain(`${BASE_URL}/operator/tasks/${id}`);
    expect(mail.html).toContain(id);
    const row = await waitUntil(async () => {
      const r = await t.store.db.selectFrom('outbox').selectAll().where('task_id', '=', id).executeTakeFirstOrThrow();
      return r.status === 'sent' ? r : undefined;
    });
    expect(row.attempts).toBe(1);
    expect(readdirSync(directory).filter((name) => name.endsWith('.tmp'))).toEqual([]);
  });
});

describe.each(STORES)('mail without OPERATOR_EMAIL on %s', (store) => {
  const t = useTestApp({ store, smtp: true, background: true, env: { MAIL_POLL_MS: '20' } });
  const smtp = smtpOf(t);

  it('sends no notifications but still mails the requester', async () => {
    const id = await submit(t);
    await postJson(`${t.url}/api/v1/messages`, { message: `About ${id}: hello there`, reply_to: 'q@agents.example-agent.dev' });
    await driveTransition(t, id, { status: 'accepted' });
    const [mail] = await smtp.waitFor(1, (m) => m.subject === `Task accepted: ${id}`);
    expect(mail!.to).toBe(CONTACT);
    expect(await outboxKinds(t, id)).toEqual(['task_accepted']);
    expect(await t.store.db.selectFrom('outbox').select('id').where('kind', '=', 'message_received').execute()).toEqual([]);
  });
});
