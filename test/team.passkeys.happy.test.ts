import type { AddressInfo } from 'node:net';
import { createConnection, createServer, type Server } from 'node:net';
import type { BrowserContext, CDPSession, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STORES, startTestApp, type TestApp, TestClock } from './support/app.js';
import { useBrowser } from './support/browser.js';
import { api, json } from './team.support.js';

/**
 * Passkeys end to end in Chromium, with the DevTools protocol's virtual authenticator
 * (WebAuthn.addVirtualAuthenticator): a real registration from an invite link, a real sign-in,
 * and the ceremony's bad inputs (reused, expired, tampered invites; wrong challenge, origin, RP ID).
 * WebAuthn needs a host name (not an IP address) as its RP ID: BASE_URL is http://localhost:<port>
 * of a small forwarder to the app, so the browser, the app and the relying party agree.
 */

interface Site {
  t: TestApp;
  /** BASE_URL: http://localhost:<forwarder port>. */
  base: string;
  close(): Promise<void>;
}

/** A forwarder on a port known before the app starts, so BASE_URL can name it. */
async function startSite(options: { store: 'sqlite' | 'postgres'; host?: string; shareWith?: TestApp; clock?: TestClock }): Promise<Site> {
  let target = 0;
  const server: Server = createServer((client) => {
    const upstream = createConnection({ host: '127.0.0.1', port: target });
    client.pipe(upstream);
    upstream.pipe(client);
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
    client.on('close', () => upstream.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://${options.host ?? 'localhost'}:${(server.address() as AddressInfo).port}`;
  const t = await startTestApp({
    store: options.store,
    env: { BASE_URL: base },
    ...(options.shareWith ? { shareDatabaseWith: options.shareWith } : {}),
    ...(options.clock ? { clock: options.clock } : {}),
  });
  target = Number(new URL(t.url).port);
  return {
    t,
    base,
    async close() {
      await t.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

async function withAuthenticator(context: BrowserContext, page: Page): Promise<{ cdp: CDPSession; authenticatorId: string }> {
  const cdp = await context.newCDPSession(page);
  await cdp.send('WebAuthn.enable');
  const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: {
      protocol: 'ctap2',
      transport: 'internal',
      hasResidentKey: true,
      hasUserVerification: true,
      isUserVerified: true,
      automaticPresenceSimulation: true,
    },
  });
  return { cdp, authenticatorId };
}

async function invite(site: Site, name = 'Ada Lovelace'): Promise<{ operator_id: string; invite_url: string; token: string }> {
  const created = await json(
    await api(site.t, 'POST', '/api/v1/admin/operators', { name, email: `ada-${Date.now()}-${Math.random()}@team.example.org`, role: 'operator' }),
    201,
  );
  const url = created.invite_url as string;
  return { operator_id: created.operator_id as string, invite_url: url, token: url.split('/').at(-1) ?? '' };
}

/** A ceremony step as the page's script sends it, from Node (with the page's Origin unless told). */
function ceremony(site: Site, path: string, body: unknown, origin: string | null = site.base): Promise<Response> {
  return fetch(`${site.t.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(origin ? { origin } : {}) },
    body: JSON.stringify(body),
  });
}

type Json = Record<string, unknown>;

/** A page whose virtual authenticator registered a passkey from the invite link: signed in, on the queue. */
async function registeredFromInvite(context: BrowserContext, site: Site, inviteUrl: string): Promise<{ page: Page; cdp: CDPSession; authenticatorId: string }> {
  const page = await context.newPage();
  const { cdp, authenticatorId } = await withAuthenticator(context, page);
  await page.goto(inviteUrl);
  await page.getByRole('button', { name: 'Register a passkey' }).click();
  await page.waitForURL(`${site.base}/operator`);
  return { page, cdp, authenticatorId };
}

/** The browser's answer to registration options (the virtual authenticator creates the passkey). */
async function browserRegistration(page: Page, options: unknown): Promise<Json> {
  return page.evaluate(async (optionsJSON) => {
    const w = window as unknown as { SimpleWebAuthnBrowser: { startRegistration(o: { optionsJSON: unknown }): Promise<Json> } };
    return w.SimpleWebAuthnBrowser.startRegistration({ optionsJSON });
  }, options);
}

function withClientData(response: Json, change: (data: Json) => void): Json {
  const inner = response.response as Json;
  const data = JSON.parse(Buffer.from(inner.clientDataJSON as string, 'base64url').toString('utf8')) as Json;
  change(data);
  return { ...response, response: { ...inner, clientDataJSON: Buffer.from(JSON.stringify(data)).toString('base64url') } };
}

describe.each(STORES)('passkeys in Chromium on %s', (store) => {
  const browser = useBrowser();
  /** A fresh browser context with a virtual authenticator, on an invite page (whose scripts load SimpleWebAuthn). */
  const onInvitePage = async (site: Site, token: string, run: (page: Page) => Promise<void>) => {
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      await withAuthenticator(context, page);
      await page.goto(`${site.base}/operator/invite/${token}`);
      await run(page);
    } finally {
      await context.close();
    }
  };
  const clock = new TestClock();
  let site: Site;
  beforeAll(async () => {
    site = await startSite({ store, clock });
  });
  afterAll(async () => site?.close());

  it('registers a passkey from an invite link and signs in with it', async () => {
    const { invite_url, operator_id } = await invite(site);
    const context = await browser.newContext();
    try {
      const { page, cdp, authenticatorId } = await registeredFromInvite(context, site, invite_url);
      expect(await page.locator('h1').first().textContent()).toBeTruthy();
      // Sign out (the cookie goes), then in again with the passkey alone.
      await context.clearCookies();
      await page.goto(`${site.base}/operator/login`);
      await page.getByRole('button', { name: 'Use a passkey' }).click();
      await page.waitForURL(`${site.base}/operator`);
      // One discoverable credential for this site, used twice (registration, sign-in).
      const { credentials } = await cdp.send('WebAuthn.getCredentials', { authenticatorId });
      expect(credentials.map((c) => ({ resident: c.isResidentCredential, rpId: c.rpId, signCount: c.signCount }))).toEqual([
        { resident: true, rpId: 'localhost', signCount: 2 },
      ]);
      const audit = await json(await api(site.t, 'GET', `/api/v1/admin/audit?operator_id=${operator_id}`), 200);
      const actions = (audit.entries as { action: string; details: { via?: string } }[]).map((e) => `${e.action}${e.details.via ? `:${e.details.via}` : ''}`);
      expect(actions).toEqual(['signin.succeeded:passkey', 'passkey.registered']);
      // The invite was used: the link is dead now.
      const again = await page.goto(invite_url);
      expect(again?.status()).toBe(404);
    } finally {
      await context.close();
    }
  });

  it('refuses a wrong challenge, a wrong origin in the client data, a cross-site request, and tampered or expired invites', async () => {
    const { token } = await invite(site);
    await onInvitePage(site, token, async (page) => {
      const first = await json(await ceremony(site, `/operator/invite/${token}/options`, {}), 200);
      const second = await json(await ceremony(site, `/operator/invite/${token}/options`, {}), 200);
      const response = await browserRegistration(page, first.options);
      // Answered with another ceremony's challenge id: the challenge inside does not match.
      const crossed = await ceremony(site, `/operator/invite/${token}/register`, { challenge_id: second.challenge_id, response });
      expect(crossed.status).toBe(401);
      expect(await crossed.json()).toMatchObject({ error: 'unauthorized' });
      // The first challenge is still unused; a response claiming another origin is refused (and uses it up).
      const forged = withClientData(response, (data) => {
        data.origin = 'https://evil.example';
      });
      expect((await ceremony(site, `/operator/invite/${token}/register`, { challenge_id: first.challenge_id, response: forged })).status).toBe(401);
      // A used challenge cannot be replayed, even with the genuine response.
      expect((await ceremony(site, `/operator/invite/${token}/register`, { challenge_id: first.challenge_id, response })).status).toBe(401);
      // Without the page's Origin (a cross-site form or script): 403 before anything else.
      expect((await ceremony(site, `/operator/invite/${token}/options`, {}, null)).status).toBe(403);
      expect((await ceremony(site, `/operator/invite/${token}/options`, {}, 'https://evil.example')).status).toBe(403);
      // Tampered token: one character changed.
      const tampered = `${token.slice(0, -1)}${token.endsWith('A') ? 'B' : 'A'}`;
      expect((await fetch(`${site.t.url}/operator/invite/${tampered}`)).status).toBe(404);
      expect((await ceremony(site, `/operator/invite/${tampered}/options`, {})).status).toBe(404);
      // The invite still works (nothing above used it); after 24 hours it does not.
      expect((await fetch(`${site.t.url}/operator/invite/${token}`)).status).toBe(200);
      clock.advance(24 * 3_600_000 + 1000);
      expect((await fetch(`${site.t.url}/operator/invite/${token}`)).status).toBe(404);
    });
  });

  it('refuses a registration made for another relying party (RP ID)', async () => {
    // A second instance on the same store whose BASE_URL names another host: the passkey made for
    // localhost carries localhost's RP ID hash, whatever the client data says.
    const other = await startSite({ store, host: 'team.localhost', shareWith: site.t, clock });
    try {
      const { token } = await invite(site);
      await onInvitePage(site, token, async (page) => {
        const here = await json(await ceremony(site, `/operator/invite/${token}/options`, {}), 200);
        const response = await browserRegistration(page, here.options);
        const there = await json(await ceremony(other, `/operator/invite/${token}/options`, {}), 200);
        const moved = withClientData(response, (data) => {
          data.origin = other.base;
          data.challenge = (there.options as { challenge: string }).challenge;
        });
        const refused = await ceremony(other, `/operator/invite/${token}/register`, { challenge_id: there.challenge_id, response: moved });
        expect(refused.status).toBe(401);
        expect(((await refused.json()) as { message: string }).message).toMatch(/RP ID/i);
      });
    } finally {
      await other.close();
    }
  });

  it('ends the sessions a passkey opened when it is removed, on both instances (issue 49, item 1)', async () => {
    // A second instance on the same store and host name: the browser sends the cookie to both.
    const other = await startSite({ store, shareWith: site.t, clock });
    const { invite_url, operator_id } = await invite(site);
    const context = await browser.newContext();
    try {
      const { page, cdp, authenticatorId } = await registeredFromInvite(context, site, invite_url);
      for (const s of [site, other]) {
        await page.goto(`${s.base}/operator/team`);
        expect(new URL(page.url()).pathname).toBe('/operator/team');
      }
      const listed = await json(await api(site.t, 'GET', `/api/v1/admin/operators/${operator_id}/passkeys`), 200);
      const { credentials } = await cdp.send('WebAuthn.getCredentials', { authenticatorId });
      const passkeyId = credentials[0]?.credentialId.replace(/=+$/, '').replace(/\+/g, '-').replace(/\//g, '_') ?? '';
      expect(listed.passkeys).toEqual([{ passkey_id: passkeyId, created_at: expect.any(String), removed_at: null }]);

      expect((await api(other.t, 'DELETE', `/api/v1/admin/operators/${operator_id}/passkeys/${passkeyId}`)).status).toBe(204);
      expect((await api(other.t, 'DELETE', `/api/v1/admin/operators/${operator_id}/passkeys/${passkeyId}`)).status).toBe(404);
      for (const s of [site, other]) {
        await page.goto(`${s.base}/operator/team`);
        expect(new URL(page.url()).pathname).toBe('/operator/login');
      }
      // The removed passkey no longer signs in.
      const failed = page.waitForResponse((response) => response.url().endsWith('/operator/passkey/signin'));
      await page.getByRole('button', { name: 'Use a passkey' }).click();
      expect((await failed).status()).toBe(401);
      expect(new URL(page.url()).pathname).toBe('/operator/login');
      const audit = await json(await api(site.t, 'GET', `/api/v1/admin/audit?operator_id=${operator_id}`), 200);
      // (A removed passkey names nobody: its failed sign-in is the anonymous kind.)
      expect((audit.entries as { action: string }[]).map((e) => e.action)).toEqual(['passkey.registered']);
      const removed = await json(await api(site.t, 'GET', '/api/v1/admin/audit?operator_id=owner&limit=1'), 200);
      expect(removed.entries).toMatchObject([{ action: 'passkey.removed', details: { operator_id, credential_id: passkeyId } }]);
    } finally {
      await context.close();
      await other.close();
    }
  });
});
