import { describe, expect, it } from 'vitest';
import { patchOk } from '../../../test/operator.support.js';
import { STORES, useTestApp } from '../../../test/support/app.js';
import { waitUntil } from '../../../test/support/smtp.js';
import { submitWithCallback, useReceiver, WEBHOOK_TEST_ENV } from '../../../test/webhooks.support.js';
import { HumanTaskClient, verifyWebhook } from '../src/index.js';

/** Webhooks the real app sends, verified by the client the way a receiver would. */

describe.each(STORES)('verifyWebhook against the real app (%s)', (store) => {
  const receiver = useReceiver();
  const t = useTestApp({ store, background: true, env: WEBHOOK_TEST_ENV });

  it('a delivered event verifies against the published keys; a tampered body or a replay much later does not', async () => {
    const client = new HumanTaskClient({ baseUrl: t.url, issuer: t.config.baseUrl });
    const id = await submitWithCallback(t, `${receiver.url}/ok-client-${store}`);
    await patchOk(t, id, { status: 'accepted' });
    await patchOk(t, id, { status: 'delivered', operator_notes: 'Open Sundays 8:00-12:00.' });
    await waitUntil(() => receiver.to(`/ok-client-${store}`).length >= 2, 20_000);
    // Four lanes deliver concurrently: the two events may arrive in either order.
    const received = receiver.to(`/ok-client-${store}`);
    const ofType = (type: string) => received.find((r) => String(r.body).includes(`"type":"${type}"`));
    const [accepted, delivered] = [ofType('task.accepted'), ofType('task.delivered')];
    // The app runs on a test clock: judge the timestamp against it.
    const now = Math.floor(t.clock.now().getTime() / 1000);
    const asReceived = (r: typeof delivered) => ({ headers: r?.headers as Record<string, string>, body: String(r?.body) });

    const verdict = await client.verifyWebhook(asReceived(delivered), { now });
    expect(verdict).toMatchObject({ valid: true, failure: null });
    expect(verdict.event).toMatchObject({ type: 'task.delivered', data: { task_id: id, status: 'delivered' } });
    expect((await client.verifyWebhook(asReceived(accepted), { now })).event?.type).toBe('task.accepted');

    const tampered = { ...asReceived(delivered), body: String(delivered?.body).replace('8:00-12:00', '9:00-12:00') };
    expect(await client.verifyWebhook(tampered, { now })).toMatchObject({ valid: false, failure: 'signature' });
    expect(await client.verifyWebhook(asReceived(delivered), { now: now + 3600 })).toMatchObject({ valid: false, failure: 'timestamp' });
  });
});

describe.each(STORES)('verifyWebhook checks the Web Bot Auth signature too (%s)', (store) => {
  const receiver = useReceiver();
  const t = useTestApp({ store, background: true, env: WEBHOOK_TEST_ENV });

  it('verifies it against the published keys, for the receiver authority and the service origin; refuses it altered', async () => {
    const client = new HumanTaskClient({ baseUrl: t.url, issuer: t.config.baseUrl });
    const id = await submitWithCallback(t, `${receiver.url}/wba-client-${store}`);
    await patchOk(t, id, { status: 'accepted' });
    await waitUntil(() => receiver.to(`/wba-client-${store}`).length >= 1, 20_000);
    const [received] = receiver.to(`/wba-client-${store}`);
    const headers = received?.headers as Record<string, string>;
    const body = String(received?.body);
    const now = Math.floor(t.clock.now().getTime() / 1000);
    expect(headers['signature-input']).toContain('tag="web-bot-auth"');

    const verdict = await client.verifyWebhook({ headers, body }, { now });
    expect(verdict).toMatchObject({ valid: true, failure: null, webBotAuth: true });
    expect(verdict.detail).toContain('Web Bot Auth signature by key');

    // The published directory serves the same keys: verified offline against it.
    const directory = (await (await fetch(`${t.url}/.well-known/http-message-signatures-directory`)).json()) as { keys: Record<string, unknown>[] };
    expect(await verifyWebhook({ headers, body }, { jwks: directory, now })).toMatchObject({ valid: true, webBotAuth: true });

    // Sent to another authority, naming another signer, a forged signature, the signature stripped when required.
    expect(await client.verifyWebhook({ headers, body }, { now, authority: 'attacker.example' })).toMatchObject({ valid: false, failure: 'web_bot_auth' });
    const other = new HumanTaskClient({ baseUrl: t.url, issuer: 'https://other.example' });
    expect(await other.verifyWebhook({ headers, body }, { now })).toMatchObject({ valid: false, failure: 'web_bot_auth' });
    const forged = { ...headers, signature: `sig1=:${Buffer.alloc(64, 1).toString('base64')}:` };
    expect(await client.verifyWebhook({ headers: forged, body }, { now })).toMatchObject({ valid: false, failure: 'web_bot_auth' });
    const later = await client.verifyWebhook({ headers, body }, { now: now + 600, toleranceSeconds: 3600 });
    expect(later).toMatchObject({ valid: false, failure: 'web_bot_auth', detail: 'the signature has expired' });
    const { 'signature-input': _input, signature: _signature, 'signature-agent': _agent, ...unsigned } = headers;
    expect(await client.verifyWebhook({ headers: unsigned, body }, { now })).toMatchObject({ valid: true, webBotAuth: false });
    expect(await client.verifyWebhook({ headers: unsigned, body }, { now, requireWebBotAuth: true })).toMatchObject({ valid: false, failure: 'web_bot_auth' });
  });
});
