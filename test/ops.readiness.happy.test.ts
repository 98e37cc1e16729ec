import { describe, expect, it } from 'vitest';
import { STORES, useTestApp } from './support/app.js';

describe.each(STORES)('readiness on %s', (store) => {
  const t = useTestApp({ store, background: true });

  it('answers 200 ready with each check once the store answers, migrations are applied and workers run', async () => {
    const res = await fetch(`${t.url}/api/v1/health/ready`);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ status: 'ready', checks: { store: 'ok', migrations: 'ok', workers: 'ok' } });
    // Liveness is unchanged.
    expect((await fetch(`${t.url}/api/v1/health`)).status).toBe(200);
  });

  it('is in the OpenAPI document beside health', async () => {
    const doc = (await (await fetch(`${t.url}/openapi.json`)).json()) as { paths: Record<string, { get?: { responses: Record<string, unknown> } }> };
    expect(Object.keys(doc.paths['/api/v1/health/ready']?.get?.responses ?? {})).toEqual(expect.arrayContaining(['200', '503']));
  });
});
