import type { AddressInfo } from 'node:net';
import { createConnection, createServer, type Server } from 'node:net';
import { createLocalJWKSet, decodeJwt, jwtVerify } from 'jose';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { htask } from '../clients/typescript/test/cli.support.js';
import { EXAMPLE_RESPONSE_SCHEMA, EXAMPLE_RESULT } from '../src/domain/answers/answer-example.js';
import { verifyApprovals } from '../src/receipts/approval-verify.js';
import { verifyReceipt } from '../src/receipts/verify.js';
import { sideways, smallTargets } from './inbox.support.js';
import { runCli } from './receipts.support.js';
import { postJson, STORES, startTestApp, type TestApp, validTask } from './support/app.js';
import { seriousAxeViolations } from './support/axe.js';
import { useBrowser } from './support/browser.js';
import { api, json } from './team.support.js';

/**
 * Approvals signed by passkeys, end to end in Chromium with the DevTools virtual authenticator
 * (docs/approvals.md): three operators, each with their own passkey and browser, on two instances
 * sharing one store behind one address (BASE_URL http://localhost:<port> of a forwarder; WebAuthn
 * needs a host name). The forwarder sends each new connection to the instance chosen at that
 * moment, so one operator's browser talks to the second instance.
 */

type Json = Record<string, unknown>;

interface Site {
  base: string;
  apps: TestApp[];
  /** Which instance new connections reach. */
  route(index: number): void;
  close(): Promise<void>;
}

