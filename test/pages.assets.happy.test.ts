import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { staticAsset } from '../src/web/static-assets.js';
import { signIn } from './console.support.js';
import { useTestApp } from './support/app.js';
import { useBrowser } from './support/browser.js';

/**
 * Issue 31, item 7: the pages' stylesheet and script are files (src/web/assets/), served at
 * content-hashed addresses with a year-long immutable cache lifetime, under a Content-Security-
 * Policy that allows only the service's own files. (The bundle's copy is checked in server.test.ts.)
 */

const ASSETS = path.resolve(import.meta.dirname, '../src/web/assets');
const ASSET_LINKS = /<link rel="stylesheet" href="(\/assets\/pages\.[0-9a-f]{12}\.css)">|<script src="(\/assets\/pages\.[0-9a-f]{12}\.js)" defer><\/script>/g;

describe('the pages’ stylesheet and script as files', () => {
  const t = useTestApp();
  const browser = useBrowser();

  it('every page names both files by the hash of their bytes, and each is served immutable with its type', async () => {
    const home = await fetch(`${t.url}/`, { headers: { accept: 'text/html' } });
    const body = await home.text();
    const urls = [...body.matchAll(ASSET_LINKS)].map((m) => m[1] ?? m[2] ?? '');
    expect(urls).toHaveLength(2);
    // Nothing inline: no <style>, no style attribute, no inline script.
    expect(body).not.toMatch(/<style|\sstyle=|<script>/i);
    for (const url of urls) {
      const file = path.basename(url).replace(/\.[0-9a-f]{12}\./, '.');
      const bytes = readFileSync(path.join(ASSETS, file));
      expect(url).toContain(`.${createHash('sha256').update(bytes).digest('hex').slice(0, 12)}.`);
      const res = await fetch(`${t.url}${url}`);
      expect(res.status, url).toBe(200);
      expect(res.headers.get('cache-control'), url).toBe('public, max-age=31536000, immutable');
      expect(res.headers.get('x-content-type-options'), url).toBe('nosniff');
      expect(res.headers.get('content-type'), url).toBe(file.endsWith('.css') ? 'text/css; charset=utf-8' : 'text/javascript; charset=utf-8');
      expect(Buffer.from(await res.arrayBuffer()).equals(bytes), url).toBe(true);
    }
    for (const page of ['/tasks', '/docs', '/docs/api']) {
      const other = await (await fetch(`${t.url}${page}`, { headers: { accept: 'text/html' } })).text();
      expect(
        [...other.matchAll(ASSET_LINKS)].map((m) => m[1] ?? m[2]),
        page,
      ).toEqual(urls);
    }
    // Another hash, or the old unhashed address, is nothing.
    expect((await fetch(`${t.url}/assets/pages.000000000000.css`)).status).toBe(404);
    expect((await fetch(`${t.url}/assets/pages.js`)).status).toBe(404);
  });

  it('the policy allows only the service’s own files, and the page is styled and scripted under it in Chromium', async () => {
    const res = await fetch(`${t.url}/`, { headers: { accept: 'text/html' } });
    const csp = res.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("style-src 'self'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toMatch(/unsafe-inline|sha256-/);

    const page = await browser.newPage({ timezoneId: 'Europe/Berlin' });
    const violations: string[] = [];
    page.on('console', (m) => {
      if (/Content Security Policy/i.test(m.text())) violations.push(m.text());
    });
    await page.goto(`${t.url}/`);
    // The stylesheet applied (the page's background), and the script ran (the deadline label names the zone).
    await expect(page.evaluate(() => getComputedStyle(document.body).backgroundColor)).resolves.toBe('rgb(247, 247, 244)');
    await expect(page.locator('label[for="f-deadline"]').innerText()).resolves.toContain('Europe/Berlin');
    expect(violations).toEqual([]);
    await page.close();
  });

  it('the console uses the same mechanism: every stylesheet and script at a hashed, immutable address', async () => {
    const { cookie } = await signIn(t);
    const seen = new Set<string>();
    for (const [page, headers] of [
      ['/operator/login', {}],
      ['/operator', { cookie }],
      ['/operator/templates', { cookie }],
    ] as const) {
      const body = await (await fetch(`${t.url}${page}`, { headers })).text();
      expect(body, page).not.toMatch(/<style|\sstyle=|<script>/i);
      for (const m of body.matchAll(/(?:href|src)="(\/operator\/assets\/[a-z]+(?:\.[0-9a-f]{12})?\.(?:css|js))"/g)) seen.add(m[1] ?? '');
    }
    // The vendored WebAuthn bundle is served from node_modules as installed, not from src/web/assets.
    seen.delete('/operator/assets/webauthn.js');
    expect([...seen].map((url) => path.basename(url).replace(/\.[0-9a-f]{12}\./, '.')).sort()).toEqual([
      'console.css',
      'console.js',
      'inbox.css',
      'keys.js',
      'passkey.js',
    ]);
    for (const url of seen) {
      expect(url, url).toMatch(/\.[0-9a-f]{12}\.(css|js)$/);
      const res = await fetch(`${t.url}${url}`);
      expect(res.status, url).toBe(200);
      expect(res.headers.get('cache-control'), url).toBe('public, max-age=31536000, immutable');
      const file = path.basename(url).replace(/\.[0-9a-f]{12}\./, '.');
      expect(Buffer.from(await res.arrayBuffer()).equals(readFileSync(path.join(ASSETS, file))), url).toBe(true);
    }
    // The service worker keeps its fixed address (its scope), from its file.
    const sw = await fetch(`${t.url}/operator/sw.js`);
    expect(Buffer.from(await sw.arrayBuffer()).equals(readFileSync(path.join(ASSETS, 'sw.js')))).toBe(true);
  });

  it('a missing file stops the service at start, naming it', () => {
    expect(() => staticAsset('nowhere.css')).toThrow(/nowhere\.css/);
    expect(() => staticAsset('pages.txt')).toThrow(/no content type/);
  });
});
