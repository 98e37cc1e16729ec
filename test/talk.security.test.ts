import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postForm, signIn } from './console.support.js';
import { ADMIN, adminGet, taskIn } from './operator.support.js';
import { postJson, STORES, startTestApp, type TestApp } from './support/app.js';
import { startSmtpServer, type TestSmtpServer } from './support/smtp.js';

const ASKER = 'asker@mail.example-agent.dev';
const EVIL = '<script>alert(1)</script><img src=x onerror=alert(2)>';

describe.each(STORES)('talking with the operator, hostile input, on %s', (store) => {
  let smtp: TestSmtpServer;
  let t: TestApp;
  let cookie: string;
  let csrf: string;
  beforeAll(async () => {
    smtp = await startSmtpServer();
    t = await startTestApp({ store, background: true, env: { SMTP_URL: smtp.url, MAIL_POLL_MS: '20' } });
    ({ cookie, csrf } = await signIn(t));
  });
  afterAll(async () => {
    await t.close();
    await smtp.close();
  });

  it('typed markup is escaped on the refused form, on the console and in the reply mail', async () => {
    const id = await taskIn(t, 'submitted');
    const refused = await (await postForm(t, '/tasks/message', { task_id: id, intent: 'ask', message: `"><b>x</b>${EVIL}`, reply_to: `x"><script>@a` })).text();
    expect(refused).not.toContain('<script>alert(1)');
    expect(refused).toContain('&lt;script&gt;alert(1)');
    const sent = await postForm(t, '/tasks/message', { task_id: id, intent: 'ask', message: `Question: ${EVIL}`, reply_to: ASKER, from: EVIL.slice(0, 60) });
    expect(sent.status).toBe(303);
    const detail = (await (await adminGet(t, `/api/v1/admin/tasks/${id}`)).json()) as { messages: { message_id: string }[] };
    const messageId = detail.messages[0]!.message_id;
    const reply = await postForm(t, `/operator/messages/${messageId}/reply`, { _csrf: csrf, task_id: id, message: `Answer ${EVIL}` }, cookie);
    expect(reply.status).toBe(303);
    const page = await (await fetch(`${t.url}/operator/tasks/${id}`, { headers: { cookie } })).text();
    expect(page).not.toContain('<script>alert');
    expect(page).not.toContain('<img src=x');
    expect(page).toContain('Answer &lt;script&gt;alert(1)&lt;/script&gt;');
    const [mail] = await smtp.waitFor(1, (m) => m.to === ASKER);
    expect(mail!.html).not.toContain('<script>alert');
    expect(mail!.html).toContain('&lt;script&gt;');
  });

  it('a reply without the CSRF token or a session changes nothing', async () => {
    const id = await taskIn(t, 'submitted');
    const sent = await postJson(`${t.url}/api/v1/messages`, { message: `About ${id}: hello.`, reply_to: ASKER });
    const { message_id } = (await sent.json()) as { message_id: string };
    const noCsrf = await postForm(t, `/operator/messages/${message_id}/reply`, { task_id: id, message: 'Sneaky reply' }, cookie);
    expect(noCsrf.status).toBe(403);
    const noSession = await postForm(t, `/operator/messages/${message_id}/reply`, { _csrf: csrf, task_id: id, message: 'Sneaky reply' });
    expect(noSession.status).toBe(303);
    expect(noSession.headers.get('location')).toContain('/operator/login');
    const block = await postForm(t, `/operator/tasks/${id}/block`, { kind: 'ip' }, cookie);
    expect(block.status).toBe(403);
    const rows = await t.store.db.selectFrom('message_replies').selectAll().where('message_id', '=', message_id).execute();
    expect(rows).toHaveLength(0);
    const withKey = await postJson(`${t.url}/api/v1/admin/messages/${message_id}/reply`, { message: 'Fine' }, ADMIN);
    expect(withKey.status).toBe(201);
  });

  it('a reply redirect never leaves the console, whatever task_id says', async () => {
    const sent = await postJson(`${t.url}/api/v1/messages`, { message: 'A general question.', reply_to: ASKER });
    const { message_id } = (await sent.json()) as { message_id: string };
    const res = await postForm(t, `/operator/messages/${message_id}/reply`, { _csrf: csrf, task_id: '//evil.example/x', message: 'Answer' }, cookie);
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('/operator/messages?show=all&done=replied');
  });

  it('the status page form never shows the reply_to address of anyone else', async () => {
    const id = await taskIn(t, 'submitted');
    await postForm(t, '/tasks/message', { task_id: id, intent: 'ask', message: 'Private question here.', reply_to: 'secret-person@mail.example-agent.dev' });
    const page = await (await fetch(`${t.url}/tasks?id=${id}&sent=ask`)).text();
    expect(page).not.toContain('secret-person');
  });
});
