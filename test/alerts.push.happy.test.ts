import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signIn } from './console.support.js';
import { submit } from './operator.support.js';
import { postJson, STORES, startTestApp, type TestApp } from './support/app.js';
import { startPushService, type TestPushService } from './support/push-service.js';

function subscribe(t: TestApp, cookie: string, csrf: string, body: unknown): Promise<Response> {
  return fetch(`${t.url}/operator/push/subscriptions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', cookie },
    body: JSON.stringify({ ...(body as object), _csrf: csrf }),
    redirect: 'manual',
  });
}

describe.each(STORES)('Web Push to the operator on %s', (store) => {
  let t: TestApp;
  let push: TestPushService;
  let cookie: string;
  let csrf: string;
  beforeAll(async () => {
    push = await startPushService();
    t = await startTestApp({ store, background: true, env: { PUSH_ALLOW_INSECURE_LOOPBACK: 'true', PUSH_SUBJECT: 'mailto:operator@ops.example-service.dev' } });
    ({ cookie, csrf } = await signIn(t));
    // PostgreSQL: the announcer hears changes once the LISTEN connection is up (it opens at start).
    for (const deadline = Date.now() + 10_000; !t.deps.changes.connected && Date.now() < deadline; ) await new Promise((resolve) => setTimeout(resolve, 50));
  });
  afterAll(async () => {
    await t.close();
    await push.close();
  });

  it('a new task reaches every subscribed device within seconds, VAPID-signed and encrypted for it, a tap opening the task', async () => {
    const phone = push.subscription('phone');
    const laptop = push.subscription('laptop');
    for (const sub of [phone, laptop]) expect((await subscribe(t, cookie, csrf, sub)).status).toBe(201);
    const started = Date.now();
    const id = await submit(t, { description: 'Push check: photograph the opening hours sign of the bakery at 12 Main Street.' });
    const got = await push.waitFor(2, (p) => (p.payload as { url: string }).url === `/operator/tasks/${id}`, 10_000);
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(got.map((p) => p.path).sort()).toEqual(['/push/laptop', '/push/phone']);
    expect(got[0]!.payload).toMatchObject({ title: 'New task: real world verification', body: expect.stringContaining('Push check'), tag: `task-${id}` });
    expect(got[0]!.vapid).toMatchObject({ aud: push.url, sub: 'mailto:operator@ops.example-service.dev', publicKey: t.deps.vapid.publicKey });
    expect(got[0]!.headers.urgency).toBe('high');
    // Viewing or accepting the task later is not news.
    await fetch(`${t.url}/operator/tasks/${id}`, { headers: { cookie } });
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(push.received.filter((p) => (p.payload as { url: string }).url === `/operator/tasks/${id}`)).toHaveLength(2);
  });

  it('a new message is pushed too, opening the task it names', async () => {
    const id = await submit(t);
    const sent = await postJson(`${t.url}/api/v1/messages`, {
      message: `Please withdraw ${id}, thanks.`,
      reply_to: 'asker@mail.example-agent.dev',
      subject: 'Withdrawal',
    });
    expect(sent.status).toBe(201);
    const [got] = await push.waitFor(1, (p) => (p.payload as { title: string }).title === 'New message: Withdrawal');
    expect(got!.payload).toMatchObject({ url: `/operator/tasks/${id}`, body: expect.stringContaining('Please withdraw') });
  });

  it('a subscription the push service reports gone (410) is removed, the others still get their notice', async () => {
    const stale = push.subscription('stale');
    expect((await subscribe(t, cookie, csrf, stale)).status).toBe(201);
    push.gone('stale');
    const id = await submit(t);
    await push.waitFor(1, (p) => p.path === '/push/phone' && (p.payload as { url: string }).url === `/operator/tasks/${id}`);
    await expect
      .poll(async () => (await t.store.db.selectFrom('push_subscriptions').select('endpoint').where('endpoint', '=', stale.endpoint).execute()).length, {
        timeout: 5_000,
      })
      .toBe(0);
  });

  it('the VAPID keys are generated once and kept in the store', async () => {
    const row = await t.store.db.selectFrom('settings').select('value').where('key', '=', 'vapid_keys').executeTakeFirstOrThrow();
    expect(JSON.parse(row.value)).toMatchObject({ publicKey: t.deps.vapid.publicKey });
    const second = await startTestApp({ store, shareDatabaseWith: t });
    expect(second.deps.vapid.publicKey).toBe(t.deps.vapid.publicKey);
    await second.close();
  });

  it('serves an installable console: manifest, PNG icons and a service worker for /operator', async () => {
    const manifest = await fetch(`${t.url}/operator/manifest.webmanifest`);
    expect(manifest.headers.get('content-type')).toMatch(/^application\/manifest\+json/);
    const body = (await manifest.json()) as { start_url: string; scope: string; display: string; icons: { src: string; sizes: string }[] };
    expect(body).toMatchObject({ start_url: '/operator', scope: '/operator', display: 'standalone' });
    for (const icon of body.icons) {
      const res = await fetch(`${t.url}${icon.src}`);
      expect(res.headers.get('content-type')).toBe('image/png');
      const png = Buffer.from(await res.arrayBuffer());
      expect(png.subarray(1, 4).toString()).toBe('PNG');
      expect(`${png.readUInt32BE(16)}x${png.readUInt32BE(20)}`).toBe(icon.sizes);
    }
    const sw = await fetch(`${t.url}/operator/sw.js`);
    expect(sw.headers.get('content-type')).toMatch(/^text\/javascript/);
    expect(sw.headers.get('service-worker-allowed')).toBe('/operator');
    expect(await sw.text()).toContain("addEventListener('notificationclick'");
    const queue = await (await fetch(`${t.url}/operator`, { headers: { cookie } })).text();
    expect(queue).toContain('rel="manifest" href="/operator/manifest.webmanifest"');
    expect(queue).toContain(`data-push-key="${t.deps.vapid.publicKey}"`);
  });
});
