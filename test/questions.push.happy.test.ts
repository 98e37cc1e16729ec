import { describe, expect, it } from 'vitest';
import { sweepDeadlines } from '../src/services/tasks/deadlines.js';
import { signIn } from './console.support.js';
import { patchOk, submit } from './operator.support.js';
import { answer, ask } from './questions.support.js';
import { STORES, type TestApp, TestClock, useSuiteResource, useTestApp } from './support/app.js';
import { startPushService, type TestPushService } from './support/push-service.js';

/** The answer and a passed deadline reach the operator's devices by Web Push (issue 25), escaped as data. */

describe.each(STORES)('Web Push for answers and passed deadlines on %s', (store) => {
  const push = useSuiteResource<TestPushService>(startPushService, (p) => p.close());
  // Near real time: the announcer only announces what happened in the last minutes.
  const clock = new TestClock(new Date());
  const t: TestApp = useTestApp({
    store,
    clock,
    background: true,
    env: { PUSH_ALLOW_INSECURE_LOOPBACK: 'true', PUSH_SUBJECT: 'mailto:operator@ops.example-service.dev' },
  });

  it('an answer is pushed once, with the answer as text; a passed deadline of an accepted task too', async () => {
    const { cookie, csrf } = await signIn(t);
    const sub = push.subscription('desk');
    const res = await fetch(`${t.url}/operator/push/subscriptions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', cookie },
      body: JSON.stringify({ ...sub, _csrf: csrf }),
    });
    expect(res.status).toBe(201);
    for (const until = Date.now() + 10_000; !t.deps.changes.connected && Date.now() < until; ) await new Promise((r) => setTimeout(r, 50));

    const id = await submit(t, { deadline: new Date(clock.now().getTime() + 3_600_000).toISOString() });
    await patchOk(t, id, { status: 'accepted' });
    const asked = await ask(t, id);
    await answer(t, id, asked.question_id, '<b>The side door</b> "please"');
    const [got] = await push.waitFor(1, (p) => (p.payload as { tag: string }).tag === `answer-${asked.question_id}`, 10_000);
    expect(got!.payload).toMatchObject({ title: 'Answer: real world verification', body: '<b>The side door</b> "please"', url: `/operator/tasks/${id}` });

    clock.advance(3_600_000 + 1000);
    await sweepDeadlines(t.deps);
    const [late] = await push.waitFor(1, (p) => (p.payload as { tag: string }).tag === `deadline-${id}`, 10_000);
    expect(late!.payload).toMatchObject({ title: 'Deadline passed: real world verification', url: `/operator/tasks/${id}` });
    await new Promise((r) => setTimeout(r, 500));
    expect(push.received.filter((p) => (p.payload as { tag: string }).tag === `answer-${asked.question_id}`)).toHaveLength(1);
  });
});
