import { beforeAll, describe, expect, it } from 'vitest';
import { postForm, signIn } from './console.support.js';
import { adminGet, type Json, submit, taskIn } from './operator.support.js';
import { STORES, TestClock, useTestApp } from './support/app.js';

describe.each(STORES)('operator console refusals on %s', (store) => {
  let cookie: string;
  let csrf: string;
  const t = useTestApp({ store, clock: new TestClock('2030-03-10T10:00:00.000Z') });
  beforeAll(async () => {
    ({ cookie, csrf } = await signIn(t));
  });

  const act = (path: string, fields: Record<string, string> = {}) => postForm(t, path, { _csrf: csrf, ...fields }, cookie);
  const statusOf = async (id: string) => ((await (await adminGet(t, `/api/v1/admin/tasks/${id}`)).json()) as Json).status;

  it('keeps the typed deliverable and explains when delivery is refused', async () => {
    const id = await taskIn(t, 'accepted');
    const res = await act(`/operator/tasks/${id}/deliver`, { operator_notes: '   ' });
    expect(res.status).toBe(422);
    const page = await res.text();
    expect(page).toContain('operator_notes is required to deliver');
    expect(page).toContain('role="alert"');
    expect(await statusOf(id)).toBe('accepted');
  });

  it('saves a draft with browser line breaks normalized, so the hash shown is the hash signed', async () => {
    const id = await taskIn(t, 'accepted');
    const saved = await act(`/operator/tasks/${id}/notes`, { operator_notes: 'Line one\r\nLine two\r\n' });
    expect(saved.status).toBe(303);
    expect(saved.headers.get('location')).toBe(`/operator/tasks/${id}?done=notes`);
    const task = (await (await adminGet(t, `/api/v1/admin/tasks/${id}`)).json()) as Json;
    expect(task.operator_notes).toBe('Line one\nLine two\n');
    const page = await (await fetch(`${t.url}/operator/tasks/${id}?done=notes`, { headers: { cookie } })).text();
    expect(page).toContain('Draft saved');
    // The textarea carries the leading newline the HTML parser eats, then the notes verbatim.
    expect(page).toContain('data-sha256="notes-hash">\nLine one\nLine two\n</textarea>');
  });

  it('answers 409 with the reason when an action no longer applies', async () => {
    const id = await taskIn(t, 'delivered');
    for (const action of ['accept', 'reject', 'deliver', 'notes']) {
      const res = await act(`/operator/tasks/${id}/${action}`, { operator_notes: 'late change', eta_local: '2030-04-01T10:00' });
      expect(res.status, action).toBe(409);
      expect(await res.text()).toContain('final');
    }
    expect(await statusOf(id)).toBe('delivered');
  });

  it('refuses an ETA in the past or malformed, converting the browser offset', async () => {
    const id = await submit(t);
    const past = await act(`/operator/tasks/${id}/accept`, { eta_local: '2030-03-01T10:00', eta_offset: '0' });
    expect(past.status).toBe(422);
    expect(await past.text()).toContain('eta must be in the future');
    const junk = await act(`/operator/tasks/${id}/accept`, { eta_local: 'next week' });
    expect(junk.status).toBe(422);
    // 09:00 at UTC-5 (getTimezoneOffset 300) is 14:00 UTC.
    const ok = await act(`/operator/tasks/${id}/accept`, { eta_local: '2030-03-12T09:00', eta_offset: '300' });
    expect(ok.status).toBe(303);
    expect(((await (await adminGet(t, `/api/v1/admin/tasks/${id}`)).json()) as Json).eta).toBe('2030-03-12T14:00:00.000Z');
    const moved = await act(`/operator/tasks/${id}/eta`, { eta_local: '' });
    expect(moved.status).toBe(422);
  });

  it('answers 404 pages for unknown tasks and actions, and 400 for a bad cursor', async () => {
    const missing = await fetch(`${t.url}/operator/tasks/task-2030-00000000000000000000000000000000`, { headers: { cookie } });
    expect(missing.status).toBe(404);
    expect(missing.headers.get('content-type')).toContain('text/html');
    expect(await missing.text()).toContain('No task has the id');
    const id = await submit(t);
    const action = await act(`/operator/tasks/${id}/teleport`);
    expect(action.status).toBe(404);
    const cursor = await fetch(`${t.url}/operator?status=open&cursor=forged.cursor`, { headers: { cookie } });
    expect(cursor.status).toBe(400);
    expect(await cursor.text()).toContain('cursor');
    const filter = await fetch(`${t.url}/operator?status=bogus`, { headers: { cookie } });
    expect(filter.status).toBe(400);
  });

  it('explains a refused blocklist entry and a vanished one', async () => {
    const bad = await act('/operator/blocklist', { kind: 'email', value: 'not an address', reason: 'spam' });
    expect(bad.status).toBe(422);
    const page = await bad.text();
    expect(page).toContain('role="alert"');
    expect(page).toContain('value="not an address"');
    const gone = await act('/operator/blocklist/blk-000000000000000000000000/remove');
    expect(gone.status).toBe(404);
    expect(await gone.text()).toContain('no longer on the blocklist');
  });

  it('retries a failed mail and refuses to retry one that did not fail', async () => {
    const now = '2030-03-10T10:00:00.000Z';
    const row = {
      kind: 'task_accepted',
      recipient: 'agent@mail.example-agent.dev',
      reply_to: null,
      subject: 'Accepted',
      text_body: 'x',
      html_body: null,
      task_id: null,
      message_id: null,
      attempts: 5,
      next_attempt_at: now,
      locked_until: null,
      created_at: now,
      sent_at: null,
      claim_rank: 0,
    };
    await t.store.db
      .insertInto('outbox')
      .values([
        { ...row, id: 'mail-console-failed', status: 'failed', last_error: '550 mailbox unavailable' },
        { ...row, id: 'mail-console-sent', status: 'sent', last_error: null },
      ])
      .execute();
    const list = await (await fetch(`${t.url}/operator/outbox?status=failed`, { headers: { cookie } })).text();
    expect(list).toContain('550 mailbox unavailable');
    const retried = await act('/operator/outbox/mail-console-failed/retry');
    expect(retried.status).toBe(303);
    const after = await t.store.db.selectFrom('outbox').select(['status', 'attempts']).where('id', '=', 'mail-console-failed').executeTakeFirstOrThrow();
    expect(after).toEqual({ status: 'pending', attempts: 0 });
    const refused = await act('/operator/outbox/mail-console-sent/retry');
    expect(refused.status).toBe(409);
    expect(await refused.text()).toContain('Only a failed mail can be retried');
  });
});
