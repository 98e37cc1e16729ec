import { createHash } from 'node:crypto';
import type { JSONWebKeySet } from 'jose';
import { describe, expect, it } from 'vitest';
import { verifyReceipt } from '../src/receipts/verify.js';
import { integrateLog } from '../src/services/receipt-log/receipt-log.js';
import { runRetention } from '../src/services/runtime/retention.js';
import { insertLeaves } from '../src/store/receipt-log/receipt-log-repo.js';
import { findTask } from '../src/store/tasks/tasks-repo.js';
import { storedRows, uploadOk } from './attachments.support.js';
import { signIn } from './console.support.js';
import { adminGet, type Json, patchOk, submit } from './operator.support.js';
import { postJson, STORES, TestClock, useTestApp, validTask } from './support/app.js';

const DAY = 86_400_000;
const CONTACT = 'agent@mail.example-agent.dev';
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

describe.each(STORES)('retention on %s', (store) => {
  const clock = new TestClock('2030-01-01T10:00:00.000Z');
  const t = useTestApp({ store, clock, env: { RETENTION_DAYS: '90', SENT_MAIL_RETENTION_DAYS: '7' } });

  it('erases private fields of tasks final for longer than RETENTION_DAYS; receipts, hashes and timeline stay verifiable', async () => {
    // Day 0: a task delivered, one rejected, one left open, a message, an idempotent submission.
    const delivered = await submit(t, { contact_email: CONTACT });
    await patchOk(t, delivered, { status: 'accepted' });
    await uploadOk(t, delivered, 'Photo notes: sign on the door says open 8-12.', { type: 'text/plain', name: 'notes.txt' });
    const before = await patchOk(t, delivered, { status: 'delivered', operator_notes: 'Open on Sundays 8-12.' });
    const rejected = await submit(t, { contact_email: CONTACT });
    await patchOk(t, rejected, { status: 'rejected', operator_notes: 'Out of area.' });
    const open = await submit(t, { contact_email: CONTACT });
    const message = await postJson(`${t.url}/api/v1/messages`, { message: `A question about ${delivered}, thanks.`, reply_to: CONTACT });
    expect(message.status).toBe(201);
    const keyed = await postJson(`${t.url}/api/v1/tasks`, validTask(), { 'idempotency-key': 'retention-key-1' });
    expect(keyed.status).toBe(202);
    // An automatic block that ends tomorrow, and a permanent one.
    for (const [id, expires] of [
      ['blk-expiring', '2030-01-02T10:00:00.000Z'],
      ['blk-permanent', null],
    ] as const) {
      await t.store.db
        .insertInto('blocklist')
        .values({ id, kind: 'requester', value: id, reason: null, source: 'auto', created_at: clock.now().toISOString(), expires_at: expires })
        .execute();
    }
    // A callback URL, as the webhook feature stores it.
    await t.store.db.updateTable('tasks').set({ callback_url: 'https://hooks.example-agent.dev/in' }).where('id', 'in', [delivered, open]).execute();
    // The mail those changes queued, as if the worker had sent it on day 0.
    await t.store.db.updateTable('outbox').set({ status: 'sent', sent_at: clock.now().toISOString() }).execute();

    // Day 80: another task becomes final; it must survive the day-91 run.
    clock.advance(80 * DAY);
    const recent = await submit(t, { contact_email: CONTACT });
    await patchOk(t, recent, { status: 'rejected', operator_notes: 'Duplicate.' });

    clock.advance(11 * DAY);
    const run = await runRetention(t.deps);
    expect(run).toMatchObject({ retention_days: 90, erased_tasks: 2, erased_messages: 1, deleted_idempotency_records: 1, deleted_expired_blocks: 1 });
    const blocks = await t.store.db.selectFrom('blocklist').select('id').execute();
    expect(blocks.map((b) => b.id)).toEqual(['blk-permanent']);
    expect(run?.deleted_sent_mail).toBeGreaterThanOrEqual(2);
    expect(run?.deleted_counters).toBeGreaterThan(0);

    for (const id of [delivered, rejected]) {
      const row = await findTask(t.store.db, id);
      expect(row?.contact_email).toBeNull();
      expect(row?.callback_url).toBeNull();
      expect(row?.erased_at).toBe(clock.now().toISOString());
      // The request hash the receipt binds can still be re-derived from what is kept.
      expect(sha256(String(row?.request_json))).toBe(row?.request_sha256);
    }
    for (const id of [open, recent]) expect((await findTask(t.store.db, id))?.contact_email).toBe(CONTACT);
    // The attached file and its bytes are gone; the receipt still lists its name and hash.
    expect(await storedRows(t)).toEqual({ chunks: 0, blobs: 0, attachments: 0 });
    expect((await findTask(t.store.db, open))?.callback_url).toBe('https://hooks.example-agent.dev/in');

    // The public record is unchanged, and its receipt verifies against the published keys.
    const pub = (await (await fetch(`${t.url}/api/v1/tasks/${delivered}`)).json()) as Json;
    expect(pub.receipt).toBe(before.receipt);
    expect(pub.deliverable_sha256).toBe(before.deliverable_sha256);
    expect(pub.status_history).toEqual(before.status_history);
    const jwks = (await (await fetch(`${t.url}/.well-known/jwks.json`)).json()) as JSONWebKeySet;
    const verdict = await verifyReceipt(String(pub.receipt), { jwks, expectedTaskId: delivered, operatorNotes: 'Open on Sundays 8-12.' });
    expect(verdict.valid).toBe(true);
    expect(verdict.payload?.request_sha256).toBe((await findTask(t.store.db, delivered))?.request_sha256);

    // The message's text and address are gone; the row (and the task it named) remain.
    const messages = (await (await adminGet(t, '/api/v1/admin/messages')).json()) as { messages: Json[] };
    const erased = messages.messages.find((m) => JSON.stringify(m.task_ids) === JSON.stringify([delivered]));
    expect(erased).toMatchObject({ message: '', reply_to: '' });

    // The idempotency key is forgotten: the same key is a fresh submission now.
    const again = await postJson(`${t.url}/api/v1/tasks`, validTask(), { 'idempotency-key': 'retention-key-1' });
    expect(again.status).toBe(202);

    // The last run is in the stats.
    const stats = (await (await adminGet(t, '/api/v1/admin/stats')).json()) as Json;
    expect(stats.retention).toMatchObject({ ran_at: clock.now().toISOString(), erased_tasks: 2, erased_messages: 1 });

    // A second run finds nothing left to erase.
    expect(await runRetention(t.deps)).toMatchObject({ erased_tasks: 0, erased_messages: 0, deleted_idempotency_records: 0 });
  });

  it('tells agents what is erased and when, in llms.txt', async () => {
    const text = await (await fetch(`${t.url}/llms.txt`)).text();
    expect(text).toContain('contact e-mails, callback URLs, message texts and attachments are erased 90 days after a task is delivered or rejected');
  });

  it('keeps failed mail until the operator clears it', async () => {
    clock.advance(DAY);
    await submit(t);
    await t.store.db.updateTable('outbox').set({ status: 'failed', last_error: 'test' }).where('status', '=', 'pending').execute();
    clock.advance(400 * DAY);
    await runRetention(t.deps);
    const failed = (await (await adminGet(t, '/api/v1/admin/outbox?status=failed')).json()) as { outbox: Json[] };
    expect(failed.outbox.length).toBeGreaterThan(0);
    expect(failed.outbox.every((row) => row.status === 'failed')).toBe(true);
  });
});

