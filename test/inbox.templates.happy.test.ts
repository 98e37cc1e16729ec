import { describe, expect, it } from 'vitest';
import { postForm, signIn } from './console.support.js';
import { taskIn } from './operator.support.js';
import { postJson, STORES, TestClock, useTestApp } from './support/app.js';
import { newOperator } from './team.support.js';

/**
 * Issue 31: canned replies and delivery templates. An admin adds, edits and deletes them on the
 * templates page; every operator uses them from a task page without JavaScript ("Use" fills the
 * deliverable, or a reply form to the sender, server-side). Each edit is in the audit log.
 */

describe.each(STORES)('templates in the console on %s', (store) => {
  const t = useTestApp({ store, clock: new TestClock('2030-08-01T10:00:00.000Z') });

  it('an admin curates templates; an operator fills the deliverable and a reply with them, but cannot edit them', async () => {
    const admin = await signIn(t);
    const page = async (cookie: string, path: string) => (await fetch(`${t.url}${path}`, { headers: { cookie } })).text();

    // Add one of each; a bad one is refused with what to fix, the form kept.
    const refused = await postForm(t, '/operator/templates', { _csrf: admin.csrf, kind: 'reply', name: '', body: 'Hello' }, admin.cookie);
    expect(refused.status).toBe(422);
    expect(await refused.text()).toContain('name must be 1 to 80 characters');
    for (const [kind, name, body] of [
      ['reply', 'On our way', 'Thanks for your message: we are on it and will report back today.'],
      ['result', 'Shop hours', 'Opening hours checked on site:\n- Monday to Friday: \n- Saturday: '],
    ] as const) {
      const added = await postForm(t, '/operator/templates', { _csrf: admin.csrf, kind, name, body }, admin.cookie);
      expect(added.status).toBe(303);
    }
    const list = await page(admin.cookie, '/operator/templates?done=added');
    expect(list).toContain('Template added.');
    expect(list).toContain('On our way');
    expect(list).toContain('Shop hours');
    const ids = [...list.matchAll(/action="\/operator\/templates\/(tpl-[0-9a-f]+)"/g)].map((m) => m[1] ?? '');
    expect(ids).toHaveLength(2);
    const [replyId, resultId] = list.indexOf(`/operator/templates/${ids[0]}"`) < list.indexOf('Shop hours') ? [ids[0], ids[1]] : [ids[1], ids[0]];

    // An operator sees them and uses them; editing is refused by the route's declared role.
    const operator = await newOperator(t, 'operator');
    const op = await signIn(t, operator.key);
    expect(await page(op.cookie, '/operator/templates')).toContain('An admin edits these');
    expect((await postForm(t, '/operator/templates', { _csrf: op.csrf, kind: 'reply', name: 'x', body: 'y' }, op.cookie)).status).toBe(403);
    expect((await postForm(t, `/operator/templates/${replyId}/delete`, { _csrf: op.csrf }, op.cookie)).status).toBe(403);

    // A delivery template fills the deliverable of an accepted task.
    const accepted = await taskIn(t, 'accepted');
    const withResult = await page(op.cookie, `/operator/tasks/${accepted}?template=${resultId}`);
    expect(withResult).toMatch(/<textarea id="notes"[^>]*>\nOpening hours checked on site:\n- Monday to Friday: \n- Saturday: <\/textarea>/);

    // A canned reply fills a reply form to the sender of the task's message; sending it records the reply.
    const submitted = await taskIn(t, 'submitted');
    const sent = await postJson(`${t.url}/api/v1/messages`, { message: `Any news on ${submitted}?`, reply_to: 'waiting@mail.example-agent.dev' });
    const messageId = ((await sent.json()) as { message_id: string }).message_id;
    const withReply = await page(op.cookie, `/operator/tasks/${submitted}?template=${replyId}`);
    expect(withReply).toContain(`action="/operator/messages/${messageId}/reply"`);
    expect(withReply).toContain('Thanks for your message: we are on it and will report back today.</textarea>');
    const replied = await postForm(
      t,
      `/operator/messages/${messageId}/reply`,
      { _csrf: op.csrf, task_id: submitted, message: 'Thanks for your message: we are on it and will report back today.' },
      op.cookie,
    );
    expect(replied.status).toBe(303);
    const replies = await t.store.db.selectFrom('message_replies').select('body').where('message_id', '=', messageId).execute();
    expect(replies).toEqual([{ body: 'Thanks for your message: we are on it and will report back today.' }]);

    // The admin edits and deletes; each change is audited.
    const edited = await postForm(
      t,
      `/operator/templates/${replyId}`,
      { _csrf: admin.csrf, kind: 'reply', name: 'On our way (edited)', body: 'On it.' },
      admin.cookie,
    );
    expect(edited.status).toBe(303);
    expect(await page(admin.cookie, '/operator/templates')).toContain('On our way (edited)');
    expect((await postForm(t, `/operator/templates/${resultId}/delete`, { _csrf: admin.csrf }, admin.cookie)).status).toBe(303);
    expect(await page(admin.cookie, '/operator/templates')).not.toContain('Shop hours');
    expect((await postForm(t, `/operator/templates/${resultId}/delete`, { _csrf: admin.csrf }, admin.cookie)).status).toBe(404);
    const audit = await t.store.db.selectFrom('audit_log').select('action').where('action', 'like', 'template.%').execute();
    expect(audit.map((a) => a.action).sort()).toEqual(['template.created', 'template.created', 'template.deleted', 'template.updated']);
  });
});
