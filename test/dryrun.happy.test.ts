import type { Client } from '@modelcontextprotocol/client';
import { describe, expect, it } from 'vitest';
import { connectModern } from './mcp.modern.support.js';
import { call, useMcpClient } from './mcp.support.js';
import { postJson, STORES, TestClock, useSuiteResource, useTestApp, validTask } from './support/app.js';
import { rowCounts } from './support/row-counts.js';

/**
 * Know before you ask (docs/coverage.md): a dry run that would be accepted answers 200 with the
 * limits that apply and stores nothing; it is a read; MCP's submit_human_task takes dry_run, and
 * get_human_services carries the coverage, on both protocol revisions.
 */

type Json = Record<string, unknown>;
let nextIp = 1;
const newClient = () => ({ 'x-forwarded-for': `192.0.2.${nextIp++}` });

describe.each(STORES)('dry run on %s', (store) => {
  const clock = new TestClock('2030-03-10T10:15:30.000Z');
  const t = useTestApp({ store, clock, limits: 'production', env: { TRUST_PROXY: '1' } });
  const mcp = useMcpClient(t);
  const modern = useSuiteResource<Client>(
    () => connectModern(t),
    (client) => client.close(),
  );
  const dryRun = (body: unknown, headers: Record<string, string>) => postJson(`${t.url}/api/v1/tasks?dry_run=true`, body, headers);

  it('answers would_accept with the limits that apply, stores nothing, and counts as a read', async () => {
    const client = newClient();
    const before = await rowCounts(t.store.db);
    const res = await dryRun(validTask(), client);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      dry_run: true,
      would_accept: true,
      limits: { tasks_per_hour: { limit: 3, remaining: 3 }, tasks_per_day: { limit: 5, remaining: 5 }, status_poll_per_day: { limit: 1, remaining: 1 } },
    });
    expect(res.headers.get('ratelimit-policy')).toBe('600;w=60;comment="address"');
    expect(res.headers.get('ratelimit-limit')).toBe('600');
    expect(res.headers.get('location')).toBeNull();
    expect(await rowCounts(t.store.db)).toEqual(before);

    // The same client submits for real: the next dry run sees the units it used.
    expect((await postJson(`${t.url}/api/v1/tasks`, validTask({ delivery: 'status_poll', contact_email: undefined }), client)).status).toBe(202);
    const after = (await (await dryRun(validTask(), client)).json()) as Json;
    expect(after.limits).toEqual({
      tasks_per_hour: { limit: 3, remaining: 2 },
      tasks_per_day: { limit: 5, remaining: 4 },
      status_poll_per_day: { limit: 1, remaining: 0 },
    });
  });

  it('lists unknown fields in warnings, as a submission does', async () => {
    const res = await dryRun(validTask({ colour: 'blue' }), newClient());
    expect(res.status).toBe(200);
    expect(((await res.json()) as Json).warnings).toEqual([expect.stringContaining('colour')]);
  });

  it('dry_run=false is an ordinary submission', async () => {
    const res = await postJson(`${t.url}/api/v1/tasks?dry_run=false`, validTask(), newClient());
    expect(res.status).toBe(202);
  });

  it('MCP: submit_human_task with dry_run: true checks and creates nothing, on both revisions', async () => {
    const before = await rowCounts(t.store.db);
    const legacy = await call(mcp, 'submit_human_task', { ...validTask(), dry_run: true });
    expect(legacy.isError).toBeFalsy();
    expect(legacy.structuredContent).toMatchObject({ dry_run: true, would_accept: true, limits: { tasks_per_hour: { limit: 3 } } });
    const v2 = (await modern.callTool({ name: 'submit_human_task', arguments: { ...validTask(), dry_run: true } })) as {
      structuredContent: Json;
      isError?: boolean;
    };
    expect(v2.isError).toBeFalsy();
    expect(v2.structuredContent).toMatchObject({ dry_run: true, would_accept: true });
    const refused = await call(mcp, 'submit_human_task', { ...validTask({ contact_email: 'agent@example.com' }), dry_run: true });
    expect(refused.isError).toBe(true);
    expect(refused.structuredContent.error).toBe('validation_failed');
    const odd = await call(mcp, 'submit_human_task', { ...validTask(), dry_run: 'yes' });
    expect(odd.isError).toBe(true);
    expect(odd.structuredContent.details).toEqual(['dry_run must be true or false']);
    expect(await rowCounts(t.store.db)).toEqual(before);
  });

  it('MCP: get_human_services carries the coverage, on both revisions', async () => {
    const legacy = await call(mcp, 'get_human_services');
    const coverage = legacy.structuredContent.coverage as Json;
    expect(coverage).toMatchObject({ accepting: true, response_target_hours: 12 });
    expect((coverage.by_type as unknown[]).length).toBe(10);
    const v2 = (await modern.callTool({ name: 'get_human_services', arguments: {} })) as { structuredContent: Json };
    expect((v2.structuredContent.coverage as Json).by_type).toEqual(coverage.by_type);
    expect((legacy.structuredContent.endpoints as Json).rest_coverage).toMatch(/\/api\/v1\/coverage$/);
  });
});