async function startSite(store: 'sqlite' | 'postgres'): Promise<Site> {
  const targets: number[] = [];
  let current = 0;
  const server: Server = createServer((client) => {
    const upstream = createConnection({ host: '127.0.0.1', port: targets[current] ?? 0 });
    client.pipe(upstream);
    upstream.pipe(client);
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
    client.on('close', () => upstream.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://localhost:${(server.address() as AddressInfo).port}`;
  const first = await startTestApp({ store, env: { BASE_URL: base } });
  const second = await startTestApp({ store, env: { BASE_URL: base }, shareDatabaseWith: first });
  targets.push(Number(new URL(first.url).port), Number(new URL(second.url).port));
  return {
    base,
    apps: [first, second],
    route(index) {
      current = index;
    },
    async close() {
      await second.close();
      await first.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A browser of its own for one operator: a virtual authenticator, a passkey registered from the invite, signed in. */
async function operatorBrowser(context: BrowserContext, site: Site, name: string): Promise<{ page: Page; operatorId: string }> {
  const t = site.apps[0] as TestApp;
  const created = await json(
    await api(t, 'POST', '/api/v1/admin/operators', { name, email: `${name.toLowerCase()}-${Date.now()}@team.example.org`, role: 'operator' }),
    201,
  );
  const page = await context.newPage();
  const cdp = await context.newCDPSession(page);
  await cdp.send('WebAuthn.enable');
  await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: {
      protocol: 'ctap2',
      transport: 'internal',
      hasResidentKey: true,
      hasUserVerification: true,
      isUserVerified: true,
      automaticPresenceSimulation: true,
    },
  });
  await page.goto(created.invite_url as string);
  await page.getByRole('button', { name: 'Register a passkey' }).click();
  await page.waitForURL(`${site.base}/operator`);
  return { page, operatorId: created.operator_id as string };
}

/** Proposes `notes` from the task page: the console asks the passkey to sign the proposal. */
async function propose(page: Page, site: Site, taskId: string, notes: string): Promise<void> {
  await page.goto(`${site.base}/operator/tasks/${taskId}`);
  await page.locator('#notes').fill(notes);
  page.once('dialog', (dialog) => void dialog.accept());
  await page.getByRole('button', { name: 'Propose for approval' }).click();
  await page.getByRole('button', { name: 'Sign and propose' }).click();
  await page.waitForURL(`${site.base}/operator/tasks/${taskId}?done=proposed`);
}

describe.each(STORES)('approvals signed by passkeys in Chromium on %s', (store) => {
  const browser = useBrowser();
  let site: Site;
  const contexts: BrowserContext[] = [];
  const ops: { page: Page; operatorId: string }[] = [];
  beforeAll(async () => {
    site = await startSite(store);
    for (const [i, name] of ['Ada', 'Grace', 'Linus'].entries()) {
      // Grace's browser talks to the second instance.
      site.route(i === 1 ? 1 : 0);
      const context = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
      contexts.push(context);
      ops.push(await operatorBrowser(context, site, name));
    }
    site.route(0);
  });
  afterAll(async () => {
    for (const context of contexts) await context.close();
    await site?.close();
  });

  it('a 2-of-3 task: proposed, sent back, proposed again, approved by the third: delivered once, with both attestations in a version 3 receipt', async () => {
    const [ada, grace, linus] = ops as [(typeof ops)[0], (typeof ops)[0], (typeof ops)[0]];
    const t = site.apps[0] as TestApp;
    const submitted = await postJson(`${t.url}/api/v1/tasks`, validTask({ approvals: 2, delivery: 'status_poll', contact_email: undefined }));
    const id = ((await submitted.json()) as { task_id: string }).task_id;
    await json(await api(t, 'PATCH', `/api/v1/admin/tasks/${id}`, { status: 'accepted' }), 200);

    await propose(ada.page, site, id, 'Closed on Sundays.');
    const first = await json(await api(t, 'GET', `/api/v1/admin/tasks/${id}`), 200);
    expect(first).toMatchObject({ status: 'accepted', approvals: { required: 2, given: 1 } });
    expect((first.proposal as Json).approvals).toEqual([{ approver: ada.operatorId, at: expect.any(String), signed: true }]);

    // Grace, on the second instance: the Approve view, phone sized, axe-clean; she sends it back.
    await grace.page.goto(`${site.base}/operator/approve`);
    await expect.poll(() => grace.page.locator(`[data-task="${id}"]`).textContent()).toContain('1 of 2 approvals');
    await grace.page.locator(`[data-task="${id}"] textarea[name="reason"]`).fill('The bakery says it opens at 8.');
    await grace.page.locator(`[data-task="${id}"]`).getByRole('button', { name: 'Send back' }).click();
    await grace.page.waitForURL(/\/operator\/approve\?done=sent_back/);
    // Ada sees why on the task page, and proposes again.
    await ada.page.goto(`${site.base}/operator/tasks/${id}`);
    expect(await ada.page.locator('#appr').locator('..').textContent()).toContain('The bakery says it opens at 8.');
    await propose(ada.page, site, id, 'Open 8 to 12 on Sundays.');

    // Her own proposal waits for someone else: Ada cannot approve it.
    await ada.page.goto(`${site.base}/operator/approve`);
    expect(await ada.page.locator(`[data-task="${id}"]`).textContent()).toContain('another operator decides');

    await linus.page.goto(`${site.base}/operator/approve`);
    expect(await linus.page.locator('#signing').textContent()).toContain('signed by it');
    await linus.page.locator(`[data-task="${id}"]`).getByRole('button', { name: 'Approve' }).click();
    await linus.page.waitForURL(/\/operator\/approve\?done=approved/);

    const delivered = await json(await api(site.apps[1] as TestApp, 'GET', `/api/v1/admin/tasks/${id}`), 200);
    expect(delivered).toMatchObject({ status: 'delivered', operator_notes: 'Open 8 to 12 on Sundays.', approvals: { required: 2, given: 2 } });
    const receipt = decodeJwt(delivered.receipt as string) as Json;
    expect(receipt.receipt_version).toBe(3);
    const approvals = receipt.approvals as Json[];
    expect(approvals).toHaveLength(2);
    const operatorKeys = (await (await fetch(`${t.url}/.well-known/operator-keys.json`)).json()) as { keys: Json[] };
    expect(operatorKeys.keys).toHaveLength(3);
    expect(JSON.stringify(operatorKeys)).not.toMatch(/Ada|Grace|Linus|team\.example\.org/);
    expect(new Set(approvals.map((a) => a.key_id)).size).toBe(2);
    // The verifiers' own check (src/receipts/verify.ts, as npm run verify-receipt runs it), offline from what was fetched.
    const jwks = await (await fetch(`${t.url}/.well-known/jwks.json`)).json();
    const options = { jwks, operatorKeys: operatorKeys as never, expectedTaskId: id, operatorNotes: 'Open 8 to 12 on Sundays.', expectedIssuer: site.base };
    const verdict = await verifyReceipt(delivered.receipt as string, options);
    expect(verdict.checks.filter((c) => !c.ok)).toEqual([]);
    expect(verdict.approvals.map((a) => a.status)).toEqual(['signed', 'signed']);
    // The status page's check by the service (for browsers without Ed25519) checks the attestations against the same keys.
    const byService = (await (await fetch(`${t.url}/tasks/receipt-check?id=${id}`)).json()) as { valid: boolean; checks: { name: string; ok: boolean }[] };
    expect(byService.checks.find((c) => c.name === 'approvals')).toMatchObject({ ok: true });
    expect(byService.valid).toBe(true);
    // Both command-line verifiers fetch /.well-known/operator-keys.json themselves and list each approval.
    const cli = await runCli('verify-receipt', [id, '--base-url', site.base]);
    expect(cli.stdout).toMatch(/✓ approvals +2 approval\(s\): 2 signed by a published passkey/);
    expect(cli.code).toBe(0);
    const shell = await htask(['verify', id], { baseUrl: site.base });
    expect(shell.stdout).toMatch(/approvals\[1\] \(key [\w-]{43}\): signed, user present/);
    expect(shell.code).toBe(0);
    // One byte of an attestation's signature flipped: the approvals check names that approval (the JWS would fail too).
    const tampered = structuredClone(receipt) as Json & { approvals: { attestation: { signature: string } }[] };
    const sig = Buffer.from(tampered.approvals[1]?.attestation.signature ?? '', 'base64url');
    sig[sig.length - 1] = (sig[sig.length - 1] ?? 0) ^ 1;
    if (tampered.approvals[1]) tampered.approvals[1].attestation.signature = sig.toString('base64url');
    const named = await verifyApprovals(tampered as never, operatorKeys as never);
    expect(named.ok).toBe(false);
    expect(named.approvals.map((a) => [a.status, a.problem])).toEqual([
      ['signed', null],
      ['invalid', 'signature'],
    ]);
    // Delivered once: one delivered entry in the audit, the public task says so.
    const audit = await json(await api(t, 'GET', `/api/v1/admin/audit?task_id=${id}`), 200);
    expect((audit.entries as { action: string }[]).filter((e) => e.action === 'task.delivered')).toHaveLength(1);
    expect((audit.entries as { action: string }[]).filter((e) => e.action === 'approval.returned')).toHaveLength(1);
  });

  it('refuses an assertion over another task, by another operator’s passkey, a replay, and an unsigned approval from a passkey session', async () => {
    const [ada, grace, linus] = ops as [(typeof ops)[0], (typeof ops)[0], (typeof ops)[0]];
    const t = site.apps[0] as TestApp;
    const task = async () => {
      const res = await postJson(`${t.url}/api/v1/tasks`, validTask({ approvals: 3, delivery: 'status_poll', contact_email: undefined }));
      const id = ((await res.json()) as { task_id: string }).task_id;
      await json(await api(t, 'PATCH', `/api/v1/admin/tasks/${id}`, { status: 'accepted' }), 200);
      await propose(ada.page, site, id, 'Open 8 to 12.');
      return { id, challenge: ((await json(await api(t, 'GET', `/api/v1/admin/tasks/${id}`), 200)).proposal as Json).challenge as string };
    };
    const sign = (page: Page, challenge: string) =>
      page.evaluate(async (challenge) => {
        const w = window as unknown as { SimpleWebAuthnBrowser: { startAuthentication(o: { optionsJSON: unknown }): Promise<Json> } };
        return w.SimpleWebAuthnBrowser.startAuthentication({ optionsJSON: { challenge, rpId: location.hostname, userVerification: 'preferred' } });
      }, challenge);
    const x = await task();
    const y = await task();
    // Grace's own key for the API (her approvals over it carry her assertion).
    const key = await json(await api(t, 'POST', `/api/v1/admin/operators/${grace.operatorId}/keys`), 201);
    const auth = { authorization: `Bearer ${key.key as string}` };
    await grace.page.goto(`${site.base}/operator/approve`);
    await linus.page.goto(`${site.base}/operator/approve`);
    const overX = await sign(grace.page, x.challenge);
    const decide = (id: string, assertion: unknown) => api(t, 'POST', `/api/v1/admin/tasks/${id}/approvals`, { decision: 'approve', assertion }, auth);
    const refused = async (res: Response, why: RegExp) => {
      expect(res.status).toBe(400);
      const body = (await res.json()) as { error: string; details: string[] };
      expect(body.error).toBe('invalid_signature');
      expect(body.details[0]).toMatch(why);
    };
    await refused(await decide(y.id, overX), /challenge/i);
    await refused(await decide(x.id, await sign(linus.page, x.challenge)), /not made by a passkey registered to you/);
    // Signed later, counted first: the earlier assertion still counts (a held proposal commits late).
    expect((await decide(y.id, await sign(grace.page, y.challenge))).status).toBe(200);
    expect((await decide(x.id, overX)).status).toBe(200);
    // Sent back and proposed again with the same deliverable (the same challenge): the old assertion is a replay.
    await json(await api(t, 'POST', `/api/v1/admin/tasks/${x.id}/approvals`, { decision: 'send_back', reason: 'Check again.' }), 200);
    await propose(ada.page, site, x.id, 'Open 8 to 12.');
    await refused(await decide(x.id, overX), /replay/);
    // A session opened with a passkey must sign: the form without the assertion is refused (422), nothing counted.
    const cookies = await grace.page.context().cookies();
    const cookie = cookies.map((c) => `${c.name}=${c.value}`).join('; ');
    const page = await (await fetch(`${site.base}/operator/approve`, { headers: { cookie } })).text();
    const csrf = /name="_csrf" value="([^"]+)"/.exec(page)?.[1] ?? '';
    const unsigned = await fetch(`${site.base}/operator/approve/${y.id}`, {
      method: 'POST',
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded', origin: site.base },
      body: new URLSearchParams({ _csrf: csrf, decision: 'approve', assertion: '' }).toString(),
      redirect: 'manual',
    });
    expect(unsigned.status).toBe(422);
    expect((await json(await api(t, 'GET', `/api/v1/admin/tasks/${y.id}`), 200)).approvals).toEqual({ required: 3, given: 2 });
  });

  it('a structured answer proposed and signed from the console, approved unsigned by a key: both in the receipt, the unsigned one said so', async () => {
    const [ada, , linus] = ops as [(typeof ops)[0], (typeof ops)[0], (typeof ops)[0]];
    const t = site.apps[0] as TestApp;
    const res = await postJson(
      `${t.url}/api/v1/tasks`,
      validTask({ approvals: 2, delivery: 'status_poll', contact_email: undefined, response_schema: EXAMPLE_RESPONSE_SCHEMA }),
    );
    const id = ((await res.json()) as { task_id: string }).task_id;
    await json(await api(t, 'PATCH', `/api/v1/admin/tasks/${id}`, { status: 'accepted' }), 200);
    await ada.page.goto(`${site.base}/operator/tasks/${id}`);
    await ada.page.getByText('Raw JSON editor').click();
    await ada.page.locator('#result-json').fill(JSON.stringify(EXAMPLE_RESULT));
    ada.page.once('dialog', (dialog) => void dialog.accept());
    await ada.page.getByRole('button', { name: 'Deliver this JSON & sign receipt' }).click();
    await ada.page.getByRole('button', { name: 'Sign and propose' }).click();
    await ada.page.waitForURL(`${site.base}/operator/tasks/${id}?done=proposed`);
    const key = await json(await api(t, 'POST', `/api/v1/admin/operators/${linus.operatorId}/keys`), 201);
    const delivered = await json(
      await api(t, 'POST', `/api/v1/admin/tasks/${id}/approvals`, { decision: 'approve' }, { authorization: `Bearer ${key.key as string}` }),
      200,
    );
    expect(delivered).toMatchObject({ status: 'delivered', result: EXAMPLE_RESULT });
    const operatorKeys = await (await fetch(`${t.url}/.well-known/operator-keys.json`)).json();
    const jwks = await (await fetch(`${t.url}/.well-known/jwks.json`)).json();
    const verdict = await verifyReceipt(delivered.receipt as string, { jwks, operatorKeys, expectedTaskId: id });
    expect(verdict.checks.filter((c) => !c.ok)).toEqual([]);
    expect(verdict.approvals.map((a) => a.status)).toEqual(['signed', 'unsigned']);
  });

  it('publishes a removed passkey with its until, and logs each addition and removal as a signed operator_key leaf', async () => {
    const t = site.apps[0] as TestApp;
    const grace = ops[1] as (typeof ops)[0];
    const listed = await json(await api(t, 'GET', `/api/v1/admin/operators/${grace.operatorId}/passkeys`), 200);
    const passkeyId = (listed.passkeys as { passkey_id: string }[])[0]?.passkey_id ?? '';
    expect((await api(t, 'DELETE', `/api/v1/admin/operators/${grace.operatorId}/passkeys/${passkeyId}`)).status).toBe(204);
    const { keys } = (await (await fetch(`${t.url}/.well-known/operator-keys.json`)).json()) as { keys: { key_id: string; until: string | null }[] };
    expect(keys.filter((k) => k.until !== null)).toHaveLength(1);
    const jwks = createLocalJWKSet(await (await fetch(`${t.url}/.well-known/jwks.json`)).json());
    const leaves = await t.store.db.selectFrom('log_leaves').select('data').where('task_id', 'is', null).orderBy('created_at').execute();
    const payloads = await Promise.all(leaves.map(async (leaf) => (await jwtVerify(leaf.data, jwks)).payload));
    const logged = payloads.filter((p) => p.kind === 'operator_key');
    expect(logged).toHaveLength(4);
    expect(logged.map((p) => p.until === null)).toEqual([true, true, true, false]);
    expect(new Set(logged.map((p) => p.key_id))).toEqual(new Set(keys.map((k) => k.key_id)));
    expect(JSON.stringify(logged)).not.toContain(grace.operatorId);
  });

  it('shows the Approve view on a phone without serious axe violations, with the notice when the team is too small', async () => {
    const t = site.apps[0] as TestApp;
    const res = await postJson(`${t.url}/api/v1/tasks`, validTask({ approvals: 5, delivery: 'status_poll', contact_email: undefined }));
    const id = ((await res.json()) as { task_id: string }).task_id;
    await json(await api(t, 'PATCH', `/api/v1/admin/tasks/${id}`, { status: 'accepted' }), 200);
    await propose((ops[0] as (typeof ops)[0]).page, site, id, 'Five people must agree.');
    const context = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true, bypassCSP: true });
    try {
      const page = await context.newPage();
      const cookie = await (await import('./console.support.js')).signIn(t);
      await context.addCookies([{ name: cookie.cookie.split('=')[0] ?? '', value: cookie.cookie.split('=').slice(1).join('='), url: site.base }]);
      await page.goto(`${site.base}/operator/approve`);
      const card = page.locator(`[data-task="${id}"]`);
      expect(await card.textContent()).toContain('More approvals required (5) than operators exist');
      expect(await page.locator('#signing').textContent()).toContain('Unsigned');
      expect(await card.textContent()).toContain('proposed by Ada');
      expect(await page.locator('main').innerText()).not.toMatch(/SHA-256|operator_notes|op-[0-9a-f]{32}/);
      expect(await sideways(page)).toBe(false);
      expect(await smallTargets(page)).toEqual([]);
      expect(await seriousAxeViolations(page)).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
