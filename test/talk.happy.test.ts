import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postForm, signIn } from './console.support.js';
import { ADMIN, adminGet, type Json, taskIn } from './operator.support.js';
import { postJson, STORES, startTestApp, type TestApp } from './support/app.js';
import { type ReceivedMail, startSmtpServer, type TestSmtpServer } from './support/smtp.js';

const FROM = 'tasks@hitl.example-service.dev';
const OPERATOR = 'operator@ops.example-service.dev';
const ASKER = 'asker@mail.example-agent.dev';

/** The status page's message form, posted as a browser would. */
function sendFromStatusPage(t: TestApp, fields: Record<string, string>): Promise<Response> {
  return postForm(t, '/tasks/message', fields);
}

describe.each(STORES)('talking with the operator on %s', (store) => {
  let smtp: TestSmtpServer;
  let t: TestApp;
  let cookie: string;
  let csrf: string;
  beforeAll(async () => {
    smtp = await startSmtpServer();
    t = await startTestApp({ store, background: true, env: { SMTP_URL: smtp.url, OPERATOR_EMAIL: OPERATOR, MAIL_FROM: FROM, MAIL_POLL_MS: '20' } });
    ({ cookie, csrf } = await signIn(t));
  });
  afterAll(async () => {
    await t.close();
    await smtp.close();
  });

  it('the status page offers a message form with the task id filled in, and no JSON instructions', async () => {
    const id = await taskIn(t, 'submitted');
    const page = await (await fetch(`${t.url}/tasks?id=${id}`)).text();
    expect(page).toContain('action="/tasks/message"');
    expect(page).toContain(`name="task_id" value="${id}"`);
    expect(page).toContain('Withdraw this task');
    expect(page).not.toContain('send a message to the operator (<code>POST');
  });

  it('a question from the status page reaches the operator, linked to the task', async () => {
    const id = await taskIn(t, 'accepted');
    const res = await sendFromStatusPage(t, { task_id: id, intent: 'ask', message: 'Could you also check the side entrance?', reply_to: ASKER, from: 'Dana' });
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe(`/tasks?id=${id}&sent=ask#message`);
    const after = await (await fetch(`${t.url}${res.headers.get('location')}`)).text();
    expect(after).toContain('Your message reached the operator');
    const [mail] = await smtp.waitFor(1, (m) => m.to === OPERATOR && m.text.includes('side entrance'));
    expect(mail!.replyTo).toBe(ASKER);
    const detail = (await (await adminGet(t, `/api/v1/admin/tasks/${id}`)).json()) as { messages: Json[] };
    expect(detail.messages).toHaveLength(1);
    expect(detail.messages[0]).toMatchObject({ subject: `Question about task ${id}`, from: 'Dana', reply_to: ASKER, task_ids: [id] });
  });

  it('a withdrawal from the status page is one click away for the operator, with the contract reason', async () => {
    const id = await taskIn(t, 'submitted');
    const res = await sendFromStatusPage(t, { task_id: id, intent: 'withdraw', message: '', reply_to: ASKER });
    expect(res.status).toBe(303);
    const console = await (await fetch(`${t.url}/operator/tasks/${id}`, { headers: { cookie } })).text();
    expect(console).toContain(`action="/operator/tasks/${id}/withdraw"`);
    expect(console).toContain('Withdrawal requested?');
    const done = await postForm(t, `/operator/tasks/${id}/withdraw`, { _csrf: csrf }, cookie);
    expect(done.status).toBe(303);
    const task = (await (await fetch(`${t.url}/api/v1/tasks/${id}`)).json()) as Json;
    expect(task).toMatchObject({ status: 'rejected', operator_notes: 'Withdrawn at the requester’s request.' });
  });

  it('a console reply is mailed to reply_to from MAIL_FROM, threaded, and shown on the task page', async () => {
    const id = await taskIn(t, 'accepted');
    await sendFromStatusPage(t, { task_id: id, intent: 'ask', message: 'Is Sunday morning fine for the visit?', reply_to: ASKER });
    const detail = (await (await adminGet(t, `/api/v1/admin/tasks/${id}`)).json()) as { messages: { message_id: string }[] };
    const messageId = detail.messages[0]!.message_id;
    const res = await postForm(
      t,
      `/operator/messages/${messageId}/reply`,
      { _csrf: csrf, task_id: id, message: 'Yes, Sunday at 9:00.\r\nI will send photos.' },
      cookie,
    );
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe(`/operator/tasks/${id}?done=replied`);
    const [mail] = await smtp.waitFor(1, (m: ReceivedMail) => m.to === ASKER && m.text.includes('Sunday at 9:00'));
    expect(mail!.from).toBe(FROM);
    expect(mail!.subject).toBe(`Re: Question about task ${id}`);
    const thread = `<${messageId}@hitl.example-service.dev>`;
    const header = (name: string) => mail!.parsed.headerLines.find((h) => h.key === name)?.line ?? '';
    expect(header('in-reply-to')).toContain(thread);
    expect(header('references')).toContain(thread);
    expect(mail!.text).toContain('> Is Sunday morning fine for the visit?');
    expect(mail!.text).toContain(`/tasks?id=${id}#message`);
    const page = await (await fetch(`${t.url}/operator/tasks/${id}?done=replied`, { headers: { cookie } })).text();
    expect(page).toContain('Reply queued');
    expect(page).toContain('Yes, Sunday at 9:00.\nI will send photos.');
  });

  it('POST /api/v1/admin/messages/{id}/reply answers 201, mails and records the reply', async () => {
    const id = await taskIn(t, 'submitted');
    const sent = await postJson(`${t.url}/api/v1/messages`, { message: `What does task ${id} need from me?`, reply_to: ASKER });
    const { message_id } = (await sent.json()) as { message_id: string };
    const res = await postJson(`${t.url}/api/v1/admin/messages/${message_id}/reply`, { message: 'Nothing more, thanks.' }, ADMIN);
    expect(res.status).toBe(201);
    const body = (await res.json()) as Json;
    expect(body).toMatchObject({ message_id, message: 'Nothing more, thanks.' });
    expect(String(body.reply_id)).toMatch(/^rpl-\d{4}-[0-9a-f]{32}$/);
    const [mail] = await smtp.waitFor(1, (m) => m.to === ASKER && m.text.includes('Nothing more, thanks.'));
    expect(mail!.subject).toBe('Re: Your message to the operator');
    const detail = (await (await adminGet(t, `/api/v1/admin/tasks/${id}`)).json()) as { messages: { replies: Json[] }[] };
    expect(detail.messages[0]!.replies).toEqual([expect.objectContaining({ reply_id: body.reply_id, message: 'Nothing more, thanks.' })]);
  });

  it('a message naming no task is answered from the Messages page', async () => {
    const sent = await postJson(`${t.url}/api/v1/messages`, { message: 'Do you cover Springfield suburbs too?', reply_to: ASKER, subject: 'Service area' });
    const { message_id } = (await sent.json()) as { message_id: string };
    const list = await (await fetch(`${t.url}/operator/messages`, { headers: { cookie } })).text();
    expect(list).toContain(`action="/operator/messages/${message_id}/reply"`);
    const res = await postForm(t, `/operator/messages/${message_id}/reply`, { _csrf: csrf, message: 'Yes, all of them.' }, cookie);
    expect(res.headers.get('location')).toBe('/operator/messages?show=all&done=replied');
    const [mail] = await smtp.waitFor(1, (m) => m.to === ASKER && m.text.includes('Yes, all of them.'));
    expect(mail!.subject).toBe('Re: Service area');
    const after = await (await fetch(`${t.url}/operator/messages?show=all&done=replied`, { headers: { cookie } })).text();
    expect(after).toContain('Reply queued');
    expect(after).toContain('Yes, all of them.');
  });

  it('blocks the sender of a task from its page in one action, by client, e-mail, domain or requester', async () => {
    const id = await taskIn(t, 'submitted', { requester: 'spammy-agent/1.0', contact_email: 'spam@junk.example-agent.dev' });
    for (const kind of ['email', 'domain', 'requester', 'ip']) {
      const res = await postForm(t, `/operator/tasks/${id}/block`, { _csrf: csrf, kind, reason: 'Spam' }, cookie);
      expect(res.status, kind).toBe(303);
    }
    const { blocklist } = (await (await adminGet(t, '/api/v1/admin/blocklist')).json()) as { blocklist: Json[] };
    const mine = blocklist.filter((e) => String(e.reason).includes(id));
    expect(mine.map((e) => e.kind).sort()).toEqual(['domain', 'email', 'ip', 'requester']);
    expect(mine.every((e) => String(e.reason).startsWith('Spam'))).toBe(true);
    // The sender's next message is refused (the test client is the one that submitted the task).
    const refused = await postJson(`${t.url}/api/v1/messages`, { message: 'Hello again, operator.', reply_to: ASKER });
    expect(refused.status).toBe(403);
  });
});
