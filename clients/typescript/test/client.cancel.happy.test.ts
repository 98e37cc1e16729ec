import { describe, expect, it } from 'vitest';
import { patchOk, submit } from '../../../test/operator.support.js';
import { useTestApp } from '../../../test/support/app.js';
import { HumanTaskClient, InvalidTransitionError } from '../src/index.js';

/** cancelTask (issue 30, item 7): a withdrawal request; the status does not change until the operator rejects. */
describe('client.cancelTask', () => {
  const t = useTestApp();

  it('records a withdrawal request, keeps the status, and refuses a final task', async () => {
    const client = new HumanTaskClient({ baseUrl: t.url });
    const id = await submit(t);
    const asked = await client.cancelTask(id);
    expect(asked).toMatchObject({ task_id: id, status: 'submitted' });
    expect((await client.getTask(id)).status).toBe('submitted');
    await patchOk(t, id, { status: 'rejected', operator_notes: "Withdrawn at the requester's request." });
    await expect(client.cancelTask(id)).rejects.toBeInstanceOf(InvalidTransitionError);
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
