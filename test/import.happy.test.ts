import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { deliveredRecord, FOREIGN_ISS, importOk, type Json, openRecord, rejectedRecord } from './import.support.js';
import { adminGet, patchOk } from './operator.support.js';
import { STORES, useTestApp } from './support/app.js';

/** The public fields of a record, as GET /api/v1/tasks/{id} must return them. */
const PUBLIC_FIELDS = [
  'task_id',
  'status',
  'task_type',
  'description',
  'location_required',
  'location_detail',
  'deadline',
  'output_format',
  'requester',
  'source',
  'created_at',
  'updated_at',
  'status_history',
  'operator_notes',
  'seen_by_operator_at',
  'eta',
  'receipt',
  'deliverable_sha256',
  'receipt_issued_at',
];
const pick = (record: Json) => Object.fromEntries(PUBLIC_FIELDS.filter((f) => f in record).map((f) => [f, record[f]]));

describe.each(STORES)('task import on %s', (store) => {
  const t = useTestApp({ store });

  it('imports delivered, rejected and open tasks with retired statuses, reads them back exactly, and skips them the second time', async () => {
    const records = [deliveredRecord(), rejectedRecord(), openRecord('under_review'), openRecord('in_progress')];
    expect(await importOk(t, records)).toEqual({ imported: 4, skipped: 0, errors: [] });

    for (const record of records) {
      const res = await fetch(`${t.url}/api/v1/tasks/${String(record.task_id)}`);
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject(pick(record));
    }
    const delivered = (await (await fetch(`${t.url}/api/v1/tasks/${String(records[0]?.task_id)}`)).json()) as Json;
    expect(delivered.receipt).toBe(records[0]?.receipt);
    expect(delivered.deliverable_sha256).toBe('a'.repeat(64));
    expect(delivered.receipt_issued_at).toBe('2025-02-03T16:30:00.000Z');

    expect(await importOk(t, records)).toEqual({ imported: 0, skipped: 4, errors: [] });
  });

  it('shows the retired statuses and the foreign receipt on the status page', async () => {
    const record = deliveredRecord();
    await importOk(t, [record]);
    const page = await (await fetch(`${t.url}/tasks?id=${String(record.task_id)}`)).text();
    expect(page).toContain('Under review');
    expect(page).toContain('In progress');
    // Nothing of it was checked here: the page says so, and never calls it signed or verified.
    expect(page).toContain('Carried over, not verified here.');
    expect(page).toContain(FOREIGN_ISS);
    const from = page.indexOf('id="receipt-heading"');
    const receiptSection = page.slice(from, page.indexOf('</section>', from));
    expect(receiptSection).toContain('Receipt (carried over)');
    expect(receiptSection).not.toMatch(/\bsigned\b/i);
    expect(receiptSection).not.toContain('<strong>Verified.</strong>');
    expect(receiptSection).not.toContain('data-receipt-check');
    const markdown = await (await fetch(`${t.url}/tasks?id=${String(record.task_id)}`, { headers: { accept: 'text/markdown' } })).text();
    expect(markdown).toContain('under_review');
  });

  it('puts imported open tasks in the queue; one in a retired status is accepted and delivered with a new receipt of this deployment', async () => {
    const record = openRecord('in_progress');
    await importOk(t, [record]);
    const id = String(record.task_id);
    const queue = (await (await adminGet(t, '/api/v1/admin/tasks?status=open&limit=200')).json()) as { tasks: Json[] };
    expect(queue.tasks.map((task) => task.task_id)).toContain(id);
    const statusPage = await (await fetch(`${t.url}/tasks?id=${id}`)).text();
    expect(statusPage).toContain('In progress (a status from before this service)');
    const admin = (await (await adminGet(t, `/api/v1/admin/tasks/${id}`)).json()) as Json;
    expect(admin).toMatchObject({ delivery: 'status_poll', contact_email: null, status: 'in_progress' });

    await patchOk(t, id, { status: 'accepted' });
    const notes = 'Two of the three summaries contain errors; details attached.';
    const done = await patchOk(t, id, { status: 'delivered', operator_notes: notes });
    expect(done.status).toBe('delivered');
    expect((done.status_history as Json[]).map((h) => h.status)).toEqual(['submitted', 'in_progress', 'accepted', 'delivered']);
    const receipt = String(done.receipt);
    const payload = JSON.parse(Buffer.from(receipt.split('.')[1] ?? '', 'base64url').toString()) as Json;
    expect(payload.iss).toBe(t.config.baseUrl);
    expect(payload.task_id).toBe(id);
    expect(done.deliverable_sha256).toBe(createHash('sha256').update(notes).digest('hex'));
    const page = await (await fetch(`${t.url}/tasks?id=${id}`)).text();
    expect(page).not.toContain('Issued by another deployment');
  });

  it('keeps ids of other prefixes and reads them back', async () => {
    const record = rejectedRecord({ task_id: `legacy-2023-${'0123456789abcdef'.repeat(2)}` });
    expect(await importOk(t, [record])).toMatchObject({ imported: 1 });
    const res = await fetch(`${t.url}/api/v1/tasks/${String(record.task_id)}`);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject(pick(record));
  });
});

describe('the import in the OpenAPI document', () => {
  const t = useTestApp({});
  it('documents the import endpoint and all six statuses of stored tasks', async () => {
    const doc = (await (await fetch(`${t.url}/openapi.json`)).json()) as { paths: Record<string, Record<string, Json>> };
    const post = doc.paths['/api/v1/admin/tasks/import']?.post;
    expect(post?.operationId).toBe('adminImportTasks');
    expect(JSON.stringify(post)).toContain('1000 records');
    const text = JSON.stringify(doc);
    expect(text).toMatch(/"enum":\["submitted","under_review","in_progress","accepted","delivered","rejected"\]/);
  });
});
