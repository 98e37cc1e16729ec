import { beforeAll, describe, expect, it } from 'vitest';
import { patchOk, submit } from '../../../test/operator.support.js';
import { STORES, useTestApp, validTask } from '../../../test/support/app.js';
import { HumanTaskClient, type WaitProgress } from '../src/index.js';

/** The client against the real app: what an agent developer does with it, end to end. */

describe.each(STORES)('human-task-client against the real app (%s)', (store) => {
  const t = useTestApp({ store });
  let client: HumanTaskClient;
  beforeAll(() => {
    // The test app listens on a random port; its receipts name its configured BASE_URL.
    client = new HumanTaskClient({ baseUrl: t.url, issuer: t.config.baseUrl });
  });

  it('submits with a generated Idempotency-Key, and a retry with the same key replays the same task', async () => {
    const input = validTask() as Parameters<HumanTaskClient['submitTask']>[0];
    const first = await client.submitTask(input);
    expect(first.status).toBe('submitted');
    expect(first.task_id).toMatch(/^task-\d{4}-[0-9a-f]{32}$/);
    expect(first.idempotency_key).toMatch(/^[0-9a-f-]{36}$/);
    const retry = await client.submitTask(input, { idempotencyKey: first.idempotency_key });
    expect(retry.task_id).toBe(first.task_id);
    const other = await client.submitTask(validTask() as typeof input);
    expect(other.idempotency_key).not.toBe(first.idempotency_key);
    expect(other.task_id).not.toBe(first.task_id);
  });

  it('reads a task, and waits for its delivery while the operator works on it', async () => {
    const { task_id: id } = await client.submitTask(validTask() as Parameters<HumanTaskClient['submitTask']>[0]);
    expect((await client.getTask(id)).status).toBe('submitted');
    const progress: WaitProgress[] = [];
    const waiting = client.waitForResult(id, { timeoutMs: 60_000, pollIntervalMs: 200, onProgress: (p) => progress.push(p) });
    await new Promise((r) => setTimeout(r, 500));
    await patchOk(t, id, { status: 'accepted', eta: '2030-03-11T12:00:00.000Z' });
    await new Promise((r) => setTimeout(r, 800));
    await patchOk(t, id, { status: 'delivered', operator_notes: 'Open Sundays 8:00-12:00.' });
    const done = await waiting;
    expect(done.status).toBe('delivered');
    expect(done.operator_notes).toBe('Open Sundays 8:00-12:00.');
    expect(progress[0]?.status).toBe('submitted');
    expect(progress.some((p) => p.status === 'accepted' && p.eta === '2030-03-11T12:00:00.000Z')).toBe(true);
    expect(progress.at(-1)?.status).toBe('delivered');

    const verdict = await client.verifyReceipt(id);
    expect(verdict).toMatchObject({ valid: true, failure: null });
    expect(verdict.checks.map((c) => c.name)).toEqual(['format', 'kid', 'signature', 'payload', 'issuer', 'task_id', 'deliverable']);
    // The same with the task as read, and with the bare receipt.
    expect((await client.verifyReceipt(done)).valid).toBe(true);
    expect((await client.verifyReceipt(String(done.receipt))).valid).toBe(true);
  });

  it('waits without any deadline', async () => {
    const id = await submit(t);
    const waiting = client.waitForResult(id, { pollIntervalMs: 200 });
    await new Promise((r) => setTimeout(r, 300));
    await patchOk(t, id, { status: 'accepted' });
    await patchOk(t, id, { status: 'delivered', operator_notes: 'Done without a deadline.' });
    expect((await waiting).operator_notes).toBe('Done without a deadline.');
  });

  it('returns a rejected task from waitForResult with the reason', async () => {
    const id = await submit(t);
    await patchOk(t, id, { status: 'rejected', operator_notes: 'Out of scope.' });
    const task = await client.waitForResult(id, { timeoutMs: 10_000 });
    expect(task).toMatchObject({ status: 'rejected', operator_notes: 'Out of scope.' });
  });

  it('lists every service across pages', async () => {
    const all = [];
    for await (const entry of client.listServices({ pageSize: 3 })) all.push(entry.service_id);
    expect(all).toEqual(t.deps.catalog.map((s) => s.service_id));
    expect(all.length).toBeGreaterThan(3);
  });

  it('sends the operator a message', async () => {
    const sent = await client.sendMessage({ message: 'Can you also check the opening hours on public holidays?', reply_to: 'agent@mail.example-agent.dev' });
    expect(sent.message_id).toMatch(/^msg-\d{4}-[0-9a-f]{32}$/);
  });

  it('fetches the JWKS once and caches it', async () => {
    const id = await submit(t);
    await patchOk(t, id, { status: 'accepted' });
    await patchOk(t, id, { status: 'delivered', operator_notes: 'Done.' });
    let jwksFetches = 0;
    const counting = new HumanTaskClient({
      baseUrl: t.url,
      issuer: t.config.baseUrl,
      fetch: (input, init) => {
        if (String(input).endsWith('/.well-known/jwks.json')) jwksFetches += 1;
        return fetch(input, init);
      },
    });
    expect((await counting.verifyReceipt(id)).valid).toBe(true);
    expect((await counting.verifyReceipt(id)).valid).toBe(true);
    expect(jwksFetches).toBe(1);
  });
});
