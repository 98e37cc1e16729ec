import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { submit } from './operator.support.js';
import { postJson, STORES, startTestApp, type TestApp, useTestApp, validTask } from './support/app.js';
import { api, json, newOperator, type TestOperator } from './team.support.js';

/** Every bad input of approvals (docs/approvals.md), on both stores: the contract's error, never a 500, never a delivery below the quorum. */

async function proposed(t: TestApp, by: TestOperator, required: number, overrides: Record<string, unknown> = {}): Promise<string> {
  const id = await submit(t, { approvals: required, ...overrides });
  await json(await api(t, 'PATCH', `/api/v1/admin/tasks/${id}`, { status: 'accepted' }, by.auth), 200);
  await json(await api(t, 'PATCH', `/api/v1/admin/tasks/${id}`, { status: 'delivered', operator_notes: 'The answer.' }, by.auth), 200);
  return id;
}

const decide = (t: TestApp, id: string, body: unknown, who?: TestOperator) => api(t, 'POST', `/api/v1/admin/tasks/${id}/approvals`, body, who?.auth);

describe.each(STORES)('approvals refused on %s', (store) => {
  const t = useTestApp({ store });

  it('refuses approvals 0, 6, 2.5, a string and null with validation_failed naming the field', async () => {
    for (const approvals of [0, 6, 2.5, '2', true]) {
      const res = await postJson(`${t.url}/api/v1/tasks`, validTask({ approvals }));
      expect(res.status, String(approvals)).toBe(422);
      const body = (await res.json()) as { error: string; details: string[] };
      expect(body.error).toBe('validation_failed');
      expect(body.details.join(' ')).toMatch(/approvals/);
    }
    for (const approvals of [1, 5]) expect((await postJson(`${t.url}/api/v1/tasks`, validTask({ approvals }))).status).toBe(202);
  });

  it('documents the route in OpenAPI with its contract errors', async () => {
    const doc = (await (await fetch(`${t.url}/openapi.json`)).json()) as {
      paths: Record<string, { post?: { responses: Record<string, { $ref?: string }> } }>;
      components: { responses: Record<string, { description: string }> };
    };
    const responses = doc.paths['/api/v1/admin/tasks/{task_id}/approvals']?.post?.responses ?? {};
    const described = (status: string) => doc.components.responses[(responses[status]?.$ref ?? '').split('/').at(-1) ?? '']?.description ?? '';
    expect(described('409')).toContain('approval_not_allowed');
    expect(described('400')).toContain('invalid_signature');
    expect(Object.keys(responses)).toEqual(expect.arrayContaining(['200', '401', '403', '404', '422']));
  });

  it('refuses bad decisions: unknown decision, a send-back without reason, unknown fields, not an object, an unknown task', async () => {
    const a = await newOperator(t);
    const id = await proposed(t, a, 2);
    const cases: [unknown, number, string][] = [
      [{ decision: 'maybe' }, 422, 'validation_failed'],
      [{}, 422, 'validation_failed'],
      [{ decision: 'send_back' }, 422, 'validation_failed'],
      [{ decision: 'send_back', reason: '   ' }, 422, 'validation_failed'],
      [{ decision: 'send_back', reason: 'x'.repeat(2001) }, 422, 'validation_failed'],
      [{ decision: 'approve', extra: 1 }, 422, 'validation_failed'],
      [{ decision: 'approve', assertion: 'not an object' }, 422, 'validation_failed'],
      [[], 400, 'malformed_request'],
      ['{', 400, 'invalid_json'],
    ];
    for (const [body, status, error] of cases) {
      const res = await decide(t, id, body);
      expect(res.status, JSON.stringify(body)).toBe(status);
      expect(((await res.json()) as { error: string }).error).toBe(error);
    }
    expect((await decide(t, 'task-2026-00000000000000000000000000000000', { decision: 'approve' })).status).toBe(404);
    // Nothing counted by any of them.
    expect((await json(await api(t, 'GET', `/api/v1/admin/tasks/${id}`), 200)).approvals).toEqual({ required: 2, given: 1 });
  });

  it('refuses an assertion that is not a passkey of the approver (invalid_signature), and an unsigned proposal stays unsigned', async () => {
    const [a, b] = [await newOperator(t), await newOperator(t)];
    const id = await proposed(t, a, 2);
    const forged = {
      id: 'AAAA',
      rawId: 'AAAA',
      type: 'public-key',
      response: { authenticatorData: 'AA', clientDataJSON: 'AA', signature: 'AA' },
      clientExtensionResults: {},
    };
    const res = await decide(t, id, { decision: 'approve', assertion: forged }, b);
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: 'invalid_signature', details: [expect.stringMatching(/^assertion: /)] });
    // The owner has no passkeys: the same.
    expect((await decide(t, id, { decision: 'approve', assertion: forged })).status).toBe(400);
    expect((await json(await api(t, 'GET', `/api/v1/admin/tasks/${id}`), 200)).approvals).toEqual({ required: 2, given: 1 });
    // An assertion on a PATCH that proposes nothing.
    const plain = await submit(t);
    const patched = await api(t, 'PATCH', `/api/v1/admin/tasks/${plain}`, { status: 'accepted', assertion: forged });
    expect(patched.status).toBe(422);
  });

  it('refuses a disabled operator, and an approval after a rejection; more approvals than operators is accepted', async () => {
    const [a, b] = [await newOperator(t), await newOperator(t)];
    const id = await proposed(t, a, 2);
    await json(await api(t, 'PATCH', `/api/v1/admin/operators/${b.operator_id}`, { disabled: true }), 200);
    expect((await decide(t, id, { decision: 'approve' }, b)).status).toBe(401);
    await json(await api(t, 'PATCH', `/api/v1/admin/tasks/${id}`, { status: 'rejected', operator_notes: 'Not doable.' }, a.auth), 200);
    const after = await decide(t, id, { decision: 'approve' });
    expect(after.status).toBe(409);
    expect(await after.json()).toMatchObject({ error: 'approval_not_allowed' });
    const rejected = await json(await api(t, 'GET', `/api/v1/admin/tasks/${id}`), 200);
    expect(rejected).toMatchObject({ status: 'rejected', proposal: null, approvals: { required: 2, given: 0 } });
    expect(rejected.receipt).toBeUndefined();
    // Five approvals on a small team: accepted (the console says so).
    expect((await postJson(`${t.url}/api/v1/tasks`, validTask({ approvals: 5 }))).status).toBe(202);
  });
});

