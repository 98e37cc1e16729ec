import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postForm, signIn } from './console.support.js';
import { ADMIN, taskIn } from './operator.support.js';
import { postJson, STORES, startTestApp, type TestApp } from './support/app.js';

const ASKER = 'asker@mail.example-agent.dev';

describe.each(STORES)('talking with the operator, refusals, on %s', (store) => {
  let t: TestApp;
  let cookie: string;
  let csrf: string;
  beforeAll(async () => {
    t = await startTestApp({ store, env: { MESSAGE_LIMIT_PER_HOUR: '3' } });
    ({ cookie, csrf } = await signIn(t));
  });
  afterAll(async () => {
    await t.close();
  });

  it('the status-page form shows validation errors next to the fields and keeps what was typed', async () => {
    const id = await taskIn(t, 'submitted');
    const res = await postForm(t, '/tasks/message', { task_id: id, intent: 'ask', message: 'Hi', reply_to: 'not-an-address' });
    expect(res.status).toBe(422);
    const page = await res.text();
    expect(page).toContain('The message was not sent.');
    expect(page).toMatch(/<p class="error" id="me-message">The message must be between \d+ and \d+ characters<\/p>/);
    expect(page).toContain('id="me-reply_to"');
    expect(page).toContain('value="not-an-address"');
    expect(page).toMatch(/aria-invalid="true" aria-describedby="mh-message me-message"/);
  });

  it('an undeliverable address is refused the same way as on the API', async () => {
    const id = await taskIn(t, 'submitted');
    const res = await postForm(t, '/tasks/message', { task_id: id, intent: 'ask', message: 'A question about the visit.', reply_to: 'me@example.com' });
    expect(res.status).toBe(422);
    expect(await res.text()).toContain('id="me-reply_to"');
  });

  it('the message limits of POST /api/v1/messages apply to the form (shared quota)', async () => {
    const id = await taskIn(t, 'submitted');
    const headers = { 'content-type': 'application/x-www-form-urlencoded' };
    // Every request here comes from the same loopback client: use up its hourly message quota.
    let last: Response | undefined;
    for (let i = 0; i < 5; i++) {
      last = await fetch(`${t.url}/tasks/message`, {
        method: 'POST',
        headers,
        body: new URLSearchParams({ task_id: id, intent: 'ask', message: `Question number ${i} about the visit.`, reply_to: ASKER }).toString(),
        redirect: 'manual',
      });
      if (last.status === 429) break;
    }
    expect(last!.status).toBe(429);
    expect(last!.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(await last!.text()).toContain('The message was not sent.');
    // …and the API shares it.
    const api = await postJson(`${t.url}/api/v1/messages`, { message: 'And one more question.', reply_to: ASKER });
    expect(api.status).toBe(429);
  });

  it('a form for an unknown task is a 404 page and sends nothing', async () => {
    const res = await postForm(t, '/tasks/message', {
      task_id: 'task-2030-00000000000000000000000000000000',
      intent: 'ask',
      message: 'Hello there operator.',
      reply_to: ASKER,
    });
    expect(res.status).toBe(404);
    expect(await res.text()).toContain('No task with that id');
  });

  it('replies: unknown message 404, bad bodies 400/422, no key 401', async () => {
    const unknown = await postJson(`${t.url}/api/v1/admin/messages/msg-2030-00000000000000000000000000000000/reply`, { message: 'Hi' }, ADMIN);
    expect(unknown.status).toBe(404);
    expect(((await unknown.json()) as { error: string }).error).toBe('not_found');
    const empty = await postJson(`${t.url}/api/v1/admin/messages/msg-x/reply`, { message: '  ', extra: 1 }, ADMIN);
    expect(empty.status).toBe(422);
    expect(((await empty.json()) as { details: string[] }).details).toEqual([
      'extra is not a field of this request (use message)',
      'message must be between 1 and 10000 characters',
    ]);
    const notObject = await postJson(`${t.url}/api/v1/admin/messages/msg-x/reply`, '[1]', ADMIN);
    expect(notObject.status).toBe(400);
    expect(((await notObject.json()) as { details: string[] }).details).toEqual(['body must be a JSON object: {message}']);
    const noKey = await postJson(`${t.url}/api/v1/admin/messages/msg-x/reply`, { message: 'Hi' });
    expect(noKey.status).toBe(401);
  });

  it('reply bodies: each problem named as the one checker words it', async () => {
    const detailsOf = async (body: unknown) => {
      const res = await postJson(`${t.url}/api/v1/admin/messages/msg-x/reply`, body, ADMIN);
      expect(res.status).toBe(422);
      return ((await res.json()) as { error: string; details: string[] }).details;
    };
    expect(await detailsOf({ message: null })).toEqual(['message is required']);
    expect(await detailsOf({})).toEqual(['message is required']);
    expect(await detailsOf({ message: 5 })).toEqual(['message must be a string']);
    expect(await detailsOf({ message: 'a\u0000b' })).toEqual(['message must not contain NUL characters']);
    expect(await detailsOf({ message: 'x'.repeat(10001) })).toEqual(['message must be between 1 and 10000 characters']);
    expect(await detailsOf({ message: ' \r\n ' })).toEqual(['message must be between 1 and 10000 characters']);
    // CRLF counts as the one LF the mail carries: 5000 line breaks sent as CRLF fit in 10000 characters.
    const crlf = await postJson(`${t.url}/api/v1/admin/messages/msg-2030-00000000000000000000000000000000/reply`, { message: 'a\r\n'.repeat(5000) }, ADMIN);
    expect(crlf.status).toBe(404);
  });

  it('the console refuses an empty reply and a block by a value the task does not have, saying why', async () => {
    const id = await taskIn(t, 'submitted', { delivery: 'status_poll', contact_email: undefined, requester: '' });
    const block = await postForm(t, `/operator/tasks/${id}/block`, { _csrf: csrf, kind: 'email', reason: 'Spam' }, cookie);
    expect(block.status).toBe(422);
    expect(await block.text()).toContain('this task has no contact e-mail');
    const badKind = await postForm(t, `/operator/tasks/${id}/block`, { _csrf: csrf, kind: 'planet' }, cookie);
    expect(badKind.status).toBe(422);
    const reply = await postForm(t, '/operator/messages/msg-2030-00000000000000000000000000000000/reply', { _csrf: csrf, task_id: id, message: 'x' }, cookie);
    expect(reply.status).toBe(404);
  });

  it('withdraw is refused once the task is final', async () => {
    const id = await taskIn(t, 'delivered');
    const res = await postForm(t, `/operator/tasks/${id}/withdraw`, { _csrf: csrf }, cookie);
    expect(res.status).toBe(409);
  });
});