describe('the console stats page shows the last retention run', () => {
  const clock = new TestClock('2030-01-01T10:00:00.000Z');
  const t = useTestApp({ clock });

  it('says it has not run yet, then what the last run erased', async () => {
    // Signed in afresh each time: the clock jumps past the session's lifetime.
    const page = async () => (await fetch(`${t.url}/operator/stats`, { headers: { cookie: (await signIn(t)).cookie } })).text();
    expect(await page()).toContain('Not run yet');
    await patchOk(t, await submit(t), { status: 'rejected', operator_notes: 'Out of area.' });
    clock.advance(100 * DAY);
    await runRetention(t.deps);
    expect(await page()).toMatch(/Last run .*: 1 tasks and 0 messages erased \(final for over 90 days\)/);
  });
});

describe.each(STORES)('retention of receipt-log checkpoints on %s', (store) => {
  const t = useTestApp({ store });

  it('deletes every checkpoint but the latest; proofs, consistency and the next checkpoint are unchanged', async () => {
    const id = await submit(t);
    await patchOk(t, id, { status: 'accepted' });
    await patchOk(t, id, { status: 'delivered', operator_notes: 'Open from 8.' });
    await integrateLog(t.deps);
    // Five more integrations, each signing a checkpoint.
    for (let i = 0; i < 5; i++) {
      await insertLeaves(t.store.db, [{ taskId: null, data: `other ${i}`, createdAt: new Date().toISOString() }]);
      await integrateLog(t.deps);
    }
    const seqs = async () => (await t.store.db.selectFrom('log_checkpoints').select('seq').orderBy('seq').execute()).map((r) => Number(r.seq));
    const before = await seqs();
    expect(before.length).toBeGreaterThanOrEqual(6);
    const checkpoint = await (await fetch(`${t.url}/log/checkpoint`)).text();
    const proof = await (await fetch(`${t.url}/api/v1/tasks/${id}/receipt-proof`)).text();

    const run = await runRetention(t.deps);
    expect(run?.deleted_log_checkpoints).toBe(before.length - 1);
    expect(await seqs()).toEqual([before.at(-1)]);
    // What is served reads only the latest: the same bytes, and consistency from any older size.
    expect(await (await fetch(`${t.url}/log/checkpoint`)).text()).toBe(checkpoint);
    expect(await (await fetch(`${t.url}/api/v1/tasks/${id}/receipt-proof`)).text()).toBe(proof);
    const consistency = await fetch(`${t.url}/log/consistency?from=1`);
    expect(consistency.status).toBe(200);
    expect(await consistency.text()).toContain(checkpoint);
    // A second run finds nothing; the next integration signs the next checkpoint.
    expect((await runRetention(t.deps))?.deleted_log_checkpoints).toBe(0);
    await insertLeaves(t.store.db, [{ taskId: null, data: 'after', createdAt: new Date().toISOString() }]);
    await integrateLog(t.deps);
    expect(await seqs()).toEqual([before.at(-1), (before.at(-1) as number) + 1]);
    const stats = (await (await adminGet(t, '/api/v1/admin/stats')).json()) as Json;
    expect(stats.retention).toMatchObject({ deleted_log_checkpoints: 0 });
  });
});
