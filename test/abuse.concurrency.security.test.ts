import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postJson, STORES, startTestApp, type TestApp, useTestApp, validTask } from './support/app.js';

/**
 * Shared state under a race. On PostgreSQL: two app instances on one database, the same client
 * firing concurrently at both, must be admitted exactly up to each limit, never more; identical
 * submissions give one task; one Idempotency-Key gives one task. On SQLite (one instance — several
 * instances need PostgreSQL) the same races run against the single instance.
 */

type Json = Record<string, unknown>;
let nextIp = 1;
const newClient = () => ({ 'x-forwarded-for': `10.20.0.${nextIp++}` });
const N = 12;

const statuses = (responses: Response[]) => responses.map((r) => r.status).sort();
const count = (responses: Response[], status: number) => responses.filter((r) => r.status === status).length;

describe.each(STORES)('two instances racing on %s', (store) => {
  let b: TestApp;
  // Auto-block is tested elsewhere; here it would turn late refusals into 403s.
  const env = { TRUST_PROXY: '1', DAILY_TASK_CAP: '1000', AUTO_BLOCK_REFUSALS: '1000' };
  const a = useTestApp({ store, limits: 'production', env });
  beforeAll(async () => {
    b = store === 'postgres' ? await startTestApp({ store, limits: 'production', env, shareDatabaseWith: a }) : a;
  });
  afterAll(async () => {
    if (b !== a) await b.close();
  });

  /** N requests at once, alternating between the two instances. */
  const race = (path: string, body: (i: number) => unknown, headers: (i: number) => Record<string, string>) =>
    Promise.all(Array.from({ length: N }, (_, i) => postJson(`${(i % 2 === 0 ? a : b).url}${path}`, body(i), headers(i))));
  const tasksOf = async (taskIds: unknown[]) =>
    a.store.db
      .selectFrom('tasks')
      .select('id')
      .where('id', 'in', taskIds as string[])
      .execute();

  it('admits exactly 3 concurrent submissions of one client in an hour', async () => {
    const client = newClient();
    const responses = await race(
      '/api/v1/tasks',
      () => validTask(),
      () => client,
    );
    expect(statuses(responses)).toEqual([...Array<number>(3).fill(202), ...Array<number>(N - 3).fill(429)]);
  });

  it('admits exactly 3 concurrent messages of one client in an hour', async () => {
    const client = newClient();
    const responses = await race(
      '/api/v1/messages',
      () => ({ message: 'A question about the service.', reply_to: 'agent@mail.example-agent.dev' }),
      () => client,
    );
    expect(count(responses, 201)).toBe(3);
    expect(count(responses, 429)).toBe(N - 3);
  });

  it('admits exactly 1 concurrent status_poll task of one client in a day', async () => {
    const client = newClient();
    const responses = await race(
      '/api/v1/tasks',
      () => validTask({ delivery: 'status_poll', contact_email: undefined }),
      () => client,
    );
    expect(count(responses, 202)).toBe(1);
    expect(count(responses, 429)).toBe(N - 1);
  });

  it('turns concurrent identical submissions into one task and 409s naming it', async () => {
    const client = newClient();
    const task = validTask();
    const responses = await race(
      '/api/v1/tasks',
      () => task,
      () => client,
    );
    expect(count(responses, 202)).toBe(1);
    expect(count(responses, 409)).toBe(N - 1);
    const bodies = (await Promise.all(responses.map((r) => r.json()))) as Json[];
    const created = bodies.find((body) => body.status === 'submitted');
    for (const body of bodies) if (body.error) expect(body).toMatchObject({ error: 'duplicate_task', existing_task_id: created?.task_id });
  });

  it('turns concurrent identical submissions from many clients with one contact e-mail into one task', async () => {
    const task = validTask({ contact_email: `race-${nextIp}@mail.example-agent.dev` });
    const responses = await race(
      '/api/v1/tasks',
      () => task,
      () => newClient(),
    );
    expect(count(responses, 202)).toBe(1);
    expect(count(responses, 409)).toBe(N - 1);
  });

  it('turns concurrent requests with one Idempotency-Key and payload into one task, replayed to all', async () => {
    const client = newClient();
    const task = validTask();
    const responses = await race(
      '/api/v1/tasks',
      () => task,
      () => ({ ...client, 'idempotency-key': 'race-key' }),
    );
    expect(count(responses, 202)).toBe(N);
    const ids = new Set(((await Promise.all(responses.map((r) => r.json()))) as Json[]).map((body) => body.task_id));
    expect(ids.size).toBe(1);
    expect(await tasksOf([...ids])).toHaveLength(1);
    expect(new Set(responses.map((r) => r.headers.get('location'))).size).toBe(1);
  });

  it('gives one Idempotency-Key with different concurrent payloads to exactly one of them', async () => {
    const client = newClient();
    const responses = await race(
      '/api/v1/tasks',
      () => validTask(),
      () => ({ ...client, 'idempotency-key': 'race-key-2' }),
    );
    expect(count(responses, 202)).toBe(1);
    expect(count(responses, 422)).toBe(N - 1);
  });

  it('shares read counts between instances once flushed (every second, and at once near the limit)', async () => {
    const small = { ...env, READ_LIMIT_PER_MINUTE: '4' };
    const c = await startTestApp({ store, limits: 'production', env: small });
    const d = await startTestApp({ store, limits: 'production', env: small, shareDatabaseWith: c });
    try {
      const read = (t: TestApp) => fetch(`${t.url}/api/v1/tasks/task-2030-00000000000000000000000000000000`, { headers: { 'x-forwarded-for': '10.30.0.1' } });
      for (let i = 0; i < 3; i++) expect((await read(c)).status).toBe(404);
      await c.deps.abuse.reads.sync();
      // d has not seen this client yet: it admits on its own count and learns the total at once.
      expect((await read(d)).status).toBe(404);
      await d.deps.abuse.reads.sync();
      expect((await read(d)).status).toBe(429);
      // c refreshes the totals of clients idle on it, so d's read counts there too.
      await c.deps.abuse.reads.sync();
      expect((await read(c)).status).toBe(429);
      // No read wrote to the store by itself: one counter row holds the client's minute.
      const rows = await c.store.db.selectFrom('counters').selectAll().where('key', 'like', 'reads:m:%').execute();
      expect(rows).toHaveLength(1);
      expect(Number(rows[0]!.count)).toBe(4);
    } finally {
      await d.close();
      await c.close();
    }
  });
});

describe.each(STORES)('the global cap racing on %s', (store) => {
  let b: TestApp;
  const env = { TRUST_PROXY: '1', DAILY_TASK_CAP: '5', AUTO_BLOCK_REFUSALS: '1000' };
  const a = useTestApp({ store, limits: 'production', env });
  beforeAll(async () => {
    b = store === 'postgres' ? await startTestApp({ store, limits: 'production', env, shareDatabaseWith: a }) : a;
  });
  afterAll(async () => {
    if (b !== a) await b.close();
  });

  it('admits exactly DAILY_TASK_CAP concurrent submissions from many clients', async () => {
    const responses = await Promise.all(Array.from({ length: N }, (_, i) => postJson(`${(i % 2 === 0 ? a : b).url}/api/v1/tasks`, validTask(), newClient())));
    expect(count(responses, 202)).toBe(5);
    expect(count(responses, 429)).toBe(N - 5);
    const bodies = (await Promise.all(responses.filter((r) => r.status === 429).map((r) => r.json()))) as Json[];
    for (const body of bodies) expect(body.error).toBe('capacity_reached');
  });
});
