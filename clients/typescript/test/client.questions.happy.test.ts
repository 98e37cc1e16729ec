import { describe, expect, it } from 'vitest';
import { patchOk, submit } from '../../../test/operator.support.js';
import { ask } from '../../../test/questions.support.js';
import { postJson, useTestApp } from '../../../test/support/app.js';
import { AlreadyAnsweredError, HumanTaskClient } from '../src/index.js';
import { htask, startHtask } from './cli.support.js';

/** Questions from the operator through the client and htask (issue 25). */

describe('human-task-client: questions and threads', () => {
  const t = useTestApp();

  it('waitForResult returns early with the question; answerQuestion answers it; a second answer is AlreadyAnsweredError', async () => {
    const client = new HumanTaskClient({ baseUrl: t.url });
    const id = await submit(t);
    await patchOk(t, id, { status: 'accepted' });
    const waiting = client.waitForResult(id, { waitSeconds: 20, timeoutMs: 30_000 });
    await new Promise((r) => setTimeout(r, 300));
    const asked = await ask(t, id, 'Which of the two shops do you mean?');
    const task = await waiting;
    expect(task.status).toBe('accepted');
    expect(task.awaiting_answer).toBe(true);
    const open = task.questions.find((q) => q.answer === null);
    expect(open?.question_id).toBe(asked.question_id);
    const answered = await client.answerQuestion(id, asked.question_id, 'The one on the corner.');
    expect(answered.awaiting_answer).toBe(false);
    await expect(client.answerQuestion(id, asked.question_id, 'Again')).rejects.toBeInstanceOf(AlreadyAnsweredError);
  });

  it('readThread lists the operator’s replies to a message', async () => {
    const client = new HumanTaskClient({ baseUrl: t.url });
    const sent = await client.sendMessage({ message: 'Do you cover the airport area?', reply_to: 'asker@mail.example-agent.dev' });
    await postJson(
      `${t.url}/api/v1/admin/messages/${sent.message_id}/reply`,
      { message: 'Yes, we do.' },
      { authorization: 'Bearer test-admin-key-0123456789' },
    );
    const thread = await client.readThread(sent.message_id, sent.thread_token);
    expect(thread.replies.map((r) => r.message)).toEqual(['Yes, we do.']);
  });

  it('htask wait exits 5 with the question; htask answer answers it', async () => {
    const id = await submit(t);
    const waiting = startHtask(['wait', id, '--timeout', '60'], { baseUrl: t.url });
    await waiting.stderrContains(`${id}: submitted`);
    const asked = await ask(t, id, 'Is the morning fine for you?');
    const result = await waiting.done;
    expect(result.code).toBe(5);
    expect(result.stdout).toContain(asked.question_id);
    expect(result.stdout).toContain('Is the morning fine for you?');
    expect(result.stdout).toContain(`htask answer ${id}`);
    const answered = await htask(['--json', 'answer', id, asked.question_id, 'Yes, mornings are fine.'], { baseUrl: t.url });
    expect(answered.code).toBe(0);
    expect(JSON.parse(answered.stdout)).toMatchObject({ task_id: id, awaiting_answer: false });
    const again = await htask(['answer', id, asked.question_id, 'Again'], { baseUrl: t.url });
    expect(again.code).toBe(1);
    expect(again.stdout + again.stderr).toContain('already_answered');
    const usage = await htask(['answer', id], { baseUrl: t.url });
    expect(usage.code).toBe(2);
  });
});
