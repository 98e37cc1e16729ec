import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.js';
import { initDeps } from '../src/deps.js';
import type { ApiVersion } from '../src/docs/versions.js';
import { SERVICE_VERSION } from '../src/version.js';
import { arr, getJson, type Json } from './docs.support.js';
import { STORES, startTestApp, type TestApp, TestClock } from './support/app.js';

/**
 * The versioning machinery, exercised with a test-only "v0" that is deprecated in favour of v1:
 * its responses carry Deprecation (RFC 9745), Sunset (RFC 8594) and a successor-version link, the
 * manifest lists the notice, and v1 stays silent.
 */
describe.each(STORES)('API version deprecation on %s', (store) => {
  let t: TestApp;
  const clock = new TestClock('2030-03-10T10:00:00.000Z');
  const deprecatedAt = '2030-01-01T00:00:00.000Z';
  const sunsetAt = '2030-06-30T00:00:00.000Z';

  const v0: ApiVersion = { version: 'v0', prefix: '/api/v0/', deprecated_at: deprecatedAt, sunset_at: sunsetAt, successor: '/api/v1/' };

  beforeAll(async () => {
    t = await startTestApp({ store, clock, apiVersions: [v0] });
  });
  afterAll(async () => {
    await t.close();
  });

  /** An app with one v0 route, built by the production builder on the same dependencies. */
  async function withV0Route<T>(run: (app: Awaited<ReturnType<typeof buildApp>>) => Promise<T>, version: ApiVersion = v0): Promise<T> {
    // Fresh dependencies on the same store, so this second app shares no state with the listening one.
    const deps = await initDeps(t.config, t.store, { clock, log: t.deps.log, version: SERVICE_VERSION, apiVersions: [version] });
    const app = await buildApp(deps);
    app.get('/api/v0/ping', { config: { kind: 'none' } }, async () => ({ pong: true }));
    await app.ready();
    try {
      return await run(app);
    } finally {
      await app.close();
    }
  }

  it('adds Deprecation, Sunset and a successor link to a deprecated version’s responses', async () => {
    await withV0Route(async (app) => {
      const res = await app.inject({ method: 'GET', url: '/api/v0/ping' });
      expect(res.statusCode).toBe(200);
      expect(res.headers.deprecation).toBe(`@${Date.parse(deprecatedAt) / 1000}`);
      expect(res.headers.sunset).toBe('Sun, 30 Jun 2030 00:00:00 GMT');
      expect(res.headers.link).toBe(`<${t.config.baseUrl}/api/v1/>; rel="successor-version"`);
      // Errors of that version carry them too.
      const missing = await app.inject({ method: 'GET', url: '/api/v0/nothing' });
      expect(missing.statusCode).toBe(404);
      expect(missing.headers.deprecation).toBeDefined();
    });
  });

  it('emits nothing for v1, the current version', async () => {
    for (const path of ['/api/v1/health', '/api/v1/services', '/agent.json', '/api/v1/tasks/task-2030-00000000000000000000000000000000']) {
      const res = await fetch(`${t.url}${path}`);
      expect(res.headers.get('deprecation'), path).toBeNull();
      expect(res.headers.get('sunset'), path).toBeNull();
      expect(res.headers.get('link') ?? '', path).not.toMatch(/successor-version/);
    }
  });

  it('lists the notice in the platform manifest', async () => {
    const manifest = await getJson(t, '/agent.json');
    const versions = manifest.api_versions as Json;
    expect(versions.current).toBe('v1');
    expect(arr(versions, 'deprecations')).toEqual([
      expect.objectContaining({ version: 'v0', deprecated_at: deprecatedAt, sunset_at: sunsetAt, successor: `${t.config.baseUrl}/api/v1/` }),
    ]);
    expect(String(arr(versions, 'deprecations')[0]?.notice)).toMatch(/deprecated.*90 days/);
    expect(arr(versions, 'versions').map((v) => [v.version, v.status])).toEqual([
      ['v1', 'current'],
      ['v0', 'deprecated'],
    ]);
  });

  it('announces a deprecation ahead of its date without sending the headers yet', async () => {
    const ahead: ApiVersion = { version: 'v0', prefix: '/api/v0/', deprecated_at: '2031-01-01T00:00:00.000Z', sunset_at: '2031-06-30T00:00:00.000Z' };
    try {
      await withV0Route(async (app) => {
        const res = await app.inject({ method: 'GET', url: '/api/v0/ping' });
        expect(res.headers.deprecation).toBeUndefined();
        expect(res.headers.sunset).toBeUndefined();
        clock.set('2031-01-02T00:00:00.000Z');
        const later = await app.inject({ method: 'GET', url: '/api/v0/ping' });
        expect(later.headers.deprecation).toBe(`@${Date.parse('2031-01-01T00:00:00.000Z') / 1000}`);
        expect(later.headers.link).toBeUndefined();
        const manifest = JSON.parse((await app.inject({ method: 'GET', url: '/agent.json' })).body) as Json;
        expect(arr(manifest.api_versions, 'deprecations')[0]?.deprecated_at).toBe('2031-01-01T00:00:00.000Z');
      }, ahead);
    } finally {
      clock.set('2030-03-10T10:00:00.000Z');
    }
  });
});
