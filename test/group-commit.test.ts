import { describe, expect, it } from 'vitest';
import { postJson, STORES, startTestApp, TEST_ADMIN_KEY, type TestApp, TestClock, useTestApp, validTask } from './support/app.js';

/**
 * Many submissions at once, as a group commit would batch them: every guard stays exact. Each
 * burst is fired in full (Promise.all over real HTTP) before any answer is awaited, and each test
 * checks what the clients were told and which tasks the operator's queue then holds. Each test is
 * its own client (TRUST_PROXY=1, a distinct X-Forwarded-For) and marks its descriptions, so the
 * queue can be read per test.
 */

type Json = Record<string, unknown>;
type ClientHeaders = Record<string, string>;
interface Answer {
  status: number;
  body: Json;
  headers: Headers;
}

const admin = { authorization: `Bearer ${TEST_ADMIN_KEY}` };
let nextClient = 0;
const newClient = (): ClientHeaders => {
  const n = nextClient++;
  return { 'x-forwarded-for': `10.77.${Math.floor(n / 250)}.${(n % 250) + 1}` };
};
let nextMarker = 1;
const newMarker = () => `burst ${nextMarker++}`;
/**
 * A valid task whose description carries the test's marker (`item` keeps descriptions apart).
 *
 * Its contact e-mail is at a mail domain of its own whose MX lookup never answers (the test DNS
 * server ignores names containing "timeout"): the address is accepted as unverified after
 * DNS_TIMEOUT_MS (500 ms), and every request of a burst shares that one lookup, which sits between
 * the read-only quota precheck and the write transaction. So the whole burst passes the precheck
 * before any of it commits, and the guards inside the transaction are what decide, on SQLite too
 * (with a fast answer, each request would commit before the next one even arrived).
 */
const markedTask = (marker: string, item: number, overrides: Json = {}) =>
  validTask({
    description: `Check whether the bakery at 12 Main Street is open on Sunday mornings [${marker}, item ${item}].`,
    contact_email: `agent@${marker.replace(/\W+/g, '-')}.timeout.example-agent.dev`,
    ...overrides,
  });

const submit = (t: TestApp, body: unknown, headers: ClientHeaders) => postJson(`${t.url}/api/v1/tasks`, body, headers);
const answer = async (res: Response): Promise<Answer> => ({ status: res.status, headers: res.headers, body: (await res.json()) as Json });

/** Starts all n requests before awaiting any, then reads every answer. */
const burst = (n: number, send: (i: number) => Promise<Response>): Promise<Answer[]> => Promise.all(Array.from({ length: n }, (_, i) => send(i).then(answer)));

/** How many answers had each status, e.g. { 202: 3, 429: 47 }. */
const tally = (answers: Answer[]) => {
  const counts: Record<number, number> = {};
  for (const { status } of answers) counts[status] = (counts[status] ?? 0) + 1;
  return counts;
};
const withStatus = (answers: Answer[], status: number) => answers.filter((a) => a.status === status);
const taskIds = (answers: Answer[]) => answers.map((a) => a.body.task_id as string).sort();

