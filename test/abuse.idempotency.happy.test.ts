import { describe, expect, it } from 'vitest';
import { iso } from '../src/domain/time.js';
import { sweepExpiredIdempotencyKeys } from '../src/store/abuse-control/idempotency-repo.js';
import { postJson, STORES, TestClock, useTestApp, validTask } from './support/app.js';

/**
 * Idempotency-Key (contract): the same client, key and payload within 24 h replays the original
 * status, Location and body, and uses no quota.
 */

type Json = Record<string, unknown>;
let nextIp = 1;
const newClient = () => ({ 'x-forwarded-for': `198.18.0.${nextIp++}` });

describe.each(STORES)('idempotent replays on %s', (store) => {
  const clock = new TestClock();
  const t = useTestApp({ store, clock, limits: 'production', env: { TRUST_PROXY: '1' } });

  const taskCount = async () =>
    Number(
      (
        await t.store.db
          .selectFrom('tasks')
          .select((eb) => eb.fn.countAll().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );

  it('replays even after the deadline it carried has passed', async () => {
    clock.set('2030-03-10T10:00:00.000Z');
    const headers = { ...newClient(), 'idempotency-key': 'deadline-1' };
    const task = validTask({ deadline: '2030-03-10T11:00:00Z' });
    const first = await postJson(`${t.url}/api/v1/tasks`, task, headers);
    expect(first.status).toBe(202);
    const firstBody = (await first.json()) as Json;

    clock.set('2030-03-10T12:00:00.000Z');
    const again = await postJson(`${t.url}/api/v1/tasks`, task, headers);
    expect(again.status).toBe(202);
    expect(await again.json()).toEqual(firstBody);
    // Without the key, the same body is now refused: the deadline is in the past.
    expect((await postJson(`${t.url}/api/v1/tasks`, task, newClient())).status).toBe(422);
  });

  it('treats a payload that differs only by an unknown field as another payload (422)', async () => {
    clock.set('2030-03-10T10:00:00.000Z');
    const headers = { ...newClient(), 'idempotency-key': 'extra-1' };
    const task = validTask();
    expect((await postJson(`${t.url}/api/v1/tasks`, task, headers)).status).toBe(202);
    const changed = await postJson(`${t.url}/api/v1/tasks`, { ...task, note: 'x' }, headers);
    expect(changed.status).toBe(422);
    expect(((await changed.json()) as Json).error).toBe('validation_failed');
    // Key order and spacing do not make another payload.
    const reordered = Object.fromEntries(Object.entries(task).reverse());
    expect((await postJson(`${t.url}/api/v1/tasks`, JSON.stringify(reordered, null, 2), headers)).status).toBe(202);
  });

  it('replays the original 202, Location and body without creating a task or using quota', async () => {
    clock.set('2030-03-10T10:00:00.000Z');
    const client = newClient();
    const task = validTask();
    const headers = { ...client, 'idempotency-key': 'order-1' };
    const first = await postJson(`${t.url}/api/v1/tasks`, task, headers);
    expect(first.status).toBe(202);
    // Issue 30, item 7: a first submission is not marked; its replay is.
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    const firstBody = (await first.json()) as Json;
    const count = await taskCount();

    clock.set('2030-03-10T10:05:00.000Z');
    const again = await postJson(`${t.url}/api/v1/tasks`, task, headers);
    expect(again.status).toBe(202);
    expect(again.headers.get('location')).toBe(first.headers.get('location'));
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(await again.json()).toEqual(firstBody);
    expect(await taskCount()).toBe(count);
    // Still 2 of 3 left this hour: the replay used nothing, and says so.
    expect(again.headers.get('ratelimit-remaining')).toBe('2');
    expect(again.headers.get('ratelimit-policy')).toBe('3;w=3600;comment="address", 5;w=86400;comment="address"');
  });

  it('replays the same payload whatever the key order or whitespace of the JSON', async () => {
    const client = newClient();
    const headers = { ...client, 'idempotency-key': 'order-2' };
    const task = validTask({ requester: 'agent-9' });
    const first = (await (await postJson(`${t.url}/api/v1/tasks`, task, headers)).json()) as Json;
    const reordered = Object.fromEntries(Object.entries(task).reverse());
    const again = await postJson(`${t.url}/api/v1/tasks`, JSON.stringify(reordered, null, 2), headers);
    expect(again.status).toBe(202);
    expect(((await again.json()) as Json).task_id).toBe(first.task_id);
  });

  it('replays even when the client has used up its quota', async () => {
    clock.set('2030-03-11T10:00:00.000Z');
    const client = newClient();
    const keyed = validTask();
    const first = (await (await postJson(`${t.url}/api/v1/tasks`, keyed, { ...client, 'idempotency-key': 'k-quota' })).json()) as Json;
    for (let i = 0; i < 2; i++) expect((await postJson(`${t.url}/api/v1/tasks`, validTask(), client)).status).toBe(202);
    expect((await postJson(`${t.url}/api/v1/tasks`, validTask(), client)).status).toBe(429);
    const again = await postJson(`${t.url}/api/v1/tasks`, keyed, { ...client, 'idempotency-key': 'k-quota' });
    expect(again.status).toBe(202);
    expect(((await again.json()) as Json).task_id).toBe(first.task_id);
    expect(again.headers.get('ratelimit-remaining')).toBe('0');
  });

  it('replays up to 24 h, then treats the key as new', async () => {
    clock.set('2030-03-12T10:00:00.000Z');
    const client = newClient();
    const headers = { ...client, 'idempotency-key': 'k-window' };
    const task = validTask();
    const first = (await (await postJson(`${t.url}/api/v1/tasks`, task, headers)).json()) as Json;
    clock.set('2030-03-13T09:59:59.000Z');
    expect(((await (await postJson(`${t.url}/api/v1/tasks`, task, headers)).json()) as Json).task_id).toBe(first.task_id);
    clock.set('2030-03-13T10:00:00.000Z');
    // 24 h later the key is free again; a new payload under it is a new task.
    const fresh = await postJson(`${t.url}/api/v1/tasks`, validTask(), headers);
    expect(fresh.status).toBe(202);
    expect(((await fresh.json()) as Json).task_id).not.toBe(first.task_id);
  });

  it('housekeeping deletes records past the window, and only those', async () => {
    clock.set('2030-03-20T10:00:00.000Z');
    const client = newClient();
    await postJson(`${t.url}/api/v1/tasks`, validTask(), { ...client, 'idempotency-key': 'k-sweep-old' });
    clock.set('2030-03-21T09:00:00.000Z');
    await postJson(`${t.url}/api/v1/tasks`, validTask(), { ...client, 'idempotency-key': 'k-sweep-new' });
    clock.set('2030-03-21T10:00:00.000Z');
    await sweepExpiredIdempotencyKeys(t.store.db, iso(clock.now()));
    const keys = (await t.store.db.selectFrom('idempotency_keys').select('key').execute()).map((r) => r.key);
    expect(keys).toContain('k-sweep-new');
    expect(keys).not.toContain('k-sweep-old');
  });

  it('replays rather than reporting a duplicate', async () => {
    const client = newClient();
    const task = validTask();
    const first = (await (await postJson(`${t.url}/api/v1/tasks`, task, { ...client, 'idempotency-key': 'k-dup' })).json()) as Json;
    const again = await postJson(`${t.url}/api/v1/tasks`, task, { ...client, 'idempotency-key': 'k-dup' });
    expect(again.status).toBe(202);
    expect(((await again.json()) as Json).task_id).toBe(first.task_id);
    // Without the key it is a duplicate.
    const dup = await postJson(`${t.url}/api/v1/tasks`, task, client);
    expect(dup.status).toBe(409);
    expect(((await dup.json()) as Json).existing_task_id).toBe(first.task_id);
  });
});
