import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postJson, startTestApp, type TestApp, validTask } from './support/app.js';
import { canMountTmpfs, fillDisk, freeDisk, mountSmallTmpfs, unmountTmpfs } from './support/full-disk.js';
import { waitUntil } from './support/smtp.js';

/**
 * Readiness tells the truth about writes (issue 34, item 5): with the store refusing writes,
 * health said 503 SQLITE_FULL while readiness said 200 "store: ok", so a load balancer kept
 * sending writes to an instance that refused every one. Readiness fails while writes fail and
 * recovers by itself within seconds after.
 */

interface Answer {
  status: number;
  details: string[];
}

async function ready(t: TestApp): Promise<Answer> {
  const response = await fetch(`${t.url}/api/v1/health/ready`);
  const body = (await response.json()) as { details?: string[] };
  return { status: response.status, details: body.details ?? [] };
}

const pgUrl = process.env.TEST_POSTGRES_URL;

describe.skipIf(!canMountTmpfs)('readiness on SQLite with a full disk (a small tmpfs, needs root)', () => {
  let mount: string;
  let t: TestApp;
  beforeAll(async () => {
    mount = mountSmallTmpfs('hts-ready-full-');
    t = await startTestApp({ background: true, env: { DATABASE_URL: `sqlite:${path.join(mount, 'service.db')}` } });
  });
  afterAll(async () => {
    await t?.close();
    unmountTmpfs(mount);
  });

  it('is 503 naming SQLITE_FULL while submissions are refused, and ready again once space returns', async () => {
    expect((await ready(t)).status).toBe(200);
    fillDisk(mount);
    let refused = 0;
    for (let i = 0; i < 40 && refused === 0; i += 1) {
      const response = await postJson(`${t.url}/api/v1/tasks`, validTask({ description: `Pages to use up ${'x'.repeat(3000)} ${i}` }));
      await response.arrayBuffer();
      if (response.status === 503) refused += 1;
    }
    expect(refused).toBe(1);
    const answer = await ready(t);
    expect(answer.status).toBe(503);
    expect(answer.details.join(' ')).toContain('SQLITE_FULL');

    freeDisk(mount);
    await waitUntil(async () => (await ready(t)).status === 200, 10_000, 'readiness to return to 200');
    expect((await postJson(`${t.url}/api/v1/tasks`, validTask())).status).toBe(202);
  });
});

describe.skipIf(!pgUrl)('readiness on PostgreSQL refusing writes (an injected disk-full fault)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ store: 'postgres', background: true });
  });
  afterAll(async () => {
    await t?.close();
  });

  it('is 503 while writes fail with 53100 disk_full, and ready again within seconds after', async () => {
    expect((await ready(t)).status).toBe(200);
    // Every write to the tables a submission and the write probe touch fails as a full disk would.
    await sql`create function fail_as_disk_full() returns trigger language plpgsql as $$ begin raise exception 'could not extend file' using errcode = '53100'; end $$`.execute(
      t.store.db,
    );
    for (const table of ['store_probe', 'tasks']) {
      await sql`create trigger fail_as_disk_full before insert or update on ${sql.table(table)} for each statement execute function fail_as_disk_full()`.execute(
        t.store.db,
      );
    }
    const refused = await postJson(`${t.url}/api/v1/tasks`, validTask());
    expect(refused.status).toBe(503);
    await waitUntil(async () => (await ready(t)).status === 503, 5000, 'readiness to fail');
    expect((await ready(t)).details.join(' ')).toContain('53100');
    // Reads still work: liveness of the process is not the point of readiness.
    expect((await fetch(`${t.url}/openapi.json`)).status).toBe(200);

    for (const table of ['store_probe', 'tasks']) await sql`drop trigger fail_as_disk_full on ${sql.table(table)}`.execute(t.store.db);
    const healed = Date.now();
    await waitUntil(async () => (await ready(t)).status === 200, 10_000, 'readiness to return to 200');
    expect(Date.now() - healed).toBeLessThan(5000);
    expect((await postJson(`${t.url}/api/v1/tasks`, validTask())).status).toBe(202);
  });
});