describe.each(STORES)('approvals racing on two instances on %s', (store) => {
  let a: TestApp;
  let b: TestApp;
  beforeAll(async () => {
    a = await startTestApp({ store });
    b = store === 'postgres' ? await startTestApp({ store, shareDatabaseWith: a }) : a;
  });
  afterAll(async () => {
    if (b !== a) await b?.close();
    await a?.close();
  });

  const counts = async (id: string) => {
    const db = a.store.db;
    const mails = await db.selectFrom('outbox').select('kind').where('task_id', '=', id).execute();
    const hooks = await db.selectFrom('webhook_outbox').select('event').where('task_id', '=', id).execute();
    return { delivered: mails.filter((m) => m.kind === 'task_delivered').length, hooks: hooks.map((h) => h.event) };
  };

  it('three approvals at once on a 2-of-3: exactly one counts, one delivery, one receipt, one mail, one delivered webhook', async () => {
    const ops = [await newOperator(a), await newOperator(a), await newOperator(a), await newOperator(a)];
    const [proposer, ...others] = ops as [TestOperator, ...TestOperator[]];
    const id = await proposed(a, proposer, 2, { callback_url: 'https://hooks.example.org/h' });
    const results = await Promise.all(others.map((op, i) => decide(i % 2 === 0 ? a : b, id, { decision: 'approve' }, op)));
    const statuses = results.map((r) => r.status).sort();
    expect(statuses).toEqual([200, 409, 409]);
    const task = await json(await api(a, 'GET', `/api/v1/admin/tasks/${id}`), 200);
    expect(task).toMatchObject({ status: 'delivered', approvals: { required: 2, given: 2 } });
    expect((decodeJwt(task.receipt as string).approvals as unknown[]).length).toBe(2);
    const { delivered, hooks } = await counts(id);
    expect(delivered).toBe(1);
    expect(hooks.filter((e) => e === 'task.delivered').length).toBe(1);
    expect(hooks.filter((e) => e.startsWith('task.approval:')).length, JSON.stringify(hooks)).toBe(2);
  });

  it('an approval racing a send-back and a rejection: one way, never delivered below the quorum', async () => {
    for (let round = 0; round < 4; round++) {
      const [p, x, y] = [await newOperator(a), await newOperator(a), await newOperator(a)];
      const id = await proposed(a, p, 3);
      const [approved, other] = await Promise.all([
        decide(a, id, { decision: 'approve' }, x),
        round % 2 === 0
          ? decide(b, id, { decision: 'send_back', reason: 'No.' }, y)
          : api(b, 'PATCH', `/api/v1/admin/tasks/${id}`, { status: 'rejected', operator_notes: 'Withdrawn.' }, y.auth),
      ]);
      expect(other.status).toBe(200);
      expect([200, 409]).toContain(approved.status);
      const task = await json(await api(a, 'GET', `/api/v1/admin/tasks/${id}`), 200);
      expect(task.status).not.toBe('delivered');
      expect(task.receipt).toBeUndefined();
      expect((task.approvals as { given: number }).given).toBeLessThan(3);
      expect((await counts(id)).delivered).toBe(0);
    }
  });
});
