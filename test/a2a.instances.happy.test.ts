import { StreamResponse } from '@a2a-js/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { a2aClient, BINDINGS, operator, sendRequest, taskOf, uniqueDescription } from './a2a.support.js';
import { startTestApp, type TestApp } from './support/app.js';

/**
 * Two instances on one PostgreSQL database (docs/a2a.md "Blocking and streams"): a blocking send
 * and a stream held on one instance are released by the operator's delivery on the other, through
 * the change feed (without it the hold would last its five-minute slice, past the test's timeout).
 */

const describePg = process.env.TEST_POSTGRES_URL ? describe : describe.skip;

describePg('A2A across two instances on postgres', () => {
  let a: TestApp;
  let b: TestApp;
  beforeAll(async () => {
    a = await startTestApp({ store: 'postgres' });
    b = await startTestApp({ store: 'postgres', shareDatabaseWith: a });
  });
  afterAll(async () => {
    await b?.close();
    await a?.close();
  });

  it.each(BINDINGS)('releases a blocking send on one instance when the task is delivered on the other (%s)', async (binding) => {
    const client = await a2aClient(a, binding);
    const first = taskOf(await client.sendMessage(sendRequest({ text: uniqueDescription() })));
    const id = first.id as string;
    await operator.patch(b, id, { status: 'accepted' });
    // A message to the operator on the task, blocking: held until the task is final (no question is asked).
    const held = client.sendMessage(
      sendRequest({ text: 'unused', messageId: 'other', returnImmediately: false, taskId: id, data: { reply_to: 'agent@mail.example-agent.dev' } }),
    );
    await new Promise((resolve) => setTimeout(resolve, 300));
    await operator.patch(b, id, { status: 'delivered', operator_notes: 'Done on the other instance.' });
    const done = taskOf(await held);
    expect(done.status).toMatchObject({ state: 'TASK_STATE_COMPLETED' });
  });

  it.each(BINDINGS)('streams a change made on the other instance (%s)', async (binding) => {
    const client = await a2aClient(a, binding);
    const first = taskOf(await client.sendMessage(sendRequest({ text: uniqueDescription() })));
    const id = first.id as string;
    const kinds: string[] = [];
    for await (const event of client.resubscribeTask({ tenant: '', id })) {
      kinds.push(Object.keys(StreamResponse.toJSON(event) as object)[0] ?? '');
      if (kinds.length === 1) await operator.patch(b, id, { status: 'rejected', operator_notes: 'Out of our area.' });
    }
    expect(kinds).toEqual(['task', 'statusUpdate']);
  });
});
