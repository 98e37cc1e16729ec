import { describe, expect, it } from 'vitest';
import { DEADLINE_REASON, rejectPastDeadline, sweepDeadlines } from '../src/services/tasks/deadlines.js';
import { findTask, tasksPastDeadline } from '../src/store/tasks/tasks-repo.js';
import { type Json, patch, patchOk, submit } from './operator.support.js';
import { publicTask } from './questions.support.js';
import { STORES, smtpOf, startTestApp, type TestApp, TestClock, useSuiteResource, useTestApp } from './support/app.js';
import { waitUntil } from './support/smtp.js';
import { listWebhooks, submitWithCallback, useReceiver, WEBHOOK_TEST_ENV } from './webhooks.support.js';

const OPERATOR = 'operator@ops.example-service.dev';
const START = '2030-03-10T10:00:00.000Z';
const DEADLINE = '2030-03-10T11:00:00Z';
const PAST = '2030-03-10T11:00:01.000Z';

/** The task once the sweep (running in the background) has rejected it. */
function rejectedSoon(t: TestApp, id: string): Promise<Json> {
  return waitUntil(
    async () => {
      const read = await publicTask(t, id);
      return read.status === 'rejected' ? read : undefined;
    },
    10_000,
    'the automatic rejection',
  );
}

describe.each(STORES)('deadlines kept honestly on %s', (store) => {
  const receiver = useReceiver();
  const clock = new TestClock(START);
  const t = useTestApp({
    store,
    clock,
    smtp: true,
    background: true,
    env: { ...WEBHOOK_TEST_ENV, OPERATOR_EMAIL: OPERATOR, MAIL_POLL_MS: '20', DEADLINE_SWEEP_INTERVAL_MS: '100' },
  });
  const smtp = smtpOf(t);

  it('a submitted task whose deadline passes is rejected with the reason, with the events of any rejection', async () => {
    clock.set(START);
    const id = await submitWithCallback(t, `${receiver.url}/ok-deadline-reject`, { deadline: DEADLINE, contact_email: 'agent@mail.example-agent.dev' });
    await new Promise((r) => setTimeout(r, 300));
    expect((await publicTask(t, id)).status).toBe('submitted');
    clock.set(PAST);
    const task = await rejectedSoon(t, id);
    expect(task).toMatchObject({ status: 'rejected', operator_notes: DEADLINE_REASON, seen_by_operator_at: null });
    const [hit] = await waitUntil(() => (receiver.to('/ok-deadline-reject').length > 0 ? receiver.to('/ok-deadline-reject') : undefined), 10_000, 'webhook');
    expect((JSON.parse(hit!.body) as { type: string }).type).toBe('task.rejected');
    const [mail] = await smtp.waitFor(1, (m) => m.text.includes(id) && m.text.includes(DEADLINE_REASON));
    expect(mail!.to).toBe('agent@mail.example-agent.dev');
  });

  it('an accepted task past its deadline stays accepted; the operator is alerted and task.deadline_passed is sent once', async () => {
    clock.set(START);
    const id = await submitWithCallback(t, `${receiver.url}/ok-deadline-passed`, { deadline: DEADLINE });
    await patchOk(t, id, { status: 'accepted' });
    clock.set(PAST);
    const typeOf = (body: string) => JSON.parse(body) as { type: string; data: Json };
    const hit = await waitUntil(() => receiver.to('/ok-deadline-passed').find((r) => typeOf(r.body).type === 'task.deadline_passed'), 10_000, 'webhook');
    expect(typeOf(hit.body).data).toMatchObject({ task_id: id, status: 'accepted' });
    await smtp.waitFor(1, (m) => m.to === OPERATOR && m.subject.startsWith('Deadline passed') && m.text.includes(id));
    // Later sweeps never repeat it.
    await sweepDeadlines(t.deps);
    await sweepDeadlines(t.deps);
    await new Promise((r) => setTimeout(r, 300));
    expect((await listWebhooks(t, id)).filter((w) => w.event === 'task.deadline_passed')).toHaveLength(1);
    expect(smtp.received.filter((m) => m.subject.startsWith('Deadline passed') && m.text.includes(id))).toHaveLength(1);
    expect((await publicTask(t, id)).status).toBe('accepted');
  });

  it('never rejects a task accepted after the sweep found it: the status check and the change commit together', async () => {
    clock.set(START);
    const id = await submit(t, { deadline: DEADLINE });
    clock.set(PAST);
    // The sweep's snapshot still says submitted …
    const snapshot = await findTask(t.store.db, id);
    expect(snapshot?.status).toBe('submitted');
    // … the operator accepts meanwhile …
    const accepted = await patch(t, id, { status: 'accepted' });
    // (or the background sweep got there first: then the accept is the one refused.)
    if (accepted.status === 200) {
      expect(await rejectPastDeadline(t.deps, t.store.db, snapshot!)).toBe(false);
      expect(await publicTask(t, id)).toMatchObject({ status: 'accepted' });
    } else {
      expect(accepted.status).toBe(409);
      expect(await publicTask(t, id)).toMatchObject({ status: 'rejected', operator_notes: DEADLINE_REASON });
    }
  });

  it('racing accepts and sweeps: every task ends either accepted or rejected for its deadline, never both', async () => {
    clock.set(START);
    const ids = await Promise.all(Array.from({ length: 8 }, () => submit(t, { deadline: DEADLINE })));
    clock.set(PAST);
    const outcomes = await Promise.all([...ids.map((id) => patch(t, id, { status: 'accepted' })), sweepDeadlines(t.deps), sweepDeadlines(t.deps)]);
    for (const [i, id] of ids.entries()) {
      const task = await publicTask(t, id);
      const history = (task.status_history as { status: string }[]).map((h) => h.status);
      if ((outcomes[i] as Response).status === 200) expect(history).toEqual(['submitted', 'accepted']);
      else expect(history).toEqual(['submitted', 'rejected']);
    }
  });
});

