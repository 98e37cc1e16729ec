import { describe, expect, it } from 'vitest';
import { postForm, signIn } from './console.support.js';
import { submit } from './operator.support.js';
import { postJson, STORES, type TestApp, useTestApp } from './support/app.js';
import { api, json, newOperator, type TestOperator } from './team.support.js';

/** Alerts by mail follow the team (contract "A team of operators"): on duty, assignee, else OPERATOR_EMAIL. */

async function recipients(t: TestApp, where: { taskId?: string; messageId?: string }): Promise<string[]> {
  let query = t.store.db.selectFrom('outbox').select('recipient');
  if (where.taskId) query = query.where('task_id', '=', where.taskId).where('kind', '=', 'task_submitted');
  if (where.messageId) query = query.where('message_id', '=', where.messageId).where('kind', '=', 'message_received');
  return (await query.execute()).map((row) => row.recipient).sort();
}

async function email(t: TestApp, op: TestOperator): Promise<string> {
  const list = (await json(await api(t, 'GET', '/api/v1/admin/operators'), 200)).operators as { operator_id: string; email: string }[];
  return list.find((o) => o.operator_id === op.operator_id)?.email ?? '';
}

async function duty(t: TestApp, op: TestOperator, on: boolean): Promise<void> {
  const session = await signIn(t, op.key);
  expect((await postForm(t, '/operator/duty', { _csrf: session.csrf, on_duty: on ? '1' : '0' }, session.cookie)).status).toBe(303);
}

describe.each(STORES)('alert routing on %s', (store) => {
  const t = useTestApp({ store, env: { OPERATOR_EMAIL: 'desk@ops.example.org' } });

  it('sends a new task to every operator on duty, to OPERATOR_EMAIL when nobody is, and a message about an assigned task to its assignee', async () => {
    expect(await recipients(t, { taskId: await submit(t) })).toEqual(['desk@ops.example.org']);
    const a = await newOperator(t);
    const b = await newOperator(t);
    await duty(t, a, true);
    await duty(t, b, true);
    const id = await submit(t);
    expect(await recipients(t, { taskId: id })).toEqual([await email(t, a), await email(t, b)].sort());
    await json(await api(t, 'PATCH', `/api/v1/admin/tasks/${id}`, { assignee: b.operator_id }, a.auth), 200);
    const sent = await postJson(`${t.url}/api/v1/messages`, { message: `About ${id}: any news?`, reply_to: 'agent@mail.example-agent.dev' });
    const messageId = ((await sent.json()) as { message_id: string }).message_id;
    expect(await recipients(t, { messageId })).toEqual([await email(t, b)]);
    await duty(t, a, false);
    await duty(t, b, false);
    expect(await recipients(t, { taskId: await submit(t) })).toEqual(['desk@ops.example.org']);
  });
});
