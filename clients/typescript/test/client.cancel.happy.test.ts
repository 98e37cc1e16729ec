import { describe, expect, it } from 'vitest';
import { patchOk, submit } from '../../../test/operator.support.js';
import { useTestApp } from '../../../test/support/app.js';
import { HumanTaskClient, InvalidTransitionError } from '../src/index.js';

/** cancelTask: a task nobody accepted is withdrawn at once; an accepted one gets a withdrawal request and keeps its status. */
describe('client.cancelTask', () => {
  const t = useTestApp();

  it('withdraws a submitted task at once, and then refuses it as final', async () => {
    const client = new HumanTaskClient({ baseUrl: t.url });
    const id = await submit(t);
    const withdrawn = await client.cancelTask(id);
    expect(withdrawn).toMatchObject({ task_id: id, status: 'rejected', message: "Withdrawn at the requester's request." });
    expect((await client.getTask(id)).status).toBe('rejected');
    await expect(client.cancelTask(id)).rejects.toBeInstanceOf(InvalidTransitionError);
  });

  it('records a withdrawal request for an accepted task and keeps its status', async () => {
    const client = new HumanTaskClient({ baseUrl: t.url });
    const id = await submit(t);
    await patchOk(t, id, { status: 'accepted' });
    expect(await client.cancelTask(id)).toMatchObject({ task_id: id, status: 'accepted' });
    expect((await client.getTask(id)).status).toBe('accepted');
  });
});

describe('a replayed submission', () => {
  const t = useTestApp();

  it('says replayed: false the first time and true when the same Idempotency-Key is sent again (Idempotent-Replayed)', async () => {
    const client = new HumanTaskClient({ baseUrl: t.url });
    const task = {
      task_type: 'real_world_verification',
      description: `Check whether the bakery at 12 Main Street is open on Sundays (${Math.random().toString(36).slice(2)}).`,
      delivery: 'status_poll',
    } as const;
    const first = await client.submitTask(task);
    expect(first.replayed).toBe(false);
    const again = await client.submitTask(task, { idempotencyKey: first.idempotency_key });
    expect(again).toMatchObject({ task_id: first.task_id, replayed: true });
  });
});
