import { describe, expect, it } from 'vitest';
import { patchOk } from '../../../test/operator.support.js';
import { STORES, useTestApp } from '../../../test/support/app.js';
import { waitUntil } from '../../../test/support/smtp.js';
import { submitWithCallback, useReceiver, WEBHOOK_TEST_ENV } from '../../../test/webhooks.support.js';
import { HumanTaskClient } from '../src/index.js';

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
