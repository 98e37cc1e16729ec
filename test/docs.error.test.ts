import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { arr, getJson, getText, type Json } from './docs.support.js';
import { STORES, startTestApp, type TestApp, useTestApp } from './support/app.js';

async function services(t: TestApp, query: string): Promise<{ status: number; body: Json }> {
  const res = await fetch(`${t.url}/api/v1/services?${query}`);
  return { status: res.status, body: (await res.json()) as Json };
}

describe.each(STORES)('documents and the services API refusing bad input on %s', (store) => {
  let cursor: string;
  const dir = mkdtempSync(path.join(tmpdir(), 'hts-docs-'));

  const t = useTestApp({ store });
  beforeAll(async () => {
    const first = await getJson(t, '/api/v1/services?limit=2');
    cursor = String(first.next_cursor);
  });
  afterAll(async () => {
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers 400 malformed_request to a limit outside 1–50 or not an integer', async () => {
    for (const limit of ['0', '51', '-1', 'abc', '1.5', '1e2', '99999999']) {
      const { status, body } = await services(t, `limit=${limit}`);
      expect(status, limit).toBe(400);
      expect(body.error, limit).toBe('malformed_request');
      expect(body.details, limit).toEqual(['limit must be an integer from 1 to 50']);
    }
  });

  it('answers 400 invalid_cursor to a cursor it did not issue', async () => {
    const [payload = '', mac = ''] = cursor.split('.');
    const flip = (s: string, i: number) => s.slice(0, i) + (s[i] === 'A' ? 'B' : 'A') + s.slice(i + 1);
    const other = (await getJson(t, '/api/v1/services?limit=5')).next_cursor as string;
    const forgedPayload = Buffer.from('custom-human-in-the-loop').toString('base64url');
    for (const bad of [
      'garbage',
      `${flip(payload, 0)}.${mac}`,
      `${payload}.${flip(mac, 3)}`,
      `${forgedPayload}.${mac}`,
      `${payload}.${other.split('.')[1] ?? ''}`,
      `${payload}.`,
      `.${mac}`,
      `${cursor}x`,
      'x'.repeat(500),
    ]) {
      const { status, body } = await services(t, `cursor=${encodeURIComponent(bad)}`);
      expect(status, bad).toBe(400);
      expect(body.error, bad).toBe('invalid_cursor');
      expect(String(body.message)).toMatch(/start again without a cursor/i);
    }
  });

  it('refuses a cursor issued by another deployment (another server secret)', async () => {
    const other = await startTestApp({ store });
    try {
      const foreign = String((await getJson(other, '/api/v1/services?limit=2')).next_cursor);
      expect((await services(t, `cursor=${encodeURIComponent(foreign)}`)).body.error).toBe('invalid_cursor');
    } finally {
      await other.close();
    }
  });

  it('accepts a cursor on another instance sharing the store, and refuses it once its entry left the catalog', async () => {
    const shared = await startTestApp({ shareDatabaseWith: t });
    try {
      const page = await getJson(shared, `/api/v1/services?limit=2&cursor=${encodeURIComponent(cursor)}`);
      expect(arr(page, 'services')[0]?.service_id).toBe(t.deps.catalog[2]?.service_id);
    } finally {
      await shared.close();
    }
    const smaller = path.join(dir, 'catalog.json');
    writeFileSync(smaller, JSON.stringify(t.deps.catalog.slice(2)));
    const edited = await startTestApp({ shareDatabaseWith: t, env: { CATALOG_FILE: smaller } });
    try {
      const res = await services(edited, `cursor=${encodeURIComponent(cursor)}`);
      expect(res.status).toBe(400);
      expect(res.body.error).toBe('invalid_cursor');
    } finally {
      await edited.close();
    }
  });

  it('answers 405 with Allow to a wrong method on a document, 404 to an unknown one', async () => {
    const post = await fetch(`${t.url}/agent.json`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toMatch(/GET/);
    expect(((await post.json()) as Json).error).toBe('method_not_allowed');
    const missing = await getText(t, '/.well-known/nothing-here.json');
    expect(missing.status).toBe(404);
  });

  it('answers 404 pages for unknown document pages, in HTML and markdown', async () => {
    const page = await getText(t, '/docs/nothing-here');
    expect(page.status).toBe(404);
    expect(page.type).toMatch(/^text\/html/);
    expect(page.text).toContain('There is no document called');
    const md = await getText(t, '/docs/nothing-here', { accept: 'text/markdown' });
    expect(md.status).toBe(404);
    expect(md.type).toMatch(/^text\/markdown/);
  });

  it('stops the start with the variable named when the profile or catalog file is bad', async () => {
    const badProfile = path.join(dir, 'profile.json');
    writeFileSync(badProfile, JSON.stringify({ operator: { name: '' } }));
    await expect(startTestApp({ store: 'sqlite', env: { PROFILE_FILE: badProfile } })).rejects.toThrow(/PROFILE_FILE/);
    const badCatalog = path.join(dir, 'bad-catalog.json');
    writeFileSync(badCatalog, JSON.stringify([{ ...t.deps.catalog[0], task_type: 'not_a_type' }]));
    await expect(startTestApp({ store: 'sqlite', env: { CATALOG_FILE: badCatalog } })).rejects.toThrow(/CATALOG_FILE/);
    const duplicate = path.join(dir, 'duplicate-catalog.json');
    writeFileSync(duplicate, JSON.stringify([t.deps.catalog[0], t.deps.catalog[0]]));
    await expect(startTestApp({ store: 'sqlite', env: { CATALOG_FILE: duplicate } })).rejects.toThrow(/appears twice/);
    await expect(startTestApp({ store: 'sqlite', env: { CATALOG_FILE: path.join(dir, 'missing.json') } })).rejects.toThrow(/CATALOG_FILE/);
  });

  it('still answers the live documents when the store cannot give figures', async () => {
    const down = await startTestApp({ store });
    try {
      await down.store.close();
      const doc = await fetch(`${down.url}/.well-known/capabilities.json`);
      expect(doc.status).toBe(200);
      const body = (await doc.json()) as Json;
      expect(body.live).toMatchObject({ unavailable: true });
      expect(body.capabilities).toBeDefined();
    } finally {
      await down.close().catch(() => undefined);
    }
  });
});
