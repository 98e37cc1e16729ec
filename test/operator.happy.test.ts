import { describe, expect, it } from 'vitest';
import { adminGet, type Json, patch, patchOk, submit, taskIn } from './operator.support.js';
import { postJson, STORES, TestClock, useTestApp } from './support/app.js';

describe.each(STORES)('operator admin API on %s', (store) => {
  const clock = new TestClock('2030-03-10T10:00:00.000Z');
  const t = useTestApp({ store, clock });

  it('lists the queue newest first, with what only the operator sees', async () => {
    const older = await submit(t, { requester: 'queue-a' });
    clock.advance(60_000);
    const newer = await submit(t, { requester: 'queue-b', delivery: 'status_poll', contact_email: undefined });
    const res = await adminGet(t, '/api/v1/admin/tasks?limit=2');
    expect(res.status).toBe(200);
    expect(res.headers.get('www-authenticate')).toBeNull();
    const body = (await res.json()) as { tasks: Json[]; next_cursor: string | null };
    expect(body.tasks.map((x) => x.task_id)).toEqual([newer, older]);
    expect(body.tasks[0]).toMatchObject({ delivery: 'status_poll', contact_email: null, email_unverified: false, status: 'submitted' });
    expect(body.tasks[1]).toMatchObject({ delivery: 'email', contact_email: 'agent@mail.example-agent.dev', accepted_at: null });
    expect(typeof body.tasks[1]?.request_sha256).toBe('string');
    // The queue is a list, not a view: it does not stamp seen_by_operator_at.
    expect(body.tasks[1]?.seen_by_operator_at).toBeNull();
  });

  it('pages through the queue with an opaque cursor and filters by status', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      clock.advance(1000);
      ids.push(await taskIn(t, i % 2 === 0 ? 'accepted' : 'submitted', { requester: `page-${i}` }));
    }
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const query: string = `/api/v1/admin/tasks?status=accepted&limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
      const page = (await (await adminGet(t, query)).json()) as { tasks: Json[]; next_cursor: string | null };
      expect(page.tasks.length).toBeLessThanOrEqual(2);
      for (const task of page.tasks) {
        expect(task.status).toBe('accepted');
        seen.push(String(task.task_id));
      }
      cursor = page.next_cursor;
    } while (cursor);
    expect(seen).toEqual([ids[4], ids[2], ids[0]]);

    const open = (await (await adminGet(t, '/api/v1/admin/tasks?status=open&limit=200')).json()) as { tasks: Json[] };
    expect(open.tasks.every((x) => x.status === 'submitted' || x.status === 'accepted')).toBe(true);
    expect(open.tasks.map((x) => x.task_id)).toEqual(expect.arrayContaining(ids));
  });

  it('stamps seen_by_operator_at on the first view only', async () => {
    const id = await submit(t);
    clock.advance(5 * 60_000);
    const first = (await (await adminGet(t, `/api/v1/admin/tasks/${id}`)).json()) as Json;
    const stamp = clock.now().toISOString();
    expect(first.seen_by_operator_at).toBe(stamp);
    clock.advance(60_000);
    const second = (await (await adminGet(t, `/api/v1/admin/tasks/${id}`)).json()) as Json;
    expect(second.seen_by_operator_at).toBe(stamp);
    const pub = (await (await fetch(`${t.url}/api/v1/tasks/${id}`)).json()) as Json;
    expect(pub.seen_by_operator_at).toBe(stamp);
    expect(pub).not.toHaveProperty('contact_email');
  });

  it('stamps once when several views race', async () => {
    const id = await submit(t);
    const views = await Promise.all(
      Array.from({ length: 6 }, async (_, i) => {
        clock.advance(i * 1000);
        return (await (await adminGet(t, `/api/v1/admin/tasks/${id}`)).json()) as Json;
      }),
    );
    const stamps = new Set(views.map((v) => v.seen_by_operator_at));
    expect(stamps.size).toBe(1);
    const row = await t.store.db.selectFrom('tasks').select('seen_by_operator_at').where('id', '=', id).executeTakeFirstOrThrow();
    expect(stamps.has(row.seen_by_operator_at)).toBe(true);
  });

  it('accepts with an ETA, then delivers with the deliverable and a receipt', async () => {
    const id = await submit(t, { delivery: 'status_poll', contact_email: undefined });
    clock.advance(60_000);
    const acceptedAt = clock.now().toISOString();
    const accepted = await patchOk(t, id, { status: 'accepted', eta: '2030-03-12T18:00:00+01:00' });
    expect(accepted).toMatchObject({
      status: 'accepted',
      eta: '2030-03-12T17:00:00.000Z',
      accepted_at: acceptedAt,
      updated_at: acceptedAt,
      // Changing a task implies having seen it.
      seen_by_operator_at: acceptedAt,
    });
    expect(accepted.status_history).toEqual([
      { status: 'submitted', at: expect.any(String) },
      { status: 'accepted', at: acceptedAt },
    ]);

    clock.advance(3600_000);
    const notes = 'Open Sundays 8:00–12:00. Photo of the sign: attached by e-mail. ✓';
    const deliveredAt = clock.now().toISOString();
    const delivered = await patchOk(t, id, { status: 'delivered', operator_notes: notes });
    expect(delivered).toMatchObject({ status: 'delivered', operator_notes: notes, delivered_at: deliveredAt, receipt_issued_at: deliveredAt });
    expect(delivered.receipt).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);

    const pub = (await (await fetch(`${t.url}/api/v1/tasks/${id}`)).json()) as Json;
    expect(pub).toMatchObject({
      status: 'delivered',
      operator_notes: notes,
      receipt: delivered.receipt,
      receipt_issued_at: deliveredAt,
      eta: '2030-03-12T17:00:00.000Z',
    });
    expect(pub.deliverable_sha256).toMatch(/^[0-9a-f]{64}$/);
    expect((pub.status_history as Json[]).map((h) => h.status)).toEqual(['submitted', 'accepted', 'delivered']);
  });

  it('delivers with notes saved earlier while the task was open', async () => {
    const id = await taskIn(t, 'accepted');
    const draft = await patchOk(t, id, { operator_notes: 'Draft: visited at 9:00.' });
    expect(draft).toMatchObject({ status: 'accepted', operator_notes: 'Draft: visited at 9:00.' });
    const edited = await patchOk(t, id, { operator_notes: 'Visited at 9:00; open.' });
    expect(edited.operator_notes).toBe('Visited at 9:00; open.');
    const delivered = await patchOk(t, id, { status: 'delivered' });
    expect(delivered).toMatchObject({ status: 'delivered', operator_notes: 'Visited at 9:00; open.' });
  });

  it('moves an ETA while accepted', async () => {
    const id = await taskIn(t, 'accepted');
    const moved = await patchOk(t, id, { eta: '2030-04-01T09:00:00Z' });
    expect(moved).toMatchObject({ status: 'accepted', eta: '2030-04-01T09:00:00.000Z' });
  });

  it('rejects from submitted and from accepted with a reason', async () => {
    const a = await submit(t);
    const ra = await patchOk(t, a, { status: 'rejected', operator_notes: 'Privacy-invasive: asks to identify a person.' });
    expect(ra).toMatchObject({ status: 'rejected', operator_notes: 'Privacy-invasive: asks to identify a person.', rejected_at: clock.now().toISOString() });
    expect(ra).not.toHaveProperty('receipt');

    const b = await taskIn(t, 'accepted');
    const rb = await patchOk(t, b, { status: 'rejected' });
    expect(rb).toMatchObject({ status: 'rejected', operator_notes: null });
    expect((rb.status_history as Json[]).map((h) => h.status)).toEqual(['submitted', 'accepted', 'rejected']);
  });

  it('answers PATCH on both paths the same way', async () => {
    const id = await submit(t);
    const res = await patch(t, id, { status: 'accepted' }, { path: 'admin' });
    expect(res.status).toBe(200);
    expect(((await res.json()) as Json).status).toBe('accepted');
    const again = await patch(t, id, { status: 'delivered', operator_notes: 'done' }, { path: 'public' });
    expect(again.status).toBe(200);
  });

  it('queues the requester mail in the same transaction as the transition', async () => {
    const id = await submit(t);
    await patchOk(t, id, { status: 'accepted' });
    const mails = await t.store.db.selectFrom('outbox').select(['kind', 'recipient']).where('task_id', '=', id).execute();
    expect(mails).toContainEqual({ kind: 'task_accepted', recipient: 'agent@mail.example-agent.dev' });
  });

  it('lists messages newest first with the task ids they name, and shows them on the task', async () => {
    const id = await submit(t);
    clock.advance(1000);
    const first = await postJson(`${t.url}/api/v1/messages`, {
      message: `Please withdraw ${id}, no longer needed.`,
      reply_to: 'agent@mail.example-agent.dev',
      from: 'planner',
      subject: 'Withdraw',
    });
    expect(first.status).toBe(201);
    clock.advance(1000);
    await postJson(`${t.url}/api/v1/messages`, { message: 'A general question about coverage.', reply_to: 'agent@mail.example-agent.dev' });

    const list = (await (await adminGet(t, '/api/v1/admin/messages?limit=2')).json()) as { messages: Json[]; next_cursor: string | null };
    expect(list.messages).toHaveLength(2);
    expect(list.messages[0]).toMatchObject({ message: 'A general question about coverage.', task_ids: [], from: null, subject: null });
    expect(list.messages[1]).toMatchObject({ task_ids: [id], from: 'planner', subject: 'Withdraw', reply_to: 'agent@mail.example-agent.dev' });

    expect(list.next_cursor).toBeNull();
    const one = (await (await adminGet(t, '/api/v1/admin/messages?limit=1')).json()) as { messages: Json[]; next_cursor: string };
    const next = (await (await adminGet(t, `/api/v1/admin/messages?limit=1&cursor=${encodeURIComponent(one.next_cursor)}`)).json()) as { messages: Json[] };
    expect(next.messages.map((m) => m.message_id)).toEqual([list.messages[1]?.message_id]);

    const detail = (await (await adminGet(t, `/api/v1/admin/tasks/${id}`)).json()) as { messages: Json[] };
    expect(detail.messages.map((m) => m.message)).toEqual([`Please withdraw ${id}, no longer needed.`]);
  });

  it('reports stats: counts, open queue, time to first view and to acceptance, daily caps', async () => {
    const res = await adminGet(t, '/api/v1/admin/stats');
    expect(res.status).toBe(200);
    const stats = (await res.json()) as {
      window_days: number;
      counts_by_status: Record<string, number>;
      open_queue: number;
      time_to_first_view_seconds: { median: number | null; samples: number };
      time_to_acceptance_seconds: { median: number | null; p90: number | null; samples: number };
      daily_caps: { tasks: { used: number; cap: number; remaining: number }; resets_at: string };
    };
    const all = (await (await adminGet(t, '/api/v1/admin/tasks?limit=200')).json()) as { tasks: Json[] };
    const count = (s: string) => all.tasks.filter((x) => x.status === s).length;
    expect(stats.window_days).toBe(30);
    expect(stats.counts_by_status).toMatchObject({
      submitted: count('submitted'),
      accepted: count('accepted'),
      delivered: count('delivered'),
      rejected: count('rejected'),
      under_review: 0,
      in_progress: 0,
    });
    expect(stats.open_queue).toBe(count('submitted') + count('accepted'));
    expect(stats.time_to_first_view_seconds.samples).toBeGreaterThan(0);
    expect(stats.time_to_acceptance_seconds.samples).toBe(all.tasks.filter((x) => x.accepted_at !== null).length);
    expect(stats.time_to_acceptance_seconds.median).toBeGreaterThanOrEqual(0);
    expect(stats.daily_caps.resets_at).toMatch(/T00:00:00.000Z$/);
    expect(stats.daily_caps.tasks.cap).toBeGreaterThan(0);

    const narrow = (await (await adminGet(t, '/api/v1/admin/stats?days=1')).json()) as { window_days: number };
    expect(narrow.window_days).toBe(1);
  });
});