/** Every task in the operator's queue, all pages. */
async function operatorQueue(t: TestApp): Promise<Json[]> {
  const tasks: Json[] = [];
  let cursor: string | null = null;
  do {
    const query: string = cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`;
    const res = await fetch(`${t.url}/api/v1/admin/tasks?limit=200${query}`, { headers: admin });
    expect(res.status).toBe(200);
    const page = (await res.json()) as { tasks: Json[]; next_cursor: string | null };
    tasks.push(...page.tasks);
    cursor = page.next_cursor;
  } while (cursor !== null);
  return tasks;
}

/** The ids of the queued tasks whose description carries the marker. */
const queuedIds = async (t: TestApp, marker: string) =>
  (await operatorQueue(t))
    .filter((task) => String(task.description).includes(`[${marker},`))
    .map((task) => task.task_id as string)
    .sort();

describe.each(STORES)('concurrent submissions on %s', (store) => {
  // A fixed clock 20 minutes into the hour: the hour window cannot roll over mid-burst, and every
  // 429 names the same wait (2400 s). Auto-block is tested elsewhere; here it would turn the later
  // of 47 refusals into 403 client_blocked.
  const clock = new TestClock('2030-03-10T10:20:00.000Z');
  const env = { TRUST_PROXY: '1', TASK_LIMIT_PER_HOUR: '3', AUTO_BLOCK_REFUSALS: '100000' };
  const t = useTestApp({ store, clock, limits: 'production', env });

  /** Checks a burst of one client against a limit of 3 per hour: 3 accepted, the rest 429, and only those 3 queued. */
  const expectThreeAdmitted = async (answers: Answer[], marker: string) => {
    expect(tally(answers)).toEqual({ 202: 3, 429: answers.length - 3 });
    const accepted = withStatus(answers, 202);
    expect(accepted.map((a) => a.headers.get('ratelimit-remaining')).sort()).toEqual(['0', '1', '2']);
    for (const refused of withStatus(answers, 429)) {
      expect(refused.body).toMatchObject({ error: 'rate_limited', limit: 'tasks_per_hour', retry_after_seconds: 2400 });
      expect(refused.headers.get('retry-after')).toBe('2400');
    }
    expect(new Set(taskIds(accepted)).size).toBe(3);
    expect(await queuedIds(t, marker)).toEqual(taskIds(accepted));
  };

  it('admits exactly 3 of 50 concurrent submissions of one client, with RateLimit-Remaining 2, 1 and 0', async () => {
    const client = newClient();
    const marker = newMarker();
    const answers = await burst(50, (i) => submit(t, markedTask(marker, i), client));
    await expectThreeAdmitted(answers, marker);
  });

  it('turns 10 concurrent twins (one Idempotency-Key, one payload) into one task, replayed to all', async () => {
    const client = newClient();
    const marker = newMarker();
    const task = markedTask(marker, 1);
    const answers = await burst(10, () => submit(t, task, { ...client, 'idempotency-key': 'twins' }));
    // A replay repeats the original status, Location and body (contract, Idempotency).
    expect(tally(answers)).toEqual({ 202: 10 });
    const [first] = answers;
    for (const a of answers) {
      expect(a.body).toEqual(first?.body);
      expect(a.headers.get('location')).toBe(first?.headers.get('location'));
    }
    expect(await queuedIds(t, marker)).toEqual([first?.body.task_id]);
    // Replays use no quota: the client's next submission is its second of the hour.
    const next = await submit(t, markedTask(marker, 2), client);
    expect(next.status).toBe(202);
    expect(next.headers.get('ratelimit-remaining')).toBe('1');
  });

  it('gives one Idempotency-Key sent with 10 different concurrent payloads to exactly one of them', async () => {
    const client = newClient();
    const marker = newMarker();
    const answers = await burst(10, (i) => submit(t, markedTask(marker, i), { ...client, 'idempotency-key': 'one-key' }));
    expect(tally(answers)).toEqual({ 202: 1, 422: 9 });
    for (const refused of withStatus(answers, 422)) {
      expect(refused.body.error).toBe('validation_failed');
      expect(refused.body.details).toEqual([expect.stringContaining('Idempotency-Key')]);
    }
    const winner = answers.findIndex((a) => a.status === 202);
    const stored = await queuedIds(t, marker);
    expect(stored).toEqual([answers[winner]?.body.task_id]);
    const status = (await (await fetch(`${t.url}/api/v1/tasks/${stored[0]}`)).json()) as Json;
    expect(status.description).toBe(markedTask(marker, winner).description);
  });

  it('turns 10 concurrent identical submissions without a key into one task and nine 409s naming it', async () => {
    const client = newClient();
    const marker = newMarker();
    const task = markedTask(marker, 1);
    const answers = await burst(10, () => submit(t, task, client));
    expect(tally(answers)).toEqual({ 202: 1, 409: 9 });
    const created = withStatus(answers, 202)[0]?.body.task_id;
    for (const refused of withStatus(answers, 409)) expect(refused.body).toMatchObject({ error: 'duplicate_task', existing_task_id: created });
    expect(await queuedIds(t, marker)).toEqual([created]);
    // Duplicates use no quota: the client's next submission is its second of the hour.
    const next = await submit(t, markedTask(marker, 2), client);
    expect(next.status).toBe(202);
    expect(next.headers.get('ratelimit-remaining')).toBe('1');
  });

  /** One refused submission, prepared before the burst, and what it must be told. */
  interface Spoiler {
    prepare(marker: string): Promise<{ body: Json; headers: ClientHeaders }>;
    status: number;
    expected: Json;
  }
  /** A submission whose requester the operator has just blocked. */
  const fromBlockedRequester = async (marker: string, overrides: Json = {}) => {
    const requester = `Flood Bot (${marker})`;
    expect((await postJson(`${t.url}/api/v1/admin/blocklist`, { kind: 'requester', value: requester }, admin)).status).toBe(201);
    return { body: markedTask(marker, 99, { requester, ...overrides }), headers: newClient() };
  };
  const spoilers: [string, Spoiler][] = [
    [
      'an invalid description',
      {
        prepare: async () => ({ body: validTask({ description: 'short' }), headers: newClient() }),
        status: 422,
        expected: { error: 'validation_failed', details: [expect.stringContaining('description')] },
      },
    ],
    ['a blocked requester', { prepare: (marker) => fromBlockedRequester(marker), status: 403, expected: { error: 'client_blocked' } }],
    [
      // No e-mail, so no MX lookup before the write: the blocklist may be checked only with it.
      'a blocked requester of a status_poll task',
      {
        prepare: (marker) => fromBlockedRequester(marker, { delivery: 'status_poll', contact_email: undefined }),
        status: 403,
        expected: { error: 'client_blocked' },
      },
    ],
    [
      'a client over its hourly limit',
      {
        prepare: async (marker) => {
          const client = newClient();
          for (let i = 0; i < 3; i++) expect((await submit(t, markedTask(`${marker} before`, i), client)).status).toBe(202);
          return { body: markedTask(marker, 99), headers: client };
        },
        status: 429,
        expected: { error: 'rate_limited', limit: 'tasks_per_hour' },
      },
    ],
    [
      'a duplicate of a task of the same client',
      {
        prepare: async (marker) => {
          const client = newClient();
          const earlier = markedTask(`${marker} before`, 0);
          const first = await submit(t, earlier, client);
          expect(first.status).toBe(202);
          return { body: earlier, headers: client };
        },
        status: 409,
        expected: { error: 'duplicate_task' },
      },
    ],
  ];

  it.each(spoilers)('refuses %s amid 20 valid concurrent submissions, and accepts every other one', async (_label, spoiler) => {
    const marker = newMarker();
    const refusedOne = await spoiler.prepare(marker);
    const spoilerAt = 10;
    const answers = await burst(21, (i) => (i === spoilerAt ? submit(t, refusedOne.body, refusedOne.headers) : submit(t, markedTask(marker, i), newClient())));
    expect(answers[spoilerAt]?.status).toBe(spoiler.status);
    expect(answers[spoilerAt]?.body).toMatchObject(spoiler.expected);
    const others = answers.filter((_, i) => i !== spoilerAt);
    expect(tally(others)).toEqual({ 202: 20 });
    expect(await queuedIds(t, marker)).toEqual(taskIds(others));
  });

  it.skipIf(store !== 'postgres')('admits exactly 3 of 40 submissions of one client split across two instances on one database', async () => {
    const other = await startTestApp({ store, limits: 'production', env, shareDatabaseWith: t });
    try {
      const client = newClient();
      const marker = newMarker();
      const answers = await burst(40, (i) => submit(i % 2 === 0 ? t : other, markedTask(marker, i), client));
      await expectThreeAdmitted(answers, marker);
    } finally {
      await other.close();
    }
  });
});

describe.each(STORES)('the daily task cap under concurrency on %s', (store) => {
  const t = useTestApp({ store, clock: new TestClock('2030-03-10T10:20:00.000Z'), limits: 'production', env: { TRUST_PROXY: '1', DAILY_TASK_CAP: '5' } });

  it('admits exactly DAILY_TASK_CAP (5) of 20 concurrent submissions from 20 clients', async () => {
    const marker = newMarker();
    const answers = await burst(20, (i) => submit(t, markedTask(marker, i), newClient()));
    expect(tally(answers)).toEqual({ 202: 5, 429: 15 });
    // 13 h 40 min to 00:00 UTC.
    for (const refused of withStatus(answers, 429)) {
      expect(refused.body).toMatchObject({ error: 'capacity_reached', retry_after_seconds: 49_200 });
      expect(refused.headers.get('retry-after')).toBe('49200');
    }
    const accepted = taskIds(withStatus(answers, 202));
    expect(await queuedIds(t, marker)).toEqual(accepted);
    expect(await operatorQueue(t)).toHaveLength(5);
  });
});
