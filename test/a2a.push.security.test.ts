import { describe, expect, it } from 'vitest';
import { AppError } from '../src/domain/errors.js';
import { createPushConfig, listPushConfigs } from '../src/services/a2a/push-configs.js';
import { patchOk, submit } from './operator.support.js';
import { STORES, useTestApp } from './support/app.js';
import { waitUntil } from './support/smtp.js';
import { listWebhooks, useReceiver } from './webhooks.support.js';

/**
 * Push notification URLs under the webhook SSRF guard (services/a2a/push-configs.ts,
 * webhooks/target.ts): refused when the config is made for private, loopback and reserved hosts
 * and non-https schemes, and at delivery for a name that resolves to such an address.
 */

describe.each(STORES)('the SSRF guard on A2A push notification URLs, on %s', (store) => {
  const receiver = useReceiver();
  // The guard on (no WEBHOOK_ALLOW_PRIVATE); names resolve through the test DNS server.
  const t = useTestApp({ store, background: true, env: { MAIL_POLL_MS: '50', WEBHOOK_TIMEOUT_MS: '3000' } });

  it.each([
    'http://hooks.example-agent.dev/a2a',
    'https://127.0.0.1/a2a',
    'https://localhost/a2a',
    'https://10.0.0.8/a2a',
    'https://169.254.169.254/latest',
    'https://[::1]/a2a',
    'https://2130706433/a2a',
    'https://user:pass@hooks.example-agent.dev/a2a',
    'ftp://hooks.example-agent.dev/a2a',
  ])('refuses %s with validation_failed naming url, and keeps nothing', async (url) => {
    const taskId = await submit(t);
    const error = await createPushConfig(t.deps, taskId, { url }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(AppError);
    const body = (error as AppError).toBody() as { error: string; details: string[] };
    expect(body.error).toBe('validation_failed');
    expect(body.details[0]).toMatch(/^url must /);
    expect((await listPushConfigs(t.deps, taskId)).configs).toEqual([]);
  });

  it('refuses at delivery a name that resolves to a private or loopback address, and sends nothing', async () => {
    const taskId = await submit(t);
    await createPushConfig(t.deps, taskId, { url: 'https://ip-127-0-0-1.hooks.example-agent.dev/a2a', token: 't' });
    await patchOk(t, taskId, { status: 'accepted' });
    const [event] = await waitUntil(async () => {
      const list = await listWebhooks(t, taskId);
      return list[0]?.attempts === 1 ? list : undefined;
    });
    expect(event).toMatchObject({ status: 'pending', last_status_code: null });
    expect(event!.last_error).toMatch(/^refused: the callback host is, or resolves to, a loopback, private or reserved address$/);
    expect(receiver.received).toHaveLength(0);
  });
});