describe.each(STORES)('deadlines: switched off, and after a restart on %s', (store) => {
  const clock = new TestClock(START);
  const off = useTestApp({ store, clock, env: { DEADLINE_AUTO_REJECT: 'false' } });

  it('DEADLINE_AUTO_REJECT=false leaves a submitted task submitted', async () => {
    clock.set(START);
    const id = await submit(off, { deadline: DEADLINE });
    clock.set(PAST);
    expect(await sweepDeadlines(off.deps)).toEqual({ rejected: 0, announced: 0 });
    expect((await publicTask(off, id)).status).toBe('submitted');
  });

  it('a deadline that passed while the service was down is handled at start', async () => {
    clock.set(START);
    const id = await submit(off, { deadline: DEADLINE });
    clock.set('2030-03-11T09:00:00.000Z');
    // The service is "down" (no sweep ran); a new instance starts on the same store and sweeps at start.
    const restarted = await startTestApp({ store, clock, shareDatabaseWith: off, background: true });
    try {
      const task = await rejectedSoon(restarted, id);
      expect(task.operator_notes).toBe(DEADLINE_REASON);
    } finally {
      await restarted.close();
    }
  });
});

describe.runIf(STORES.includes('postgres'))('the deadline sweep with two instances on one PostgreSQL', () => {
  const clock = new TestClock(START);
  const a = useTestApp({ store: 'postgres', clock });
  const b = useSuiteResource<TestApp>(
    () => startTestApp({ shareDatabaseWith: a, clock }),
    (app) => app.close(),
  );

  it('both sweeping at once: each task is rejected once, with one transition', async () => {
    clock.set(START);
    const ids = await Promise.all(Array.from({ length: 20 }, () => submit(a, { deadline: DEADLINE })));
    clock.set(PAST);
    const results = await Promise.all([sweepDeadlines(a.deps), sweepDeadlines(b.deps), sweepDeadlines(a.deps)]);
    const rejected = results.reduce((n, r) => n + (r?.rejected ?? 0), 0);
    expect(rejected).toBe(20);
    for (const id of ids) expect((await publicTask(a, id)).status_history).toHaveLength(2);
    expect(await tasksPastDeadline(a.store.db, PAST, ['submitted', 'accepted'], 100)).toEqual([]);
  });
});
