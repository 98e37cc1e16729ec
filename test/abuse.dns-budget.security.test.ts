import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { postJson, STORES, startTestApp, TestClock, useTestApp, validTask } from './support/app.js';
import { sharedDnsServer } from './support/dns-server.js';

/**
 * Issue 33, finding 1: the DNS look-ups one client can cause. Each MX check that needs a query
 * draws on a per-client budget (EMAIL_LOOKUP_LIMIT_PER_MINUTE, counted in the shared store, so
 * across instances); an address on a domain that does not exist counts toward auto-block; and the
 * quota is taken before the look-up, so a burst of requests on slow uncached domains causes no
 * more look-ups than the quota has units. Counted on a local DNS server that logs every query.
 */

type Json = Record<string, unknown>;

/** A label no other test uses, so this test's queries can be told apart on the shared DNS server. */
const run = () => randomBytes(6).toString('hex');

async function queriesFor(marker: string): Promise<number> {
  const dns = await sharedDnsServer();
  return dns.queries.filter((q) => q.name.includes(marker)).length;
}

const message = (replyTo: string): Json => ({ message: 'A question about a task I sent.', reply_to: replyTo });

async function statusAndLimit(res: Response): Promise<string> {
  const body = (await res.json()) as Json;
  return res.status === 429 ? `429 ${String(body.limit)}` : String(res.status);
}

function tally(results: string[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const r of results) counts[r] = (counts[r] ?? 0) + 1;
  return counts;
}

describe.each(STORES)('the look-up budget on %s', (store) => {
  const clock = new TestClock();
  const t = useTestApp({ store, clock, limits: 'production', env: { TRUST_PROXY: '1', EMAIL_LOOKUP_LIMIT_PER_MINUTE: '5', AUTO_BLOCK_REFUSALS: '1000' } });

  it('a flood of addresses on fresh non-existent domains makes at most the budget of DNS queries', async () => {
    const marker = run();
    const xff = { 'x-forwarded-for': '198.51.100.31' };
    const results: string[] = [];
    for (let i = 0; i < 30; i++) results.push(await statusAndLimit(await postJson(`${t.url}/api/v1/messages`, message(`a@d${i}.nxdomain-${marker}.dev`), xff)));
    expect(tally(results)).toEqual({ '422': 5, '429 email_lookups_per_minute': 25 });
    expect(await queriesFor(marker)).toBe(5);
    // The same for tasks, concurrently, from another client.
    const tasks = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        postJson(`${t.url}/api/v1/tasks`, validTask({ contact_email: `a@t${i}.nxdomain-${marker}.dev` }), { 'x-forwarded-for': '198.51.100.32' }).then(
          statusAndLimit,
        ),
      ),
    );
    expect(await queriesFor(marker)).toBeLessThanOrEqual(10);
    expect(tasks.filter((r) => r === '422').length).toBeLessThanOrEqual(5);
    expect(tasks.filter((r) => r === '202')).toEqual([]);
    // The 422s used no quota: in the next minute a good address is accepted.
    clock.advance(60_000);
    expect((await postJson(`${t.url}/api/v1/messages`, message(`ok@fine-${marker}.dev`), xff)).status).toBe(201);
  });

  it('takes the quota before the look-up: 100 messages at once on slow uncached domains cause at most 3 look-ups', async () => {
    const marker = run();
    const results = await Promise.all(
      Array.from({ length: 100 }, (_, i) =>
        postJson(`${t.url}/api/v1/messages`, message(`a@m${i}.slow-${marker}.dev`), { 'x-forwarded-for': '198.51.100.33' }).then(statusAndLimit),
      ),
    );
    expect(tally(results)).toEqual({ '201': 3, '429 messages_per_hour': 97 });
    expect(await queriesFor(marker)).toBe(3);
  });

  it('and the same for 100 tasks at once', async () => {
    const marker = run();
    const results = await Promise.all(
      Array.from({ length: 100 }, (_, i) =>
        postJson(`${t.url}/api/v1/tasks`, validTask({ contact_email: `a@t${i}.slow-${marker}.dev` }), { 'x-forwarded-for': '198.51.100.34' }).then(
          statusAndLimit,
        ),
      ),
    );
    expect(tally(results)).toEqual({ '202': 3, '429 tasks_per_hour': 97 });
    expect(await queriesFor(marker)).toBe(3);
    // The units taken for the refused ones were given back or never taken: the hour shows 3 used.
    const reads = await postJson(`${t.url}/api/v1/tasks`, validTask(), { 'x-forwarded-for': '198.51.100.34' });
    expect(reads.status).toBe(429);
    expect(reads.headers.get('ratelimit-remaining')).toBe('0');
  });

  it('a duplicate or a refused submission gives back the units it took before its look-up', async () => {
    const xff = { 'x-forwarded-for': '198.51.100.35' };
    const body = validTask();
    expect((await postJson(`${t.url}/api/v1/tasks`, body, xff)).status).toBe(202);
    for (let i = 0; i < 5; i++) expect((await postJson(`${t.url}/api/v1/tasks`, body, xff)).status).toBe(409);
    const second = await postJson(`${t.url}/api/v1/tasks`, validTask(), xff);
    expect(second.status).toBe(202);
    expect(second.headers.get('ratelimit-remaining')).toBe('1');
  });
});

