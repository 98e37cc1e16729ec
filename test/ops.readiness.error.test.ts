import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STORES, startTestApp, type TestApp, useTestApp } from './support/app.js';

interface ErrorBody {
  error: string;
  details: string[];
}

async function ready(t: TestApp): Promise<{ status: number; retryAfter: string | null; body: ErrorBody }> {
  const res = await fetch(`${t.url}/api/v1/health/ready`);
  return { status: res.status, retryAfter: res.headers.get('retry-after'), body: (await res.json()) as ErrorBody };
}

describe.each(STORES)('readiness failures on %s', (store) => {
  const t = useTestApp({ store });

  it('is 503 service_unavailable while the background workers do not run (liveness stays 200)', async () => {
    const answer = await ready(t);
    expect(answer.status).toBe(503);
    expect(answer.retryAfter).toBe('5');
    expect(answer.body.error).toBe('service_unavailable');
    expect(answer.body.details).toEqual(['workers: mail is not running', 'workers: webhooks is not running', 'workers: retention is not running']);
    expect((await fetch(`${t.url}/api/v1/health`)).status).toBe(200);
  });

  it('is 503 naming the migrations the store has not applied', async () => {
    await sql`delete from kysely_migration where name = '100_retention'`.execute(t.store.db);
    const answer = await ready(t);
    expect(answer.status).toBe(503);
    expect(answer.body.details).toContain('migrations: 1 not applied (100_retention)');
  });
});

describe('readiness when the store does not answer', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ background: true });
  });
  afterAll(async () => {
    await t.background?.stop();
    await t.app.close();
  });

  it('is 503 naming the store, never a 500 or a hang', async () => {
    expect((await ready(t)).status).toBe(200);
    await t.store.close();
    const answer = await ready(t);
    expect(answer.status).toBe(503);
    expect(answer.body.details).toEqual(['store: not answering']);
    await t.background?.stop();
    expect((await ready(t)).body.details).toContain('workers: mail is not running');
  });
});
