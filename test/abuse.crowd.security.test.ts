import { DefaultQueryExecutor } from 'kysely';
import { pino } from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import * as limits from '../src/abuse/limits.js';
import { ReadLimiter } from '../src/abuse/reads.js';
import { postJson, STORES, startTestApp, type TestApp, TestClock, useTestApp, validTask } from './support/app.js';

/**
 * Issue 34, item 1: the work of one request does not grow with the number of clients. Counted,
 * not timed: the store statements and the counter keys built (every key of a window goes through
 * `windowOf`) per request, with 100 and with 3,000 other clients seen this minute; and the limits
 * stay exact under 3,000 distinct clients.
 */

vi.mock('../src/abuse/limits.js', async (importOriginal) => {
  const original = await importOriginal<typeof import('../src/abuse/limits.js')>();
  return { ...original, windowOf: vi.fn(original.windowOf) };
});

const keysBuilt = vi.mocked(limits.windowOf);
// Every statement Kysely runs, whichever store (the executors of transactions inherit this too).
const executorPrototype = Object.getPrototypeOf(DefaultQueryExecutor.prototype) as { executeQuery: (...args: never[]) => unknown };
const statements = vi.spyOn(executorPrototype, 'executeQuery');

afterEach(() => {
  keysBuilt.mockClear();
  statements.mockClear();
});

const tick = () => new Promise<void>((resolve) => setImmediate(resolve));
const silent = pino({ level: 'silent' });

interface Work {
  /** Statements per request, counted until the store has the counts (the timer's flush included). */
  statements: number;
  /** Counter keys built per request. */
  keys: number;
  /** Statements run synchronously inside take(): on the request path. */
  onRequestPath: number;
}

let nextAddress = 0;
/** A distinct address per call, 10.x.y.z. */
const address = () => {
  const n = ++nextAddress;
  return `10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`;
};

describe.each(STORES)('per-client counting with a crowd on %s', (store) => {
  const t = useTestApp({ store });

  /** A limiter that has seen `crowd` clients this minute; then 200 reads: 100 new clients, 100 known. */
  async function readWork(crowd: number): Promise<Work> {
    const limiter = new ReadLimiter(t.store.db, t.clock, silent, 600);
    for (let i = 0; i < crowd; i++) {
      limiter.take(`crowd-${crowd}-${i}`);
      // Let whatever a read starts run, as requests arriving one after another would.
      if (i % 10 === 9) await tick();
    }
    await limiter.sync();
    statements.mockClear();
    keysBuilt.mockClear();
    let onRequestPath = 0;
    for (let i = 0; i < 100; i++) {
      for (const client of [`new-${crowd}-${i}`, `crowd-${crowd}-${i}`]) {
        const before = statements.mock.calls.length;
        limiter.take(client);
        onRequestPath += statements.mock.calls.length - before;
      }
      await tick();
    }
    await limiter.stop();
    return { statements: statements.mock.calls.length / 200, keys: keysBuilt.mock.calls.length / 200, onRequestPath };
  }

  it('a read costs the same with 3,000 clients as with 100: no statement on its path, one key per client and minute', async () => {
    const small = await readWork(100);
    const large = await readWork(3000);
    expect(small.onRequestPath).toBe(0);
    expect(large.onRequestPath).toBe(0);
    // The timer's flush sends the 200 reads' counts in one statement and reads back a bounded batch
    // of idle clients' totals (the larger crowd has idle clients; a timer tick may fall inside the
    // loop on one side only): a flush or two, never a statement per client.
    expect(large.statements).toBeLessThanOrEqual(small.statements * 1.5 + 2 / 200);
    expect(large.keys).toBeLessThanOrEqual(Math.max(small.keys * 1.5, 1));
    expect(large.statements).toBeLessThan(0.05);
  }, 120_000);

  it('a submission and a message cost the same with 3,000 clients as with 100', async () => {
    const submitFrom = (ip: string, n: number) =>
      t.app.inject({
        method: 'POST',
        url: '/api/v1/tasks',
        remoteAddress: ip,
        payload: validTask({ delivery: 'status_poll', contact_email: undefined, description: `Crowd ${ip} ${n}: count the benches.` }),
      });
    const messageFrom = (ip: string) =>
      t.app.inject({
        method: 'POST',
        url: '/api/v1/messages',
        remoteAddress: ip,
        payload: { message: `From ${ip}: is the service open?`, reply_to: 'agent@mail.example-agent.dev' },
      });
    const measure = async (crowd: number): Promise<Work> => {
      const known: string[] = [];
      for (let i = 0; i < crowd; i += 50) {
        const batch = Array.from({ length: Math.min(50, crowd - i) }, () => address());
        known.push(...batch);
        const answers = await Promise.all(batch.map((ip) => submitFrom(ip, 0)));
        for (const answer of answers) expect(answer.statusCode).toBe(202);
      }
      statements.mockClear();
      keysBuilt.mockClear();
      for (let i = 0; i < 25; i++) {
        for (const ip of [address(), known[i] as string]) {
          expect((await submitFrom(ip, 1)).statusCode).toBe(202);
          expect((await messageFrom(ip)).statusCode).toBe(201);
        }
      }
      return { statements: statements.mock.calls.length / 100, keys: keysBuilt.mock.calls.length / 100, onRequestPath: 0 };
    };
    const small = await measure(100);
    const large = await measure(3000);
    expect(large.statements).toBeLessThanOrEqual(small.statements * 1.5);
    expect(large.keys).toBeLessThanOrEqual(small.keys * 1.5);
  }, 120_000);
});