describe.each(STORES)('non-existent domains and auto-block on %s', (store) => {
  const t = useTestApp({ store, limits: 'production', env: { TRUST_PROXY: '1' } });

  it('refusals for a domain that does not exist count toward auto-block (10 by default)', async () => {
    const marker = run();
    const xff = { 'x-forwarded-for': '198.51.100.41' };
    const results: string[] = [];
    for (let i = 0; i < 40; i++) results.push(await statusAndLimit(await postJson(`${t.url}/api/v1/messages`, message(`a@d${i}.nxdomain-${marker}.dev`), xff)));
    expect(tally(results)).toEqual({ '422': 10, '403': 30 });
    expect(await queriesFor(marker)).toBe(10);
    expect((await postJson(`${t.url}/api/v1/messages`, message('agent@mail.example-agent.dev'), xff)).status).toBe(403);
    // Other refusals of the address (a null MX, no mail host) are an agent's mistake, not counted.
    const other = { 'x-forwarded-for': '198.51.100.42' };
    for (let i = 0; i < 3; i++) {
      for (const kind of ['null-mx', 'no-records']) {
        expect((await postJson(`${t.url}/api/v1/messages`, message(`a@x${i}.${kind}-${marker}.dev`), other)).status).toBe(422);
      }
    }
    expect((await postJson(`${t.url}/api/v1/messages`, message('agent@mail.example-agent.dev'), other)).status).toBe(201);
  });
});

describe.skipIf(!STORES.includes('postgres'))('the look-up budget across instances on postgres', () => {
  it('two instances on one database share one budget', async () => {
    const env = { TRUST_PROXY: '1', EMAIL_LOOKUP_LIMIT_PER_MINUTE: '5', AUTO_BLOCK_REFUSALS: '1000' };
    const a = await startTestApp({ store: 'postgres', limits: 'production', env });
    const b = await startTestApp({ limits: 'production', env, shareDatabaseWith: a });
    try {
      const marker = run();
      const results: string[] = [];
      for (let i = 0; i < 20; i++) {
        const app = i % 2 === 0 ? a : b;
        results.push(
          await statusAndLimit(await postJson(`${app.url}/api/v1/messages`, message(`a@d${i}.nxdomain-${marker}.dev`), { 'x-forwarded-for': '198.51.100.51' })),
        );
      }
      expect(tally(results)).toEqual({ '422': 5, '429 email_lookups_per_minute': 15 });
      expect(await queriesFor(marker)).toBe(5);
    } finally {
      await b.close();
      await a.close();
    }
  });
});
