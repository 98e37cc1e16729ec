import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { endpointProblem } from '../src/services/alerts/push.js';
import { signIn } from './console.support.js';
import { submit } from './operator.support.js';
import { postJson, STORES, startTestApp, type TestApp } from './support/app.js';
import { sharedDnsServer } from './support/dns-server.js';
import { startPushService, type TestPushService } from './support/push-service.js';

function subscribe(t: TestApp, cookie: string, body: Record<string, unknown>): Promise<Response> {
  return fetch(`${t.url}/operator/push/subscriptions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', cookie },
    body: JSON.stringify(body),
    redirect: 'manual',
  });
}

describe('push endpoints come from browsers: only public https push services', () => {
  it('refuses internal, loopback, IP-literal and non-https endpoints unless the test flag allows http loopback', () => {
    for (const bad of [
      'http://push.example-service.dev/x',
      'https://127.0.0.1/x',
      'https://169.254.169.254/latest/meta-data',
      'https://[::1]/x',
      'https://10.0.0.5/x',
      'https://localhost/x',
      'https://metadata/x',
      'https://user:pw@fcm.googleapis.com/x',
      'file:///etc/passwd',
      'not a url',
      `https://fcm.googleapis.com/${'a'.repeat(2001)}`,
    ]) {
      expect(endpointProblem(bad, false), bad).not.toBeNull();
    }
    expect(endpointProblem('https://fcm.googleapis.com/fcm/send/abc', false)).toBeNull();
    expect(endpointProblem('http://127.0.0.1:9/push/x', false)).not.toBeNull();
    expect(endpointProblem('http://127.0.0.1:9/push/x', true)).toBeNull();
    expect(endpointProblem('http://10.0.0.1:9/push/x', true)).not.toBeNull();
  });

  it('the test flag and the subject are validated at start, naming the variable', () => {
    expect(() => loadConfig({ PUSH_ALLOW_INSECURE_LOOPBACK: 'yes' })).toThrow(/PUSH_ALLOW_INSECURE_LOOPBACK/);
    expect(() => loadConfig({ PUSH_SUBJECT: 'http://insecure.example-service.dev' })).toThrow(/PUSH_SUBJECT/);
    expect(loadConfig({}).push.allowInsecureLoopback).toBe(false);
    expect(() => loadConfig({ RESPONSE_TARGET_HOURS: '0' })).toThrow(/RESPONSE_TARGET_HOURS/);
  });
});

describe.each(STORES)('push subscriptions, refusals, on %s', (store) => {
  let t: TestApp;
  let push: TestPushService;
  let cookie: string;
  let csrf: string;
  beforeAll(async () => {
    push = await startPushService();
    // Production settings: no http loopback.
    t = await startTestApp({ store, background: true });
    ({ cookie, csrf } = await signIn(t));
  });
  afterAll(async () => {
    await t.close();
    await push.close();
  });

  it('refuses an http loopback endpoint in production, bad keys, and other bodies, every problem at once', async () => {
    const sub = push.subscription('dev');
    const res = await subscribe(t, cookie, { ...sub, keys: { p256dh: 'short', auth: 'x' }, _csrf: csrf });
    expect(res.status).toBe(422);
    // The console script sent JSON, so the refusal is the API's JSON error, not an HTML page.
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    const body = (await res.json()) as { error: string; details: string[] };
    expect(body.error).toBe('validation_failed');
    const details = body.details.join('\n');
    expect(details).toContain('endpoint must be an https: URL of a push service');
    expect(details).toContain('keys.p256dh must be');
    expect(details).toContain('keys.auth must be');
    expect((await subscribe(t, cookie, { _csrf: csrf })).status).toBe(422);
    const broken = await fetch(`${t.url}/operator/push/subscriptions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', cookie },
      body: '{"endpoint": ',
    });
    expect(broken.status).toBe(400);
    expect(((await broken.json()) as { error: string }).error).toBe('invalid_json');
    const rows = await t.store.db.selectFrom('push_subscriptions').selectAll().execute();
    expect(rows).toHaveLength(0);
  });

  it('needs the console session and its CSRF token', async () => {
    const sub = push.subscription('anon');
    // Refused in JSON: a redirect to the sign-in page would be followed by fetch() and look like success.
    const anonymous = await subscribe(t, '', { ...sub });
    expect(anonymous.status).toBe(401);
    expect(((await anonymous.json()) as { error: string }).error).toBe('unauthorized');
    const forged = await subscribe(t, cookie, { ...sub, _csrf: 'forged' });
    expect(forged.status).toBe(401);
    expect(((await forged.json()) as { message: string }).message).toMatch(/did not come from the console/);
    const rows = await t.store.db.selectFrom('push_subscriptions').selectAll().where('endpoint', '=', sub.endpoint).execute();
    expect(rows).toHaveLength(0);
  });

  it('a push endpoint whose name resolves to a private or loopback address is refused by the SSRF guard, never posted to', async () => {
    const dns = await sharedDnsServer();
    const names = ['ip-10-1-2-3.push.example-service.dev', 'ip-127-0-0-1.push.example-service.dev', 'ip-169-254-169-254.push.example-service.dev'];
    for (const [i, name] of names.entries()) {
      // Stored directly: its name form passes the subscription check (https, a public-looking name).
      const endpoint = `https://${name}/x`;
      expect(endpointProblem(endpoint, false)).toBeNull();
      await t.store.db
        .insertInto('push_subscriptions')
        .values({
          id: `push-ssrf-${i}`,
          endpoint,
          p256dh: push.subscription(`ssrf-${i}`).keys.p256dh,
          auth: 'AAAAAAAAAAAAAAAAAAAAAA',
          created_at: new Date().toISOString(),
          last_error: null,
        })
        .execute();
    }
    await submit(t);
    for (const [i, name] of names.entries()) {
      await expect
        .poll(
          async () =>
            (await t.store.db.selectFrom('push_subscriptions').select('last_error').where('id', '=', `push-ssrf-${i}`).executeTakeFirst())?.last_error ?? null,
          { timeout: 15_000 },
        )
        .toBe('refused: the push service host is, or resolves to, a loopback, private or reserved address');
      // Resolved through DNS_SERVERS, as webhooks are: the address checked is the one connected to.
      expect(dns.queries.some((q) => q.name === name)).toBe(true);
    }
    await t.store.db.deleteFrom('push_subscriptions').where('id', 'like', 'push-ssrf-%').execute();
  });

  it('a push service that fails or hangs never blocks or fails the change that caused it', async () => {
    // Store a subscription directly (as if the flag had been on), pointing at a port nobody listens on.
    await t.store.db
      .insertInto('push_subscriptions')
      .values({
        id: 'push-dead',
        endpoint: 'https://push.unreachable.example-service.invalid/x',
        p256dh: push.subscription('dead').keys.p256dh,
        auth: 'AAAAAAAAAAAAAAAAAAAAAA',
        created_at: new Date().toISOString(),
        last_error: null,
      })
      .execute();
    const started = Date.now();
    const id = await submit(t);
    expect(Date.now() - started).toBeLessThan(3_000);
    expect((await postJson(`${t.url}/api/v1/messages`, { message: `About ${id}: a question.`, reply_to: 'asker@mail.example-agent.dev' })).status).toBe(201);
    await expect
      .poll(
        async () =>
          (await t.store.db.selectFrom('push_subscriptions').select('last_error').where('id', '=', 'push-dead').executeTakeFirst())?.last_error ?? null,
        { timeout: 15_000 },
      )
      .not.toBeNull();
  });
});