describe.each(STORES)('read limits stay exact under 3,000 distinct clients on %s', (store) => {
  const t = useTestApp({ store, env: { READ_LIMIT_PER_MINUTE: '3' } });

  it('gives each of 3,000 clients exactly its 3 reads, counting RateLimit-Remaining down, then 429', async () => {
    const created = await postJson(`${t.url}/api/v1/tasks`, validTask({ delivery: 'status_poll', contact_email: undefined }));
    const { task_id } = (await created.json()) as { task_id: string };
    const clients = Array.from({ length: 3000 }, () => address());
    const seen = new Map<string, string[]>();
    // Round by round, so every client's entry lives among 2,999 others.
    for (let round = 0; round < 4; round++) {
      for (let i = 0; i < clients.length; i += 100) {
        const batch = clients.slice(i, i + 100);
        const answers = await Promise.all(batch.map((ip) => t.app.inject({ method: 'GET', url: `/api/v1/tasks/${task_id}`, remoteAddress: ip })));
        answers.forEach((answer, j) => {
          const ip = batch[j] as string;
          const outcome =
            answer.statusCode === 200 ? `200:${answer.headers['ratelimit-remaining']}` : `${answer.statusCode}:${answer.json<{ limit?: string }>().limit}`;
          seen.set(ip, [...(seen.get(ip) ?? []), outcome]);
        });
      }
    }
    const wrong = [...seen].filter(([, outcomes]) => outcomes.join(' ') !== '200:2 200:1 200:0 429:reads_per_minute');
    expect(wrong.slice(0, 3)).toEqual([]);
    await t.deps.abuse.reads.sync();
    const rows = await t.store.db.selectFrom('counters').select(['count']).where('key', 'like', 'reads:m:%').execute();
    // Every admitted read reached the shared counter, once (the creator's read of nothing: none).
    expect(rows.reduce((sum, r) => sum + Number(r.count), 0)).toBe(3000 * 3);
  }, 120_000);
});

describe.runIf(STORES.includes('postgres'))('read limits shared by two instances under 3,000 distinct clients on PostgreSQL', () => {
  let a: TestApp | undefined;
  let b: TestApp | undefined;
  afterEach(async () => {
    await b?.close();
    await a?.close();
  });

  it('counts every read once, and each instance refuses once it has flushed', async () => {
    // One frozen minute for both instances: on a loaded machine the reads below can take longer
    // than the rest of a wall-clock minute, and reads split over two windows count twice as few.
    const clock = new TestClock('2030-03-10T10:00:05.000Z');
    a = await startTestApp({ store: 'postgres', clock, env: { READ_LIMIT_PER_MINUTE: '3' } });
    b = await startTestApp({ shareDatabaseWith: a, clock, env: { READ_LIMIT_PER_MINUTE: '3' } });
    const created = await postJson(`${a.url}/api/v1/tasks`, validTask({ delivery: 'status_poll', contact_email: undefined }));
    const { task_id } = (await created.json()) as { task_id: string };
    const url = `/api/v1/tasks/${task_id}`;
    const clients = Array.from({ length: 3000 }, () => address());
    const readAll = async (app: TestApp): Promise<number[]> => {
      const statuses: number[] = [];
      for (let i = 0; i < clients.length; i += 100) {
        const batch = clients.slice(i, i + 100);
        const answers = await Promise.all(batch.map((ip) => app.app.inject({ method: 'GET', url, remoteAddress: ip })));
        statuses.push(...answers.map((answer) => answer.statusCode));
      }
      return statuses;
    };
    // Two reads on A, one on B: each instance counts its own exactly.
    for (let i = 0; i < 2; i++) expect(new Set(await readAll(a))).toEqual(new Set([200]));
    expect(new Set(await readAll(b))).toEqual(new Set([200]));
    await a.deps.abuse.reads.sync();
    await b.deps.abuse.reads.sync();
    // The shared total is 3 for every client; B learnt it with its flush, so its next read is the
    // limit's last... already used: refused. A learns it at its next flush after a read there.
    expect(new Set(await readAll(b))).toEqual(new Set([429]));
    const rows = await a.store.db.selectFrom('counters').select(['count']).where('key', 'like', 'reads:m:%').execute();
    expect(rows).toHaveLength(3000);
    expect(new Set(rows.map((r) => Number(r.count)))).toEqual(new Set([3]));
  }, 120_000);
});
