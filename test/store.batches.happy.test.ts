import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { activeBlocksMatching, insertBlock } from '../src/store/abuse-control/blocklist-repo.js';
import { addCounts, readCounters } from '../src/store/abuse-control/counters-repo.js';
import { findIdempotencyRecords, type IdempotencyRow, saveIdempotencyRecords } from '../src/store/abuse-control/idempotency-repo.js';
import { migrate, openStore, type Store } from '../src/store/db.js';
import { insertOutbox, markClaimedOutboxSent } from '../src/store/delivery/outbox-repo.js';
import { padded, powerOfTwoSizes, WRITE_CHUNK_MAX } from '../src/store/sqlite/batches.js';
import { findByDedupeKeys, insertTasks, type TaskRow } from '../src/store/tasks/tasks-repo.js';
import { STORES } from './support/app.js';
import { createTestDatabase, type TestDatabase } from './support/databases.js';

/**
 * A batch's statements come in a few sizes (src/store/batches.ts): writes are cut into chunks of
 * powers of two on SQLite, IN lists are padded. Whatever the cut, every row of a batch is written
 * and every lookup finds exactly what it did before, on both stores.
 */

const AT = '2030-03-10T10:00:00.000Z';
const LATER = '2030-03-11T10:00:00.000Z';

function task(n: number): TaskRow {
  return {
    id: `tsk_batch_${String(n).padStart(4, '0')}`,
    status: 'new',
    task_type: 'data_collection',
    description: `Batch task ${n}: count the benches.`,
    dedupe_key: `dedupe-${n}`,
    location_required: 0,
    location_detail: null,
    deadline: null,
    output_format: 'text',
    budget_usd: null,
    requester: 'batch test',
    source: 'api',
    delivery: 'status_poll',
    contact_email: null,
    email_unverified: 0,
    client_hash: `client-${n % 7}`,
    created_at: AT,
    updated_at: AT,
    status_history: JSON.stringify([{ status: 'new', at: AT }]),
    operator_notes: null,
    seen_by_operator_at: null,
    eta: null,
    accepted_at: null,
    delivered_at: null,
    rejected_at: null,
    receipt: null,
    deliverable_sha256: null,
    receipt_issued_at: null,
    request_sha256: `sha-${n}`,
    request_json: '{}',
    callback_url: null,
    attachments: null,
    erased_at: null,
    is_test: 0,
    response_schema: null,
    questions: null,
    deadline_at: null,
    deadline_passed_at: null,
    due_at: null,
    agent_key_id: null,
    agent_directory: null,
    receipt_log_index: null,
    context_id: `ctx-2026-${'0'.repeat(32)}`,
    approvals_required: 1,
    approvals_given: 0,
    approval_round: 0,
    proposal: null,
    approval_returned: null,
  };
}

const range = (from: number, count: number) => Array.from({ length: count }, (_, i) => from + i);

describe('batch sizes', () => {
  it('cuts a write into powers of two, largest first, none over the maximum', () => {
    expect(powerOfTwoSizes(0, 64)).toEqual([]);
    expect(powerOfTwoSizes(1, 64)).toEqual([1]);
    expect(powerOfTwoSizes(37, 64)).toEqual([32, 4, 1]);
    expect(powerOfTwoSizes(150, 64)).toEqual([64, 64, 16, 4, 2]);
    expect(powerOfTwoSizes(256, 64)).toEqual([64, 64, 64, 64]);
    for (const n of range(0, 300)) expect(powerOfTwoSizes(n, WRITE_CHUNK_MAX).reduce((a, b) => a + b, 0)).toBe(n);
  });

  it('pads an IN list to the next power of two with its last value', () => {
    expect(padded([])).toEqual([]);
    expect(padded(['a'])).toEqual(['a']);
    expect(padded(['a', 'b', 'c'])).toEqual(['a', 'b', 'c', 'c']);
    expect(padded(range(1, 5))).toEqual([1, 2, 3, 4, 5, 5, 5, 5]);
    expect(padded(range(1, 64))).toHaveLength(64);
  });
});

