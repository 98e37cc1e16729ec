import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { deliveredRecord, foreignReceipt, importOk, type Json, openRecord, rejectedRecord } from './import.support.js';
import { adminGet } from './operator.support.js';
import { postJson, STORES, useTestApp } from './support/app.js';

/**
 * The reference deployment's own records (issue 29, finding 3): its ids are `HFAI-2026-<16 hex>`,
 * with an upper-case prefix, and the import refused every one. They import, kept exactly as
 * given; a message naming one, in any case, is linked to it; reading a task stays exact.
 */

const hfaiId = () => `HFAI-2026-${randomBytes(8).toString('hex')}`;

describe.each(STORES)('importing HFAI-2026-… records on %s', (store) => {
  const t = useTestApp({ store });

  it('imports them with retired statuses and receipts kept as given, and reads them back by the exact id only', async () => {
    const delivered = deliveredRecord({ task_id: hfaiId() });
    delivered.receipt = foreignReceipt(String(delivered.task_id));
    const records = [
      delivered,
      rejectedRecord({ task_id: hfaiId() }),
      openRecord('under_review', { task_id: hfaiId() }),
      openRecord('in_progress', { task_id: `Hfai-2026-${randomBytes(8).toString('hex')}` }),
    ];
    expect(await importOk(t, records)).toEqual({ imported: 4, skipped: 0, errors: [] });
    for (const record of records) {
      const id = String(record.task_id);
      const res = await fetch(`${t.url}/api/v1/tasks/${id}`);
      expect(res.status).toBe(200);
      const body = (await res.json()) as Json;
      expect(body.task_id).toBe(id);
      expect(body.status).toBe(record.status);
      expect(body.status_history).toEqual(record.status_history);
      // Lookups stay exact: the same id in another case names no task.
      expect((await fetch(`${t.url}/api/v1/tasks/${id.toLowerCase()}`)).status).toBe(404);
    }
    const read = (await (await fetch(`${t.url}/api/v1/tasks/${String(delivered.task_id)}`)).json()) as Json;
    expect(read.receipt).toBe(delivered.receipt);
    expect(read.deliverable_sha256).toBe(delivered.deliverable_sha256);
    expect(read.receipt_issued_at).toBe(delivered.receipt_issued_at);
    expect(await importOk(t, records)).toEqual({ imported: 0, skipped: 4, errors: [] });
  });

  it('links a withdrawal message naming one, in any case, to the task as stored', async () => {
    const record = openRecord('in_progress', { task_id: hfaiId() });
    await importOk(t, [record]);
    const id = String(record.task_id);
    const named = `hfai-2026-${id.slice('HFAI-2026-'.length).toUpperCase()}`;
    const sent = await postJson(`${t.url}/api/v1/messages`, {
      subject: 'Please withdraw my task',
      message: `Please withdraw task ${named}; we no longer need it.`,
      reply_to: 'agent@mail.example-agent.dev',
    });
    expect(sent.status).toBe(201);
    const detail = (await (await adminGet(t, `/api/v1/admin/tasks/${id}`)).json()) as { messages: { task_ids: string[]; subject: string }[] };
    expect(detail.messages).toHaveLength(1);
    expect(detail.messages[0]?.task_ids).toEqual([id]);
    // A name that folds to no imported id links nothing.
    const stray = await postJson(`${t.url}/api/v1/messages`, {
      message: `What about HFAI-2026-${'0'.repeat(16)}, is that one done?`,
      reply_to: 'agent@mail.example-agent.dev',
    });
    expect(stray.status).toBe(201);
  });
});
