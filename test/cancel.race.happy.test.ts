import { describe, expect, it } from 'vitest';
import { adminGet, type Json, patch, submit } from './operator.support.js';
import { STORES, startTestApp, type TestApp, useSuiteResource, useTestApp } from './support/app.js';

/**
 * The requester cancels on one instance while the operator accepts on another, both on one
 * PostgreSQL (services/tasks/cancel.ts): the conditional update lets exactly one win. Either the
 * task is withdrawn and the accept is refused (409), or the accept went through and the
 * cancellation became a withdrawal request for the operator; never both, never neither.
 */

const ROUNDS = 25;

describe.runIf(STORES.includes('postgres'))('cancel racing accept across two instances on one PostgreSQL', () => {
  const a = useTestApp({ store: 'postgres' });
  const b = useSuiteResource<TestApp>(
    () => startTestApp({ shareDatabaseWith: a }),
    (app) => app.close(),
  );

  it(`resolves one way in each of ${ROUNDS} races`, async () => {
    const outcomes = { withdrawn: 0, requested: 0 };
    for (let round = 0; round < ROUNDS; round++) {
      const id = await submit(a);
      const [cancelled, accepted] = await Promise.all([fetch(`${a.url}/api/v1/tasks/${id}/cancel`, { method: 'POST' }), patch(b, id, { status: 'accepted' })]);
      expect(cancelled.status).toBe(202);
      const cancel = (await cancelled.json()) as Json;
      const task = (await (await adminGet(b, `/api/v1/admin/tasks/${id}`)).json()) as Json;
      const audit = (await (await adminGet(a, `/api/v1/admin/audit?task_id=${id}`)).json()) as { entries: Json[] };
      const transitions = audit.entries.map((entry) => entry.action);
      if (cancel.status === 'rejected') {
        outcomes.withdrawn += 1;
        expect(accepted.status).toBe(409);
        expect(task.status).toBe('rejected');
        expect(transitions).toEqual(['task.rejected']);
      } else {
        outcomes.requested += 1;
        expect(accepted.status).toBe(200);
        expect(cancel.status).toBe('accepted');
        expect(task.status).toBe('accepted');
        expect(transitions).toEqual(['task.accepted']);
      }
      // Whichever won, the operator was told once, on the task.
      const messages = (await (await adminGet(a, '/api/v1/admin/messages?limit=50')).json()) as { messages: (Json & { task_ids: string[] })[] };
      expect(messages.messages.filter((m) => m.task_ids.includes(id))).toHaveLength(1);
    }
    expect(outcomes.withdrawn + outcomes.requested).toBe(ROUNDS);
  });
});
