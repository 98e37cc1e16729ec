import { beforeAll, describe, expect, it } from 'vitest';
import { DOCUMENTS } from '../src/docs/endpoints.js';
import { getText } from './docs.support.js';
import { postJson, STORES, TEST_ADMIN_KEY, useTestApp, validTask } from './support/app.js';

const OPERATOR_EMAIL = 'operator-private@mail.example-operator.dev';
const CONTACT = 'secret-requester@mail.example-agent.dev';

describe.each(STORES)('documents keep private things private on %s', (store) => {
  /** Every public document and page, after a task was submitted. */
  let everything: Array<{ path: string; text: string; headers: Headers }>;

  const t = useTestApp({ store, env: { OPERATOR_EMAIL } });
  beforeAll(async () => {
    const res = await postJson(`${t.url}/api/v1/tasks`, validTask({ contact_email: CONTACT }));
    const { task_id } = (await res.json()) as { task_id: string };
    const paths = [
      ...DOCUMENTS.filter((d) => !d.external).flatMap((d) => [d.path, ...d.aliases]),
      ...DOCUMENTS.map((d) => `/docs/${d.id}`),
      '/',
      '/docs',
      `/tasks?id=${task_id}`,
      '/api/v1/services?limit=50',
    ];
    everything = [];
    for (const path of paths) {
      for (const accept of ['text/html', 'text/markdown']) {
        const got = await getText(t, path, { accept });
        expect(got.status, path).toBe(200);
        everything.push({ path: `${path} (${accept})`, text: got.text, headers: got.headers });
      }
    }
  });

  it('never publishes the operator key, the server secret, the operator e-mail or a contact e-mail', () => {
    const secret = t.deps.secret;
    const forbidden = [TEST_ADMIN_KEY, secret.toString('base64'), secret.toString('hex'), secret.toString('base64url'), OPERATOR_EMAIL, CONTACT];
    for (const { path, text } of everything) {
      for (const value of forbidden) expect(text.includes(value), `${path} leaks ${value.slice(0, 12)}…`).toBe(false);
    }
  });

  it('never challenges for credentials', () => {
    for (const { path, headers } of everything) expect(headers.get('www-authenticate'), path).toBeNull();
  });

  it('states that nothing is token-protected and names no authorization server', async () => {
    const meta = JSON.parse((await getText(t, '/.well-known/oauth-protected-resource')).text) as Record<string, unknown>;
    expect(meta.authorization_servers).toEqual([]);
    expect(meta.scopes_supported).toEqual([]);
  });

  it('keeps the JSON API deaf to form bodies (415), though the web form parses them', async () => {
    const form = new URLSearchParams({ task_type: 'data_collection', description: 'A form body sent to the JSON API.', contact_email: CONTACT });
    for (const path of ['/api/v1/tasks', '/api/v1/messages']) {
      const res = await fetch(`${t.url}${path}`, { method: 'POST', body: form });
      expect(res.status, path).toBe(415);
      expect(((await res.json()) as { error: string }).error).toBe('unsupported_media_type');
    }
  });

  it('sends the pages with a strict Content-Security-Policy and nosniff', async () => {
    for (const path of ['/', '/docs', '/docs/api', '/tasks']) {
      const res = await getText(t, path, { accept: 'text/html' });
      const csp = res.headers.get('content-security-policy') ?? '';
      expect(csp, path).toContain("default-src 'none'");
      expect(csp, path).toContain("form-action 'self'");
      expect(csp, path).toContain("frame-ancestors 'none'");
      expect(csp, path).not.toContain('unsafe-inline');
      // One script of the service's own (progressive enhancement), never inline script.
      expect(csp, path).toContain("script-src 'self'");
      expect(res.headers.get('x-content-type-options'), path).toBe('nosniff');
      expect(res.text.match(/<script[^>]*>/gi) ?? [], path).toEqual([expect.stringMatching(/^<script src="\/assets\/pages\.[0-9a-f]{12}\.js" defer>$/)]);
    }
  });

  it('serves the documents with nosniff and their own content types', async () => {
    for (const doc of DOCUMENTS.filter((d) => !d.external)) {
      const res = await getText(t, doc.path);
      expect(res.type.split(';')[0], doc.path).toBe(doc.mediaType);
      expect(res.headers.get('x-content-type-options'), doc.path).toBe('nosniff');
    }
  });
});
