import { describe, expect, it } from 'vitest';
import { postForm, signIn } from './console.support.js';
import { ADMIN, adminGet, patchOk, submit } from './operator.support.js';
import { postJson, STORES, TestClock, useTestApp } from './support/app.js';

/**
 * Issue 31, the inbox over HTTP on both stores: unread counts from kept counts, messages waiting
 * until answered or marked done (with an audit entry), grouped by task and sender with one reply
 * box at a time, the withdraw action on a withdrawal, and accept from the queue with an ETA chip.
 */

const ASKER = 'asker@mail.example-agent.dev';

async function sendMessage(url: string, body: Record<string, unknown>): Promise<string> {
  const res = await postJson(`${url}/api/v1/messages`, { reply_to: ASKER, ...body });
  expect(res.status).toBe(201);
  return ((await res.json()) as { message_id: string }).message_id;
}

for (const store of STORES) {
  describe(`the operator's inbox (${store})`, () => {
    const clock = new TestClock('2030-03-10T10:00:00.000Z');
    const t = useTestApp({ store, clock });

    it('counts new tasks and waiting messages in the navigation and the title; Mark done and a reply end the wait', async () => {
      const { cookie, csrf } = await signIn(t);
      const get = async (path: string) => (await fetch(`${t.url}${path}`, { headers: { cookie } })).text();
      const task = await submit(t, { description: 'Photograph the notice board at the town hall and copy the market dates.' });
      await submit(t);
      const first = await sendMessage(t.url, { message: `Any news on ${task}?`, subject: 'News?' });
      const second = await sendMessage(t.url, { message: 'Do you cover Shelbyville?', from: 'Travel agent' });

      let queue = await get('/operator');
      expect(queue).toContain('<title>(4) Queue · Operator desk</title>');
      expect(queue).toContain('aria-label="2 new"');
      expect(queue).toContain('aria-label="2 waiting"');
      // The stream: the waiting messages first, titled by subject or first words, with Reply and Mark done.
      expect(queue.indexOf(`data-message-id="${first}"`)).toBeLessThan(queue.indexOf(`data-task-id="${task}"`));
      expect(queue).toContain(`href="/operator/messages?reply=${second}#m-${second}">Reply</a>`);
      expect(queue).toContain('Photograph the notice board at the town hall and copy the…');
      expect(queue).toContain('about Photograph the notice board');

      // Opening the task makes it no longer new.
      await get(`/operator/tasks/${task}`);
      const done = await postForm(t, `/operator/messages/${first}/done`, { _csrf: csrf, back: 'queue' }, cookie);
      expect(done.status).toBe(303);
      expect(done.headers.get('location')).toBe('/operator?done=message_done');
      queue = await get('/operator?done=message_done');
      expect(queue).toContain('Marked done: the message no longer waits.');
      expect(queue).toContain('<title>(2) Queue · Operator desk</title>');
      expect(queue).not.toContain(`data-message-id="${first}"`);
      // Twice is harmless: nothing more changes, no second audit entry.
      expect((await postForm(t, `/operator/messages/${first}/done`, { _csrf: csrf }, cookie)).status).toBe(303);
      const audit = (await (await adminGet(t, `/api/v1/admin/audit?task_id=${task}`)).json()) as {
        entries: { action: string; details: Record<string, unknown> }[];
      };
      expect(audit.entries.filter((e) => e.action === 'message.done')).toEqual([expect.objectContaining({ details: { message_id: first } })]);

      // A reply answers the other one.
      const replied = await postForm(t, `/operator/messages/${second}/reply`, { _csrf: csrf, message: 'Yes, we do.' }, cookie);
      expect(replied.status).toBe(303);
      const waiting = await get('/operator/messages');
      expect(waiting).toContain('<title>(1) Messages · Operator desk</title>');
      expect(waiting).toContain('No message waits for an answer.');
      const all = await get('/operator/messages?show=all');
      expect(all).toContain('<span class="badge">Done</span>');
      expect(all).toContain('<span class="badge ok">Answered</span>');
    });

    it('groups messages by task and by sender, names senders by address, and keeps one reply box at a time', async () => {
      const { cookie, csrf } = await signIn(t);
      const task = await submit(t, { description: 'Count the free parking spaces behind the library at noon.' });
      const a = await sendMessage(t.url, { message: `About ${task}: the back entrance is closed.` });
      const b = await sendMessage(t.url, { message: `About ${task} again: use the side street.` });
      const other = await sendMessage(t.url, { message: `Me too about ${task}.`, reply_to: 'other@mail.example-agent.dev' });
      const page = await (await fetch(`${t.url}/operator/messages`, { headers: { cookie } })).text();
      const section = page.slice(page.indexOf('About <a href="/operator/tasks/'), page.indexOf('</section>', page.indexOf('About <a href="/operator/tasks/')));
      // One group for the task, with its title, and within it one block per sender.
      expect(section).toContain('Count the free parking spaces behind the library at noon</a>');
      expect(section.match(/<h3>From /g)).toHaveLength(2);
      expect(section).toContain(`From ${ASKER}`);
      expect(section).toContain('From other@mail.example-agent.dev');
      expect(section.indexOf(`id="m-${a}"`)).toBeGreaterThan(section.indexOf(`From ${ASKER}`));
      expect(section.indexOf(`id="m-${b}"`)).toBeGreaterThan(section.indexOf(`From ${ASKER}`));
      expect(page).not.toContain('unnamed sender');
      // The id in the heading stays whole.
      expect(section).toContain(`<span class="mono nobreak" title="${task}">`);
      // Every reply box is behind its own Reply, closed, and they share one name (one open at a time).
      expect(page.match(/<textarea/g)).toHaveLength(3);
      expect(page.match(/<details class="reply-box" name="reply"><summary/g)).toHaveLength(3);
      const opened = await (await fetch(`${t.url}/operator/messages?reply=${other}`, { headers: { cookie } })).text();
      expect(opened.match(/<details class="reply-box" name="reply" open>/g)).toHaveLength(1);
      expect(opened.indexOf('name="reply" open>')).toBeGreaterThan(opened.indexOf(`id="m-${other}"`));
      // The task page has the same: a Reply per message, and Mark done, which comes back to the task.
      const taskPage = await (await fetch(`${t.url}/operator/tasks/${task}`, { headers: { cookie } })).text();
      expect(taskPage.match(/<details class="reply-box" name="reply"><summary/g)).toHaveLength(3);
      expect(taskPage).toContain(`From ${ASKER}`);
      const done = await postForm(t, `/operator/messages/${a}/done`, { _csrf: csrf, task_id: task }, cookie);
      expect(done.headers.get('location')).toBe(`/operator/tasks/${task}?done=message_done`);
    });

    it('a withdrawal message has its withdraw action on the messages page, which also marks it done', async () => {
      const { cookie, csrf } = await signIn(t);
      const task = await submit(t);
      // Accepted: a task nobody accepted would be withdrawn at once by the cancel itself.
      await patchOk(t, task, { status: 'accepted' });
      const withdrawal = await postJson(`${t.url}/api/v1/tasks/${task}/cancel`, {});
      expect(withdrawal.status).toBeLessThan(300);
      const page = await (await fetch(`${t.url}/operator/messages`, { headers: { cookie } })).text();
      expect(page).toContain(`action="/operator/tasks/${task}/withdraw"`);
      const message_id = /name="message_id" value="([^"]+)"/.exec(page)?.[1] ?? '';
      const res = await postForm(t, `/operator/tasks/${task}/withdraw`, { _csrf: csrf, message_id }, cookie);
      expect(res.status).toBe(303);
      const after = (await (await adminGet(t, `/api/v1/admin/tasks/${task}`)).json()) as { status: string; operator_notes: string };
      expect(after).toMatchObject({ status: 'rejected', operator_notes: 'Withdrawn at the requester’s request.' });
      const waiting = await (await fetch(`${t.url}/operator/messages`, { headers: { cookie } })).text();
      expect(waiting).not.toContain(`id="m-${message_id}"`);
    });

    it('accepts from the queue with an ETA chip, without script, and comes back to the queue', async () => {
      const { cookie, csrf } = await signIn(t);
      const task = await submit(t, { description: 'Ask the pharmacy whether the flu vaccine is in stock.' });
      const queue = await (await fetch(`${t.url}/operator`, { headers: { cookie } })).text();
      const card = queue.slice(queue.indexOf(`data-task-id="${task}"`), queue.indexOf('</li>', queue.indexOf(`data-task-id="${task}"`)));
      expect(card).toContain(`action="/operator/tasks/${task}/accept"`);
      expect(card).toContain('name="eta_hours" value="24"');
      const res = await postForm(t, `/operator/tasks/${task}/accept`, { _csrf: csrf, eta_hours: '24', back: 'queue' }, cookie);
      expect(res.status).toBe(303);
      expect(res.headers.get('location')).toBe('/operator?done=accepted');
      const accepted = (await (await fetch(`${t.url}/api/v1/tasks/${task}`, { headers: ADMIN })).json()) as { status: string; eta: string };
      expect(accepted.status).toBe('accepted');
      expect(Date.parse(accepted.eta)).toBe(clock.now().getTime() + 24 * 3_600_000);
      const back = await (await fetch(`${t.url}/operator?done=accepted`, { headers: { cookie } })).text();
      expect(back).toContain('Task accepted');
    });
  });
}
