import { describe, expect, it } from 'vitest';
import { postJson, STORES, TestClock, useTestApp, validTask } from './support/app.js';
import { rowCounts } from './support/row-counts.js';

/**
 * A dry run cannot be used to grind the checks or to plant state: it is a read (limited per
 * minute, no store growth however many), and its Idempotency-Key is looked up, never recorded.
 */

type Json = Record<string, unknown>;
let nextIp = 1;
const newClient = () => ({ 'x-forwarded-for': `203.0.113.${100 + nextIp++}` });

describe.each(STORES)('dry run abuse on %s', (store) => {
  const clock = new TestClock('2030-03-10T10:15:30.000Z');
  const t = useTestApp({ store, clock, limits: 'production', env: { TRUST_PROXY: '1', READ_LIMIT_PER_MINUTE: '40' } });
  const dryRun = (body: unknown, headers: Record<string, string>) => postJson(`${t.url}/api/v1/tasks?dry_run=true`, body, headers);

  it('many dry runs from one client hit the read limit, and the store does not grow', async () => {
    const client = newClient();
    const before = await rowCounts(t.store.db);
    const statuses: number[] = [];
    let refusal: Json | undefined;
    for (let i = 0; i < 60; i++) {
      // Every kind: new e-mail domains (MX look-ups), invalid bodies, valid ones.
      const body = i % 3 === 0 ? validTask({ contact_email: `agent@grind-${i}.example-agent.dev` }) : i % 3 === 1 ? { task_type: 'x' } : validTask();
      const res = await dryRun(body, client);
      statuses.push(res.status);
      if (res.status === 429) refusal ??= (await res.json()) as Json;
      else await res.arrayBuffer();
    }
    expect(statuses.slice(40).every((s) => s === 429)).toBe(true);
    expect(statuses.slice(0, 40).includes(429)).toBe(false);
    expect(refusal).toMatchObject({ error: 'rate_limited', limit: 'reads_per_minute' });
    expect(await rowCounts(t.store.db)).toEqual(before);
    // Reads spent, not submissions: the client may still submit.
    clock.advance(60_000);
    expect((await postJson(`${t.url}/api/v1/tasks`, validTask(), client)).status).toBe(202);
  });

  it('a dry run with an Idempotency-Key records nothing under the key', async () => {
    const client = newClient();
    const key = { ...client, 'idempotency-key': 'dry-then-real-0001' };
    const first = validTask();
    expect((await dryRun(first, key)).status).toBe(200);
    // Another payload under the same key is not "reused": nothing was recorded.
    const other = await postJson(`${t.url}/api/v1/tasks`, validTask(), key);
    expect(other.status).toBe(202);
    expect(other.headers.get('idempotent-replayed')).toBeNull();
    // Once recorded by a real submission, a dry run of its replay is accepted, and of another payload refused as the submission would be.
    expect((await dryRun(validTask(), key)).status).toBe(422);
  });

  it('a blocked client gets 403 client_blocked from a dry run too', async () => {
    const client = newClient();
    const admin = { authorization: 'Bearer test-admin-key-0123456789' };
    expect((await postJson(`${t.url}/api/v1/admin/blocklist`, { kind: 'ip', value: client['x-forwarded-for'] }, admin)).status).toBe(201);
    const res = await dryRun(validTask({ delivery: 'status_poll', contact_email: undefined }), client);
    expect(res.status).toBe(403);
    expect(((await res.json()) as Json).error).toBe('client_blocked');
  });
});
