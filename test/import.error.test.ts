import { describe, expect, it } from 'vitest';
import { deliveredRecord, importOk, importTasks, openRecord, rejectedRecord } from './import.support.js';
import { patch } from './operator.support.js';
import { STORES, useTestApp } from './support/app.js';

describe.each(STORES)('task import refusals on %s', (store) => {
  const t = useTestApp({ store });

  it('reports each bad record by index and imports the others', async () => {
    const good = rejectedRecord();
    const records = [
      openRecord('in_progress', { status: 'on_hold', status_history: [{ status: 'submitted', at: '2025-05-01T08:00:00.000Z' }] }),
      deliveredRecord({
        status_history: [
          { status: 'submitted', at: '2025-02-01T09:00:00.000Z' },
          { status: 'in_progress', at: '2025-02-03T08:00:00.000Z' },
          { status: 'delivered', at: '2025-02-02T16:30:00.000Z' },
        ],
      }),
      rejectedRecord({ receipt: 'aaa.bbb.ccc', deliverable_sha256: 'b'.repeat(64), receipt_issued_at: '2024-11-05T09:30:00.000Z' }),
      openRecord('submitted', { description: 'x'.repeat(5001), requester: 'r'.repeat(201) }),
      good,
      'not an object',
      openRecord('submitted', { task_id: 'task-2025-NOTHEX', created_at: '2025-05-01T08:00:00Z' }),
      deliveredRecord({
        status: 'accepted',
        status_history: [
          { status: 'submitted', at: '2025-02-01T09:00:00.000Z' },
          { status: 'accepted', at: '2025-02-01T10:00:00.000Z' },
        ],
      }),
      openRecord('submitted', {
        created_at: '2025-02-30T08:00:00.000Z',
        status_history: [{ status: 'submitted', at: '2025-02-30T08:00:00.000Z' }],
      }),
    ];
    const result = await importOk(t, records);
    expect(result.imported).toBe(1);
    expect(result.skipped).toBe(0);
    const byIndex = new Map(result.errors.map((e) => [e.index, e.details.join(' | ')]));
    expect([...byIndex.keys()].sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 5, 6, 7, 8]);
    expect(byIndex.get(0)).toMatch(/status must be one of/);
    expect(byIndex.get(1)).toMatch(/out of order/);
    expect(byIndex.get(2)).toMatch(/delivered tasks only/);
    expect(byIndex.get(3)).toMatch(/description/);
    expect(byIndex.get(3)).toMatch(/requester/);
    expect(byIndex.get(5)).toMatch(/JSON object/);
    expect(byIndex.get(6)).toMatch(/task_id/);
    expect(byIndex.get(6)).toMatch(/created_at/);
    expect(byIndex.get(7)).toMatch(/delivered tasks only/);
    expect(byIndex.get(8)).toMatch(/created_at/);
    expect((await fetch(`${t.url}/api/v1/tasks/${String(good.task_id)}`)).status).toBe(200);
    // Nothing of a refused record was kept.
    expect((await fetch(`${t.url}/api/v1/tasks/${String((records[1] as Record<string, unknown>).task_id)}`)).status).toBe(404);
  });

  it('refuses more than 1,000 records whole with 413, and a body that is not {tasks: [...]} with 400', async () => {
    const many = Array.from({ length: 1001 }, () => openRecord('submitted'));
    const res = await importTasks(t, { tasks: many });
    expect(res.status).toBe(413);
    const body = (await res.json()) as { error: string; message: string };
    expect(body.error).toBe('payload_too_large');
    expect(body.message).toMatch(/1000 task records per call/);
    expect((await fetch(`${t.url}/api/v1/tasks/${String(many[0]?.task_id)}`)).status).toBe(404);

    for (const bad of [{}, { tasks: 'x' }, []]) {
      const refused = await importTasks(t, bad);
      expect(refused.status).toBe(400);
      expect(((await refused.json()) as { error: string }).error).toBe('malformed_request');
    }
    const notJson = await importTasks(t, '{"tasks": [');
    expect(notJson.status).toBe(400);
  });

  it('takes a body over 64 KB (its own 10 MB limit) but not over 10 MB', async () => {
    const big = Array.from({ length: 40 }, () => deliveredRecord({ operator_notes: 'n'.repeat(4000) }));
    expect((await importOk(t, big)).imported).toBe(40);
    const huge = await importTasks(t, { tasks: [{ description: 'x'.repeat(11 * 1024 * 1024) }] });
    expect(huge.status).toBe(413);
    expect(((await huge.json()) as { error: string }).error).toBe('payload_too_large');
  });

  it('needs the admin key', async () => {
    const res = await importTasks(t, { tasks: [openRecord()] }, {});
    expect(res.status).toBe(401);
    const wrong = await importTasks(t, { tasks: [openRecord()] }, { authorization: 'Bearer not-the-key-000000000' });
    expect(wrong.status).toBe(401);
  });

  it('keeps the transition table for imported tasks: a retired status cannot be delivered directly or set by PATCH', async () => {
    const record = openRecord('under_review');
    await importOk(t, [record]);
    const id = String(record.task_id);
    const direct = await patch(t, id, { status: 'delivered', operator_notes: 'done' });
    expect(direct.status).toBe(409);
    expect(await direct.json()).toMatchObject({ error: 'invalid_transition', from: 'under_review', to: 'delivered' });
    const retired = await patch(t, id, { status: 'in_progress' });
    expect([409, 422]).toContain(retired.status);
  });
});
