import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { postJson, startTestApp, validTask, type TestApp } from './support/app.js';

/**
 * Store faults (issue 15, defects 1 and 2): a PostgreSQL connection loss must never end the
 * process, every endpoint that needs the store answers 503 with Retry-After while it is gone, and
 * the service recovers by itself.
 */

const pgUrl = process.env.TEST_POSTGRES_URL;
let app: TestApp | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

/** Terminates every backend of the app's own database (never another test's). */
async function terminateBackends(databaseUrl: string): Promise<number> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const result = await client.query('SELECT count(pg_terminate_backend(pid)) AS n FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()');
    return Number((result.rows[0] as { n: string }).n);
  } finally {
    await client.end();
  }
}

describe.skipIf(!pgUrl)('PostgreSQL backends terminated under load', () => {
  it('keeps the process alive, loses nothing acknowledged and is healthy again within 10 s', async () => {
    app = await startTestApp({ store: 'postgres' });
    const base = app.url;
    const acknowledged: string[] = [];
    const statuses: number[] = [];
    let running = true;
    const traffic = (async () => {
      while (running) {
        const batch = await Promise.all(
          Array.from({ length: 8 }, async () => {
            const response = await postJson(`${base}/api/v1/tasks`, validTask());
            if (response.status === 202) acknowledged.push(((await response.json()) as { task_id: string }).task_id);
            else await response.arrayBuffer();
            return response.status;
          }),
        );
        statuses.push(...batch);
      }
    })();
    for (let round = 0; round < 5; round += 1) {
      await new Promise((r) => setTimeout(r, 300));
      await terminateBackends(app.config.databaseUrl);
    }
    running = false;
    await traffic;
    // Refused requests are 503 with the contract body, never a 500.
    expect(statuses.filter((s) => s !== 202 && s !== 503)).toEqual([]);
    const deadline = Date.now() + 10_000;
    let healthy = 0;
    while (Date.now() < deadline) {
      healthy = (await fetch(`${base}/api/v1/health`)).status;
      if (healthy === 200) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(healthy).toBe(200);
    for (const id of acknowledged) expect((await fetch(`${base}/api/v1/tasks/${id}`)).status).toBe(200);
    expect(acknowledged.length).toBeGreaterThan(0);
  });
});
