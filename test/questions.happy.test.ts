import { describe, expect, it } from 'vitest';
import { etagOf, heldCount, readTask } from './longpoll.support.js';
import { type Json, submit, taskIn } from './operator.support.js';
import { answer, ask, publicTask } from './questions.support.js';
import { STORES, smtpOf, startTestApp, type TestApp, TestClock, useSuiteResource, useTestApp } from './support/app.js';
import { waitUntil } from './support/smtp.js';
import { submitWithCallback, useReceiver, WEBHOOK_TEST_ENV } from './webhooks.support.js';

const OPERATOR = 'operator@ops.example-service.dev';
const CONTACT = 'agent@mail.example-agent.dev';

describe.each(STORES)('questions from the operator, answers from the requester on %s', (store) => {
  const receiver = useReceiver();
  const clock = new TestClock();
  const t = useTestApp({ store, clock, smtp: true, background: true, env: { ...WEBHOOK_TEST_ENV, OPERATOR_EMAIL: OPERATOR, MAIL_POLL_MS: '20' } });
  const smtp = smtpOf(t);

  it('a task without questions says so: questions [] and awaiting_answer false', async () => {
    const id = await submit(t);
    expect(await publicTask(t, id)).toMatchObject({ questions: [], awaiting_answer: false });
  });

  it('the whole loop: ask (201), the public task shows it awaiting, answer (200), the answer stands beside the question', async () => {
    const id = await taskIn(t, 'accepted');
    const before = (await publicTask(t, id)).updated_at as string;
    clock.advance(60_000);
    const asked = await ask(t, id, 'Is a photo from the street enough?');
    expect(asked.question_id).toMatch(/^q-\d{4}-[0-9a-f]{32}$/);
    expect(asked).toMatchObject({ question: 'Is a photo from the street enough?' });
    const waiting = await publicTask(t, id);
    expect(waiting).toMatchObject({
      status: 'accepted',
      awaiting_answer: true,
      questions: [
        { question_id: asked.question_id, question: 'Is a photo from the street enough?', asked_at: asked.asked_at, answer: null, answered_at: null },
      ],
    });
    expect(waiting.updated_at).not.toBe(before);
    clock.advance(60_000);
    const answered = await answer(t, id, asked.question_id, 'Yes, one from the street is enough.');
    expect(answered).toMatchObject({ status: 'accepted', awaiting_answer: false });
    const [q] = answered.questions as Json[];
    expect(q).toMatchObject({ question_id: asked.question_id, answer: 'Yes, one from the street is enough.' });
    expect(typeof q!.answered_at).toBe('string');
    expect(answered.updated_at).toBe(q!.answered_at);
    expect(answered.updated_at).not.toBe(waiting.updated_at);
    expect(await publicTask(t, id)).toEqual(answered);
  });

  it('asking and answering change the ETag and wake a held long-poll', async () => {
    const id = await taskIn(t, 'submitted');
    const etag = await etagOf(t, id);
    const held = readTask(t, id, { 'if-none-match': etag, prefer: 'wait=30' });
    await heldCount(t, 1);
    const asked = await ask(t, id);
    const woke = await held;
    expect(woke.status).toBe(200);
    expect(woke.ms).toBeLessThan(10_000);
    expect(JSON.parse(woke.text)).toMatchObject({ awaiting_answer: true, status: 'submitted' });
    const etag2 = woke.headers.get('etag') ?? '';
    expect(etag2).not.toBe(etag);
    const held2 = readTask(t, id, { 'if-none-match': etag2, prefer: 'wait=30' });
    await heldCount(t, 1);
    await answer(t, id, asked.question_id);
    const woke2 = await held2;
    expect(woke2.status).toBe(200);
    expect(JSON.parse(woke2.text)).toMatchObject({ awaiting_answer: false });
  });

  it('sends the signed webhook task.question with the public task, and mails the contact address a link to the status page', async () => {
    const id = await submitWithCallback(t, `${receiver.url}/ok-question`);
    const asked = await ask(t, id, 'Which floor is the office on?');
    const [hit] = await waitUntil(() => (receiver.to('/ok-question').length > 0 ? receiver.to('/ok-question') : undefined), 15_000, 'the webhook');
    const body = JSON.parse(hit!.body) as { type: string; data: Json };
    expect(body.type).toBe('task.question');
    expect(body.data).toMatchObject({ task_id: id, awaiting_answer: true });
    expect(String(hit!.headers['webhook-signature'])).toMatch(/^v1a,/);
    const [mail] = await smtp.waitFor(1, (m) => m.to === CONTACT && m.text.includes('Which floor is the office on?'));
    expect(mail!.subject).toBe(`The operator has a question: ${id}`);
    expect(mail!.text).toContain(`/tasks?id=${id}#${asked.question_id}`);
  });

  it('the answer reaches the operator by mail (the fallback of push)', async () => {
    const id = await taskIn(t, 'accepted');
    const asked = await ask(t, id);
    await answer(t, id, asked.question_id, 'Use the blue door on the left.');
    const [mail] = await smtp.waitFor(1, (m) => m.to === OPERATOR && m.text.includes('Use the blue door on the left.'));
    expect(mail!.text).toContain(`/operator/tasks/${id}`);
  });

  it('a status_poll task gets no question mail; its questions are read from the task', async () => {
    const id = await submit(t, { delivery: 'status_poll', contact_email: undefined });
    await ask(t, id, 'Do you need the opening hours too?');
    expect((await publicTask(t, id)).awaiting_answer).toBe(true);
    await new Promise((r) => setTimeout(r, 300));
    expect(smtp.received.some((m) => m.text.includes('Do you need the opening hours too?'))).toBe(false);
  });
});

describe.runIf(STORES.includes('postgres'))('questions across two instances on one PostgreSQL', () => {
  const a = useTestApp({ store: 'postgres' });
  const b = useSuiteResource<TestApp>(
    () => startTestApp({ shareDatabaseWith: a }),
    (app) => app.close(),
  );

  it('a question asked through one instance wakes a long-poll held on the other within a second', async () => {
    const id = await submit(a);
    const etag = await etagOf(b, id);
    const held = readTask(b, id, { 'if-none-match': etag, prefer: 'wait=30' });
    await heldCount(b, 1);
    const asked = await ask(a, id);
    const started = Date.now();
    const woke = await held;
    expect(woke.status).toBe(200);
    expect(Date.now() - started).toBeLessThan(1500);
    expect(JSON.parse(woke.text)).toMatchObject({ awaiting_answer: true });
    expect(asked.question_id).toBeTruthy();
  });

  it('two answers racing for one question through two instances: exactly one wins', async () => {
    for (let round = 0; round < 5; round++) {
      const id = await submit(a);
      const asked = await ask(a, id);
      const results = await Promise.all([
        fetch(`${a.url}/api/v1/tasks/${id}/questions/${asked.question_id}/answer`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ answer: 'from a' }),
        }),
        fetch(`${b.url}/api/v1/tasks/${id}/questions/${asked.question_id}/answer`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ answer: 'from b' }),
        }),
      ]);
      const statuses = results.map((r) => r.status).sort();
      expect(statuses).toEqual([200, 409]);
      const loser = results.find((r) => r.status === 409)!;
      expect(((await loser.json()) as Json).error).toBe('already_answered');
      const winner = (await results.find((r) => r.status === 200)!.json()) as Json;
      const stored = await publicTask(b, id);
      expect((stored.questions as Json[])[0]!.answer).toBe((winner.questions as Json[])[0]!.answer);
    }
  });
});
