import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postJson, startTestApp, type TestApp, validTask } from './support/app.js';
import { sharedDnsServer } from './support/dns-server.js';

/**
 * Smaller points of issue 15 (defect 9): JSON responses carry nosniff and a Cache-Control (status
 * reads `private, no-cache` with an ETag, errors `no-store`); a body in another charset is a 415;
 * MX lookups happen only after the cheap quota checks.
 */

describe('JSON response headers and charsets', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  it('marks errors no-store and nosniff', async () => {
    const res = await postJson(`${t.url}/api/v1/tasks`, { task_type: 'nope' });
    expect(res.status).toBe(422);
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('cache-control')).toBe('no-store');
    const missing = await fetch(`${t.url}/api/v1/tasks/task-2030-00000000000000000000000000000000`);
    expect(missing.headers.get('cache-control')).toBe('no-store');
  });

  it('marks a submission no-store and nosniff', async () => {
    const res = await postJson(`${t.url}/api/v1/tasks`, validTask());
    expect(res.status).toBe(202);
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('cache-control')).toBe('no-store');
  });

  it('gives status reads private, no-cache with an ETag, and 304 when it still matches', async () => {
    const { task_id } = (await (await postJson(`${t.url}/api/v1/tasks`, validTask())).json()) as { task_id: string };
    const first = await fetch(`${t.url}/api/v1/tasks/${task_id}`);
    expect(first.status).toBe(200);
    expect(first.headers.get('cache-control')).toBe('private, no-cache');
    expect(first.headers.get('x-content-type-options')).toBe('nosniff');
    const etag = first.headers.get('etag');
    expect(etag).toMatch(/^"[\w-]+"$/);
    const again = await fetch(`${t.url}/api/v1/tasks/${task_id}`, { headers: { 'if-none-match': etag ?? '' } });
    expect(again.status).toBe(304);
    expect(await again.text()).toBe('');
    const other = await fetch(`${t.url}/api/v1/tasks/${task_id}`, { headers: { 'if-none-match': '"something-else"' } });
    expect(other.status).toBe(200);
  });

  it('refuses a body declared in another charset with 415, and accepts UTF-8 declared or not', async () => {
    const body = JSON.stringify(validTask({ description: 'Café opening hours on Sunday, please check them in person.' }));
    const latin = await postJson(`${t.url}/api/v1/tasks`, body, { 'content-type': 'application/json; charset=iso-8859-1' });
    expect(latin.status).toBe(415);
    expect(((await latin.json()) as { error: string }).error).toBe('unsupported_media_type');
    const utf8 = await postJson(`${t.url}/api/v1/tasks`, body, { 'content-type': 'application/json; charset=UTF-8' });
    expect(utf8.status).toBe(202);
    const plain = await postJson(`${t.url}/api/v1/tasks`, JSON.stringify(validTask()), { 'content-type': 'application/json' });
    expect(plain.status).toBe(202);
  });
});

describe('MX lookups after the quota checks', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ limits: 'production', env: { TRUST_PROXY: '1' } });
  });
  afterAll(async () => {
    await t.close();
  });

  it('does not query DNS for a client whose quota is used up', async () => {
    const dns = await sharedDnsServer();
    const headers = { 'x-forwarded-for': '198.51.100.99' };
    for (let i = 0; i < 3; i += 1) expect((await postJson(`${t.url}/api/v1/tasks`, validTask(), headers)).status).toBe(202);
    const domain = `fresh-${Math.random().toString(36).slice(2)}.example-agent.dev`;
    const refused = await postJson(`${t.url}/api/v1/tasks`, validTask({ contact_email: `agent@${domain}` }), headers);
    expect(refused.status).toBe(429);
    expect(dns.queries.some((q) => q.name.includes(domain))).toBe(false);
    // The same address from a client with quota left is looked up.
    expect((await postJson(`${t.url}/api/v1/tasks`, validTask({ contact_email: `agent@${domain}` }), { 'x-forwarded-for': '198.51.100.98' })).status).toBe(202);
    expect(dns.queries.some((q) => q.name.includes(domain))).toBe(true);
  });
});
