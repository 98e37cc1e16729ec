import { afterEach, describe, expect, it } from 'vitest';
import { claimDue, SentMarks } from '../src/mail/queue.js';
import { insertOutbox } from '../src/store/delivery/outbox-repo.js';
import { STORES, startTestApp, type TestApp } from './support/app.js';

/**
 * The batched "sent" marks must never stall. A real run on PostgreSQL left a digest that had gone
 * out `pending` under its claim: a mark written by the batch in flight left its own 50 ms timer
 * behind; that timer found nothing to write, and the empty write it started was recorded as "a
 * write in progress" forever, so no later mark was ever written. The mails went out again when
 * their leases ran out.
 */

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

const TOKEN = 'marks-test-worker';

async function queue(app: TestApp, count: number) {
  const at = app.clock.now().toISOString();
  const ids = Array.from({ length: count }, (_, i) => `mail-marks-${i}`);
  await insertOutbox(
    app.store.db,
    ids.map((id) => ({
      id,
      kind: 'task_submitted',
      recipient: 'operator@ops.example-service.dev',
      reply_to: null,
      subject: 'New task',
      text_body: 'A task',
      html_body: null,
      task_id: null,
      message_id: null,
      status: 'pending',
      attempts: 0,
      next_attempt_at: at,
      locked_until: null,
      last_error: null,
      created_at: at,
      sent_at: null,
      claim_rank: 1,
    })),
  );
  return claimDue(app.deps, TOKEN, count, 60_000);
}

/** Resolves with the mark's answer, or 'stalled' when it is not written within two seconds. */
function within(mark: Promise<boolean>): Promise<boolean | 'stalled'> {
  return Promise.race([mark, new Promise<'stalled'>((r) => setTimeout(() => r('stalled'), 2000))]);
}

describe.each(STORES)('sent marks on %s', (store) => {
  it('writes a mark asked for after a batch that took a late mark with it', async () => {
    t = await startTestApp({ store });
    const [a, b, c] = await queue(t, 3);
    if (!a || !b || !c) throw new Error('three mails claimed');
    const marks = new SentMarks(t.deps, TOKEN);
    const first = marks.mark(a);
    const writing = marks.drain();
    // Arrives while the first batch is being written: it rides along, but its timer stays set.
    const second = marks.mark(b);
    expect(await first).toBe(true);
    await writing;
    expect(await second).toBe(true);
    // The late mark's timer fires with nothing left to write.
    await new Promise((r) => setTimeout(r, 150));
    expect(await within(marks.mark(c))).toBe(true);
    const rows = await t.store.db.selectFrom('outbox').select(['id', 'status', 'claim_token']).orderBy('id').execute();
    expect(rows.map((r) => [r.status, r.claim_token])).toEqual([
      ['sent', null],
      ['sent', null],
      ['sent', null],
    ]);
  });

  it('writes a mark asked for after draining with nothing to write', async () => {
    t = await startTestApp({ store });
    const [a] = await queue(t, 1);
    if (!a) throw new Error('one mail claimed');
    const marks = new SentMarks(t.deps, TOKEN);
    await marks.drain();
    expect(await within(marks.mark(a))).toBe(true);
  });

  it('marks a steady stream of sent mails a window at a time, not a statement per round trip', async () => {
    // Marks asked for while a batch was being written used to be written as soon as it was: on
    // PostgreSQL, behind a fast SMTP server, a flood's marks became a statement (and a commit)
    // per round trip, a few mails each.
    const statements: string[] = [];
    t = await startTestApp({ store, onQuery: (query) => statements.push(query.sql) });
    const rows = await queue(t, 1000);
    const marks = new SentMarks(t.deps, TOKEN);
    const marked: Promise<boolean>[] = [];
    statements.length = 0;
    // A mail sent every 0.3 ms for 300 ms (as a flood's mail thread sends them): marks arrive
    // while each batch is being written.
    let next = performance.now();
    for (const row of rows) {
      marked.push(marks.mark(row));
      next += 0.3;
      while (performance.now() < next) await new Promise((r) => setImmediate(r));
    }
    expect(await Promise.all(marked)).toEqual(rows.map(() => true));
    const writes = statements.filter((sql) => /^update "outbox" set "status"/.test(sql));
    // 300 ms of marks in 50 ms windows (or batches of 256): a handful of statements, at most a
    // window's and a batch's worth.
    expect(writes.length).toBeGreaterThan(1);
    expect(writes.length).toBeLessThanOrEqual(16);
    const sent = await t.store.db.selectFrom('outbox').select('status').where('status', '=', 'sent').execute();
    expect(sent).toHaveLength(1000);
  });
});
