import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './support/app.js';
import { adminGet } from './operator.support.js';

describe('GET /metrics while the store does not answer', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await t.app.close();
  });

  it('still renders (never a 500), keeps the last values and counts the store errors', async () => {
    const before = await (await adminGet(t, '/metrics')).text();
    expect(before).toMatch(/^hts_store_errors_total 0$/m);
    await t.store.close();

    const health = await fetch(`${t.url}/api/v1/health`);
    expect(health.status).toBe(503);
    const res = await adminGet(t, '/metrics');
    expect(res.status).toBe(200);
    const body = await res.text();
    const errors = Number(/^hts_store_errors_total (\d+)$/m.exec(body)?.[1]);
    // The failed health ping, and each scrape-time query that failed.
    expect(errors).toBeGreaterThanOrEqual(2);
    expect(body).toMatch(/^hts_tasks\{status="submitted"\} 0$/m);
  });
});
