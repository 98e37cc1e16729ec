import { describe, expect, it } from 'vitest';
import { sweepDeadlines } from '../src/services/tasks/deadlines.js';
import { postForm, signIn } from './console.support.js';
import { patchOk, submit } from './operator.support.js';
import { answer, ask } from './questions.support.js';
import { postJson, STORES, type TestApp, TestClock, useSuiteResource, useTestApp } from './support/app.js';
import { startPushService, type TestPushService } from './support/push-service.js';
import { api, json, newOperator, type TestOperator } from './team.support.js';

/**
 * Web Push follows the team as mail does (contract "A team of operators"): a device belongs to the
 * operator whose console session subscribed it; a new task goes to the devices of every operator on
 * duty, an answer or a message about an assigned task to its assignee's; with nobody on duty, to
 * every device as before teams (the owner's too); a disabled operator's devices get nothing.
 */

async function subscribe(t: TestApp, push: TestPushService, name: string, key?: string): Promise<void> {
  const { cookie, csrf } = await signIn(t, key);
  const res = await fetch(`${t.url}/operator/push/subscriptions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', cookie },
    body: JSON.stringify({ ...push.subscription(name), _csrf: csrf }),
  });
  expect(res.status).toBe(201);
}

async function duty(t: TestApp, op: TestOperator, on: boolean): Promise<void> {
  const session = await signIn(t, op.key);
  expect((await postForm(t, '/operator/duty', { _csrf: session.csrf, on_duty: on ? '1' : '0' }, session.cookie)).status).toBe(303);
}

describe.each(STORES)('Web Push routed per operator on %s', (store) => {
  const push = useSuiteResource<TestPushService>(startPushService, (p) => p.close());
  // Near real time: the announcer only announces what happened in the last minutes.
  const clock = new TestClock(new Date());
  const t = useTestApp({
    store,
    clock,
    background: true,
    env: { PUSH_ALLOW_INSECURE_LOOPBACK: 'true', PUSH_SUBJECT: 'mailto:operator@ops.example-service.dev', OPERATOR_EMAIL: 'desk@ops.example.org' },
  });

  /** The devices a notice with this tag reached: waits for `expected`, then a moment for any stray one. */
  async function reached(tag: string, expected: string[]): Promise<string[]> {
    const match = (p: { payload: unknown }) => (p.payload as { tag: string }).tag === tag;
    await push.waitFor(expected.length, match, 10_000);
    await new Promise((resolve) => setTimeout(resolve, 400));
    return push.received
      .filter(match)
      .map((p) => p.path.replace('/push/', ''))
      .sort();
  }

  it('sends a new task to the devices of those on duty, an answer, a message and a deadline of an assigned task to its assignee, nothing to a disabled operator', async () => {
    const ada = await newOperator(t, 'operator', 'Ada');
    const bob = await newOperator(t, 'operator', 'Bob');
    const cy = await newOperator(t, 'operator', 'Cy');
    await subscribe(t, push, 'owner');
    await subscribe(t, push, 'ada', ada.key);
    await subscribe(t, push, 'bob', bob.key);
    await subscribe(t, push, 'cy', cy.key);
    const rows = await t.store.db.selectFrom('push_subscriptions').select(['endpoint', 'operator_id']).execute();
    expect(Object.fromEntries(rows.map((row) => [row.endpoint.replace(/.*\/push\//, ''), row.operator_id]))).toEqual({
      owner: null,
      ada: ada.operator_id,
      bob: bob.operator_id,
      cy: cy.operator_id,
    });
    for (const until = Date.now() + 10_000; !t.deps.changes.connected && Date.now() < until; ) await new Promise((r) => setTimeout(r, 50));

    // Nobody on duty: every device, as before teams.
    const first = await submit(t);
    expect(await reached(`task-${first}`, ['ada', 'bob', 'cy', 'owner'])).toEqual(['ada', 'bob', 'cy', 'owner']);

    // Ada and Bob on duty: their devices only.
    await duty(t, ada, true);
    await duty(t, bob, true);
    const id = await submit(t);
    expect(await reached(`task-${id}`, ['ada', 'bob'])).toEqual(['ada', 'bob']);

    // Bob holds the task: an answer and a message naming it reach Bob's device alone.
    await json(await api(t, 'PATCH', `/api/v1/admin/tasks/${id}`, { assignee: bob.operator_id }, ada.auth), 200);
    await patchOk(t, id, { status: 'accepted' });
    const asked = await ask(t, id);
    await answer(t, id, asked.question_id, 'The side door.');
    expect(await reached(`answer-${asked.question_id}`, ['bob'])).toEqual(['bob']);
    const sent = await postJson(`${t.url}/api/v1/messages`, { message: `About ${id}: any news?`, reply_to: 'agent@mail.example-agent.dev' });
    const messageId = ((await sent.json()) as { message_id: string }).message_id;
    expect(await reached(`message-${messageId}`, ['bob'])).toEqual(['bob']);
    // The answer's mail follows the same rule: Bob's address, not OPERATOR_EMAIL.
    const mails = await t.store.db.selectFrom('outbox').select('recipient').where('task_id', '=', id).where('kind', '=', 'question_answered').execute();
    const bobEmail = (await json(await api(t, 'GET', '/api/v1/admin/operators'), 200)).operators as { operator_id: string; email: string }[];
    expect(mails.map((m) => m.recipient)).toEqual([bobEmail.find((op) => op.operator_id === bob.operator_id)?.email]);

    // Cy held a task and was disabled: alerts about it go to those on duty; Cy's device gets nothing.
    const held = await submit(t);
    await reached(`task-${held}`, ['ada', 'bob']);
    await json(await api(t, 'PATCH', `/api/v1/admin/tasks/${held}`, { assignee: cy.operator_id }), 200);
    await json(await api(t, 'PATCH', `/api/v1/admin/operators/${cy.operator_id}`, { disabled: true }), 200);
    const late = await postJson(`${t.url}/api/v1/messages`, { message: `About ${held}: still on?`, reply_to: 'agent@mail.example-agent.dev' });
    const lateId = ((await late.json()) as { message_id: string }).message_id;
    expect(await reached(`message-${lateId}`, ['ada', 'bob'])).toEqual(['ada', 'bob']);

    // Nobody on duty again: every device but the disabled operator's.
    await duty(t, ada, false);
    await duty(t, bob, false);
    const last = await submit(t);
    expect(await reached(`task-${last}`, ['ada', 'bob', 'owner'])).toEqual(['ada', 'bob', 'owner']);

    // An assigned task's passed deadline goes to its assignee, on duty or not.
    const due = await submit(t, { deadline: new Date(clock.now().getTime() + 3_600_000).toISOString() });
    await reached(`task-${due}`, ['ada', 'bob', 'owner']);
    await json(await api(t, 'PATCH', `/api/v1/admin/tasks/${due}`, { status: 'accepted', assignee: bob.operator_id }), 200);
    clock.advance(3_600_000 + 1000);
    await sweepDeadlines(t.deps);
    expect(await reached(`deadline-${due}`, ['bob'])).toEqual(['bob']);
  });
});