describe.each(STORES)('batch statements on %s', (storeName) => {
  let store: Store;
  let dir: string;
  let database: TestDatabase | undefined;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'hts-batches-'));
    database = storeName === 'postgres' ? await createTestDatabase() : undefined;
    store = openStore(database?.url ?? `sqlite:${path.join(dir, 'service.db')}`);
    await migrate(store);
  });

  afterAll(async () => {
    await store?.close();
    await database?.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('stores every task of a batch larger than one chunk, and finds them by dedupe key', async () => {
    const rows = range(1, 150).map(task);
    await store.db.transaction().execute((trx) => insertTasks(trx, rows));
    const stored = await store.db.selectFrom('tasks').select(['id', 'description', 'client_hash']).where('id', 'like', 'tsk_batch_%').orderBy('id').execute();
    expect(stored).toEqual(rows.map((r) => ({ id: r.id, description: r.description, client_hash: r.client_hash })));

    // 37 keys, 3 of them unknown: exactly the 34 known tasks, newest first as before.
    const keys = [...range(1, 34).map((n) => `dedupe-${n * 4}`), 'dedupe-none-1', 'dedupe-none-2', 'dedupe-none-3'];
    const found = await findByDedupeKeys(store.db, keys, '2030-01-01T00:00:00.000Z');
    expect(found.map((m) => m.dedupe_key).sort()).toEqual(
      range(1, 34)
        .map((n) => `dedupe-${n * 4}`)
        .sort(),
    );
  });

  it('adds every counter of a batch larger than one chunk and returns every total', async () => {
    const counts = range(1, 100).map((n) => ({ key: `batch:${n}`, count: n, expiresAt: LATER }));
    const first = await addCounts(store.db, counts);
    expect(first.size).toBe(100);
    const second = await addCounts(store.db, counts);
    expect([...second].sort(([a], [b]) => a.localeCompare(b))).toEqual(
      counts.map((c) => [c.key, 2 * c.count]).sort(([a], [b]) => String(a).localeCompare(String(b))),
    );
    const read = await readCounters(store.db, [...counts.map((c) => c.key), 'batch:none']);
    expect(read.size).toBe(100);
    expect(read.get('batch:77')).toBe(154);
  });

  it('saves every Idempotency-Key record of a batch larger than one chunk, and finds each', async () => {
    const rows: IdempotencyRow[] = range(1, 70).map((n) => ({
      client_hash: `client-${n % 3}`,
      key: `key-${n}`,
      request_hash: `request-${n}`,
      status_code: 202,
      location: null,
      body: `{"n":${n}}`,
      task_id: null,
      created_at: AT,
      expires_at: LATER,
    }));
    await saveIdempotencyRecords(store.db, rows);
    const found = await findIdempotencyRecords(
      store.db,
      [...rows.map((r) => ({ clientHash: r.client_hash, key: r.key })), { clientHash: 'client-0', key: 'key-1' }],
      AT,
    );
    expect(found.map((r) => r.key).sort()).toEqual(rows.map((r) => r.key).sort());
  });

  it('queues every mail of a batch larger than one chunk; an id already queued wins', async () => {
    const mail = (n: number, subject: string) => ({
      id: `mail-batch-${n}`,
      kind: 'task_submitted',
      recipient: 'operator@example-agent.dev',
      reply_to: null,
      subject,
      text_body: 'body',
      html_body: null,
      task_id: null,
      message_id: null,
      status: 'pending',
      attempts: 0,
      next_attempt_at: AT,
      locked_until: null,
      last_error: null,
      created_at: AT,
      sent_at: null,
      in_reply_to: null,
      claim_rank: 1,
    });
    await insertOutbox(store.db, mail(5, 'first'));
    await insertOutbox(
      store.db,
      range(1, 70).map((n) => mail(n, 'batch')),
    );
    const rows = await store.db.selectFrom('outbox').select(['id', 'subject']).where('id', 'like', 'mail-batch-%').execute();
    expect(rows).toHaveLength(70);
    expect(rows.find((r) => r.id === 'mail-batch-5')?.subject).toBe('first');
  });

  it('finds the active blocks of a batch, each only under its own kind', async () => {
    const block = (id: string, kind: string, value: string, expiresAt: string | null = null) =>
      insertBlock(store.db, { id, kind, value, reason: null, source: 'operator', created_at: AT, expires_at: expiresAt, prefix_bits: null });
    await block('b1', 'ip', 'client-blocked');
    await block('b2', 'email', 'spam@spam.example');
    await block('b3', 'domain', 'spam.example');
    await block('b4', 'requester', 'mallory');
    // The value of a subject's client hash, but blocked as a requester: no match for that client.
    await block('b5', 'requester', 'client-ok');
    await block('b6', 'ip', 'client-expired', '2030-01-01T00:00:00.000Z');
    const subjects = [
      { clientHash: 'client-ok', domains: [] },
      { clientHash: 'client-blocked', domains: [] },
      { clientHash: 'client-expired', email: 'spam@spam.example', domains: ['spam.example', 'example'] },
      { clientHash: 'client-ok', requester: 'mallory', domains: [] },
      ...range(1, 30).map((n) => ({ clientHash: `client-other-${n}`, domains: [] })),
    ];
    const found = await activeBlocksMatching(store.db, subjects, AT);
    expect(found.map((r) => `${r.kind}:${r.value}`).sort()).toEqual([
      'domain:spam.example',
      'email:spam@spam.example',
      'ip:client-blocked',
      'requester:mallory',
    ]);
  });

  it('marks sent every claimed mail of a window of any size, and none of another claim', async () => {
    const claimed = (n: number, token: string) => ({
      id: `mail-mark-${String(n).padStart(4, '0')}`,
      kind: 'task_submitted',
      recipient: 'operator@example-agent.dev',
      reply_to: null,
      subject: 'mark',
      text_body: 'body',
      html_body: null,
      task_id: null,
      message_id: null,
      status: 'pending',
      attempts: 0,
      next_attempt_at: AT,
      locked_until: LATER,
      last_error: null,
      created_at: AT,
      sent_at: null,
      in_reply_to: null,
      claim_rank: 1,
      claim_token: token,
    });
    const sqlite = store.sqlite;
    const prepare = sqlite ? vi.spyOn(sqlite, 'prepare') : undefined;
    try {
      let next = 1;
      for (const size of range(1, 40)) {
        const rows = range(next, size).map((n) => claimed(n, 'token-mine'));
        const other = claimed(next + size, 'token-other');
        next += size + 1;
        await insertOutbox(store.db, [...rows, other]);
        const marked = await markClaimedOutboxSent(store.db, [...rows.map((r) => r.id), other.id], 'token-mine', LATER);
        expect([...marked].sort()).toEqual(rows.map((r) => r.id));
      }
      // A text per power of two, not one per window size (SQLite keeps a prepared statement per text).
      if (prepare) expect(new Set(prepare.mock.calls.map(([text]) => text).filter((text) => text.startsWith('update "outbox"'))).size).toBeLessThanOrEqual(7);
    } finally {
      prepare?.mockRestore();
    }
    const rows = await store.db.selectFrom('outbox').select(['status', 'attempts', 'claim_token', 'sent_at']).where('id', 'like', 'mail-mark-%').execute();
    const sent = rows.filter((r) => r.status === 'sent');
    expect(sent).toHaveLength(820);
    expect(sent.every((r) => Number(r.attempts) === 1 && r.claim_token === null && r.sent_at === LATER)).toBe(true);
    expect(rows.filter((r) => r.status === 'pending' && r.claim_token === 'token-other')).toHaveLength(40);
  });

  it.runIf(storeName === 'sqlite')('prepares a few statement texts for batches of every size', async () => {
    const sqlite = store.sqlite;
    if (!sqlite) throw new Error('no SQLite handle');
    const prepare = vi.spyOn(sqlite, 'prepare');
    try {
      let next = 1000;
      for (const size of range(1, 100)) {
        const rows = range(next, size).map(task);
        next += size;
        await store.db.transaction().execute((trx) => insertTasks(trx, rows));
        await findByDedupeKeys(
          store.db,
          rows.map((r) => r.dedupe_key),
          '2030-01-01T00:00:00.000Z',
        );
      }
      const texts = new Set(prepare.mock.calls.map(([text]) => text));
      const inserts = [...texts].filter((text) => text.startsWith('insert into "tasks"'));
      const lookups = [...texts].filter((text) => text.includes('"dedupe_key" in'));
      // Inserts: 1, 2, 4 … 64 rows; lookups: 1, 2, 4 … 128 keys.
      expect(inserts.length).toBeLessThanOrEqual(7);
      expect(lookups.length).toBeLessThanOrEqual(8);
      expect(
        await store.db
          .selectFrom('tasks')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .where('id', '>=', 'tsk_batch_1000')
          .executeTakeFirstOrThrow(),
      ).toEqual({ n: 5050 });
    } finally {
      prepare.mockRestore();
    }
  });
});
