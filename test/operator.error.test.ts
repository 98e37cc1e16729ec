import { describe, expect, it } from 'vitest';
import { ALL_STATUSES } from '../src/domain/tasks/task.js';
import { ADMIN, adminGet, type Json, patch, patchOk, submit, taskIn } from './operator.support.js';
import { STORES, TestClock, useTestApp } from './support/app.js';

const ALLOWED = new Set([
  'submitted>accepted',
  'submitted>rejected',
  'accepted>delivered',
  'accepted>rejected',
  // Issue 19: a task imported in a retired status continues as a submitted one would.
  'under_review>accepted',
  'under_review>rejected',
  'in_progress>accepted',
  'in_progress>rejected',
]);
const BODY: Record<string, Json> = {
  accepted: { status: 'accepted' },
  delivered: { status: 'delivered', operator_notes: 'The deliverable.' },
  rejected: { status: 'rejected', operator_notes: 'Out of scope.' },
};

describe.each(STORES)('operator transitions and refusals on %s', (store) => {
  const clock = new TestClock('2030-03-10T10:00:00.000Z');
  const t = useTestApp({ store, clock });

  /** A task in `status`; the retired ones exist only in old data, so they are written directly. */
  async function taskInStatus(status: string): Promise<string> {
    if (status === 'under_review' || status === 'in_progress') {
      const id = await submit(t);
      await t.store.db.updateTable('tasks').set({ status }).where('id', '=', id).execute();
      return id;
    }
    return taskIn(t, status);
  }

  describe('every pair of statuses', () => {
    for (const from of ALL_STATUSES) {
      for (const to of ALL_STATUSES) {
        const allowed = ALLOWED.has(`${from}>${to}`);
        it(`${from} → ${to} is ${allowed ? 'allowed' : 'refused with 409 invalid_transition'}`, async () => {
          const id = await taskInStatus(from);
          const before = await t.store.db.selectFrom('tasks').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
          const res = await patch(t, id, BODY[to] ?? { status: to });
          if (allowed) {
            expect(res.status).toBe(200);
            expect(((await res.json()) as Json).status).toBe(to);
            return;
          }
          expect(res.status).toBe(409);
          const body = (await res.json()) as Json;
          expect(body).toMatchObject({ error: 'invalid_transition', from, to });
          expect(typeof body.message).toBe('string');
          const after = await t.store.db.selectFrom('tasks').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
          expect(after).toEqual(before);
        });
      }
    }
  });

  it('never lets two racing operators both move a task', async () => {
    const id = await submit(t);
    const results = await Promise.all(['2030-04-01', '2030-04-02', '2030-04-03'].map((day) => patch(t, id, { status: 'accepted', eta: `${day}T12:00:00Z` })));
    const codes = results.map((r) => r.status).sort();
    expect(codes).toEqual([200, 409, 409]);
    const row = await t.store.db.selectFrom('tasks').select(['status', 'status_history']).where('id', '=', id).executeTakeFirstOrThrow();
    expect(JSON.parse(row.status_history)).toHaveLength(2);
  });

  it('freezes operator_notes and eta once delivered or rejected', async () => {
    const delivered = await taskIn(t, 'delivered');
    for (const body of [{ operator_notes: 'changed' }, { eta: '2031-01-01T00:00:00Z' }, { operator_notes: null }]) {
      const res = await patch(t, delivered, body);
      expect(res.status).toBe(409);
      expect(await res.json()).toMatchObject({ error: 'invalid_transition', from: 'delivered', to: 'delivered' });
    }
    const rejected = await taskIn(t, 'rejected');
    const res = await patch(t, rejected, { operator_notes: 'changed' });
    expect(await res.json()).toMatchObject({ error: 'invalid_transition', from: 'rejected', to: 'rejected' });
    const task = (await (await fetch(`${t.url}/api/v1/tasks/${delivered}`)).json()) as Json;
    expect(task.operator_notes).toBe('The bakery is open 8:00–12:00 on Sundays.');
  });

  it('refuses to deliver without a deliverable (422), leaving the task accepted', async () => {
    const id = await taskIn(t, 'accepted');
    for (const body of [{ status: 'delivered' }, { status: 'delivered', operator_notes: '   ' }, { status: 'delivered', operator_notes: null }]) {
      const res = await patch(t, id, body);
      expect(res.status).toBe(422);
      const err = (await res.json()) as { error: string; details: string[] };
      expect(err.error).toBe('validation_failed');
      expect(err.details[0]).toMatch(/^operator_notes is required to deliver/);
    }
    expect(((await (await adminGet(t, `/api/v1/admin/tasks/${id}`)).json()) as Json).status).toBe('accepted');
  });

  it('lists every malformed field at once (422), each naming its field', async () => {
    const id = await submit(t);
    const res = await patch(t, id, { status: 'done', eta: 'tomorrow', operator_notes: 42, notes: 'typo' });
    expect(res.status).toBe(422);
    const body = (await res.json()) as { error: string; details: string[] };
    expect(body.error).toBe('validation_failed');
    expect(body.details).toEqual([
      'notes is not a field of this request (use status, eta, operator_notes, result, assignee, assertion)',
      'status must be one of: submitted, accepted, delivered, rejected',
      'eta must be an ISO 8601 date-time, e.g. 2030-01-31T17:00:00Z',
      'operator_notes must be a string',
    ]);
  });

  it('refuses an empty change, an ETA in the past, an ETA without acceptance and overlong notes', async () => {
    const id = await submit(t);
    const cases: [Json, string][] = [
      [{}, 'send at least one of status, eta, operator_notes, result, assignee'],
      [{ status: 'accepted', eta: '2030-03-10T09:00:00Z' }, 'eta must be in the future'],
      [{ eta: '2030-04-01T00:00:00Z' }, 'eta can only be set when accepting the task or while it is accepted'],
      [{ status: 'rejected', eta: '2030-04-01T00:00:00Z' }, 'eta can only be set when accepting the task or while it is accepted'],
      [{ operator_notes: 'x'.repeat(50_001) }, 'operator_notes must be at most 50000 characters'],
      [{ eta: '2030-02-30T10:00:00Z', status: 'accepted' }, 'eta must be an ISO 8601 date-time, e.g. 2030-01-31T17:00:00Z'],
    ];
    for (const [body, detail] of cases) {
      const res = await patch(t, id, body);
      expect(res.status, JSON.stringify(body).slice(0, 80)).toBe(422);
      expect(((await res.json()) as { details: string[] }).details).toEqual([detail]);
    }
    expect(((await (await adminGet(t, `/api/v1/admin/tasks/${id}`)).json()) as Json).status).toBe('submitted');
  });

  it('answers 404 task_not_found for an unknown task', async () => {
    const res = await patch(t, 'task-2030-00000000000000000000000000000000', { status: 'accepted' });
    expect(res.status).toBe(404);
    expect(((await res.json()) as Json).error).toBe('task_not_found');
    const view = await adminGet(t, '/api/v1/admin/tasks/task-2030-00000000000000000000000000000000');
    expect(view.status).toBe(404);
    expect(((await view.json()) as Json).error).toBe('task_not_found');
  });

  it('answers 400 for a body that is not JSON or not an object, and 415 for a form', async () => {
    const id = await submit(t);
    const bad = await patch(t, id, '{"status":');
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as Json).error).toBe('invalid_json');
    const array = await patch(t, id, [{ status: 'accepted' }]);
    expect(array.status).toBe(400);
    expect(((await array.json()) as Json).error).toBe('malformed_request');
    const form = await fetch(`${t.url}/api/v1/tasks/${id}`, {
      method: 'PATCH',
      headers: { ...ADMIN, 'content-type': 'application/x-www-form-urlencoded' },
      body: 'status=accepted',
    });
    expect(form.status).toBe(415);
    expect(((await form.json()) as Json).error).toBe('unsupported_media_type');
  });

  it('answers 400 malformed_request for a bad limit, status or days', async () => {
    for (const query of [
      '/api/v1/admin/tasks?limit=0',
      '/api/v1/admin/tasks?limit=201',
      '/api/v1/admin/tasks?limit=ten',
      '/api/v1/admin/tasks?status=done',
      '/api/v1/admin/messages?limit=-1',
      '/api/v1/admin/stats?days=0',
    ]) {
      const res = await adminGet(t, query);
      expect(res.status, query).toBe(400);
      const body = (await res.json()) as { error: string; details: string[] };
      expect(body.error).toBe('malformed_request');
      expect(body.details.length).toBeGreaterThan(0);
    }
  });

  it('refuses a tampered, forged or misplaced cursor with 400 invalid_cursor', async () => {
    for (let i = 0; i < 3; i++) await submit(t);
    const page = (await (await adminGet(t, '/api/v1/admin/tasks?limit=1')).json()) as { next_cursor: string };
    const cursor = page.next_cursor;
    const [body = '', mac = ''] = cursor.split('.');
    const forgedBody = Buffer.from(JSON.stringify(['2099-01-01T00:00:00.000Z', 'task-2099-ffffffffffffffffffffffffffffffff'])).toString('base64url');
    const flipped = `${mac.startsWith('A') ? 'B' : 'A'}${mac.slice(1)}`;
    // The MAC's last character carries 4 bits and 2 unused ones: a sibling with an unused bit set
    // decodes to the same bytes, yet it is an edited cursor all the same.
    const BASE64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const sibling = `${mac.slice(0, -1)}${BASE64URL[BASE64URL.indexOf(mac.slice(-1)) | 1]}`;
    expect(Buffer.from(sibling, 'base64url')).toEqual(Buffer.from(mac, 'base64url'));
    const bad = [`${forgedBody}.${mac}`, `${body}.${flipped}`, `${body}.${sibling}`, body, 'garbage', `${cursor}.x`, `${body}.`];
    for (const c of bad) {
      const res = await adminGet(t, `/api/v1/admin/tasks?limit=1&cursor=${encodeURIComponent(c)}`);
      expect(res.status, c).toBe(400);
      expect(((await res.json()) as Json).error).toBe('invalid_cursor');
    }
    // A cursor belongs to its list and filter.
    for (const path of ['/api/v1/admin/tasks?status=submitted&limit=1', '/api/v1/admin/messages?limit=1']) {
      const res = await adminGet(t, `${path}&cursor=${encodeURIComponent(cursor)}`);
      expect(res.status, path).toBe(400);
      expect(((await res.json()) as Json).error).toBe('invalid_cursor');
    }
    // The genuine one still works.
    expect((await adminGet(t, `/api/v1/admin/tasks?limit=1&cursor=${encodeURIComponent(cursor)}`)).status).toBe(200);
  });

  it('keeps the accepted task unchanged when the ETA is refused', async () => {
    const id = await taskIn(t, 'accepted');
    const before = await patchOk(t, id, { eta: '2030-05-01T00:00:00Z' });
    const res = await patch(t, id, { eta: '2020-01-01T00:00:00Z' });
    expect(res.status).toBe(422);
    const after = (await (await adminGet(t, `/api/v1/admin/tasks/${id}`)).json()) as Json;
    expect(after.eta).toBe(before.eta);
  });
});
