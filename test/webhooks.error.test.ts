import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { STORES, startTestApp, TestClock, useTestApp } from './support/app.js';
import { waitUntil } from './support/smtp.js';
import { ACCEPT, admin, listWebhooks, patchTask, submitWithCallback, useReceiver, WEBHOOK_TEST_ENV, waitForEvent } from './webhooks.support.js';

/** A port nothing listens on (bound, then closed). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('webhook configuration', () => {
  it('stops the start with the variable named when a WEBHOOK_ value is bad', () => {
    expect(() => loadConfig({ WEBHOOK_ALLOW_PRIVATE: 'maybe' })).toThrow('Invalid configuration: WEBHOOK_ALLOW_PRIVATE must be true or false, got "maybe"');
    expect(() => loadConfig({ WEBHOOK_TIMEOUT_MS: 'ten' })).toThrow(/^Invalid configuration: WEBHOOK_TIMEOUT_MS must be a whole number/);
    expect(() => loadConfig({ WEBHOOK_MAX_ATTEMPTS: '0' })).toThrow(/^Invalid configuration: WEBHOOK_MAX_ATTEMPTS must be between 1/);
    expect(() => loadConfig({ WEBHOOK_RETRY_BASE_MS: '-5' })).toThrow(/WEBHOOK_RETRY_BASE_MS/);
    expect(() => loadConfig({ WEBHOOK_RETRY_MAX_MS: '1.5' })).toThrow(/WEBHOOK_RETRY_MAX_MS/);
    expect(loadConfig({}).webhooks).toEqual({ allowPrivate: false, retryBaseMs: 5000, retryMaxMs: 3_600_000, maxAttempts: 81, timeoutMs: 10_000 });
  });
});

describe.each(STORES)('webhook receivers that misbehave, on %s', (store) => {
  const receiver = useReceiver();
  const clock = new TestClock();
  const t = useTestApp({ store, clock, background: true, env: { ...WEBHOOK_TEST_ENV, WEBHOOK_TIMEOUT_MS: '3000' } });

  it('stops for good when the receiver answers 410 Gone, later events of the task included', async () => {
    const id = await submitWithCallback(t, `${receiver.url}/gone-${store}`);
    await patchTask(t, id, ACCEPT);
    const gone = await waitForEvent(t, id, 'task.accepted', (w) => w.status === 'gone');
    expect(gone).toMatchObject({ attempts: 1, last_status_code: 410, next_attempt_at: null });
    clock.advance(24 * 3600_000);
    await patchTask(t, id, { status: 'rejected', operator_notes: 'Withdrawn.' });
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(receiver.to(`/gone-${store}`)).toHaveLength(1);
    expect((await listWebhooks(t, id)).map((w) => w.event)).toEqual(['task.accepted']);
  });

  it('does not follow a redirect: a 3xx is a failed attempt', async () => {
    const id = await submitWithCallback(t, `${receiver.url}/redirect-${store}`);
    await patchTask(t, id, ACCEPT);
    const event = await waitForEvent(t, id, 'task.accepted', (w) => w.attempts === 1);
    expect(event).toMatchObject({ status: 'pending', last_status_code: 302, last_error: 'the receiver answered 302' });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(receiver.to('/ok-redirected')).toHaveLength(0);
  });

  it('times out a hanging receiver without holding up another task’s webhook', async () => {
    const hanging = await submitWithCallback(t, `${receiver.url}/hang-${store}`);
    const quick = await submitWithCallback(t, `${receiver.url}/ok-quick-${store}`);
    await patchTask(t, hanging, ACCEPT);
    await waitUntil(() => receiver.to(`/hang-${store}`).length === 1 || undefined, 10_000, 'the hanging request');
    await patchTask(t, quick, ACCEPT);
    const delivered = await waitForEvent(t, quick, 'task.accepted', (w) => w.status === 'delivered');
    expect(delivered.attempts).toBe(1);
    // Delivered while the other delivery was still waiting for its answer (3 s timeout).
    expect((await listWebhooks(t, hanging))[0]!.attempts).toBe(0);
    const timedOut = await waitForEvent(t, hanging, 'task.accepted', (w) => w.attempts === 1);
    expect(timedOut).toMatchObject({ status: 'pending', last_status_code: null });
    expect(timedOut.last_error).toMatch(/timeout/);
    expect(timedOut.attempt_log[0]!.duration_ms).toBeGreaterThanOrEqual(2900);
    // The worker closed its side: no socket is left open to the receiver.
    await waitUntil(() => receiver.openSockets() === 0 || undefined, 5000, 'sockets closed');
  });

  it('reads only the start of a huge answer and closes the connection', async () => {
    const id = await submitWithCallback(t, `${receiver.url}/huge-${store}`);
    await patchTask(t, id, ACCEPT);
    const event = await waitForEvent(t, id, 'task.accepted', (w) => w.status === 'delivered');
    expect(event.attempt_log[0]!.duration_ms).toBeLessThan(2900);
    await waitUntil(() => receiver.openSockets() === 0 || undefined, 5000, 'sockets closed');
  });

  it('retries a receiver that resets the connection', async () => {
    const id = await submitWithCallback(t, `${receiver.url}/reset-${store}`);
    await patchTask(t, id, ACCEPT);
    const event = await waitForEvent(t, id, 'task.accepted', (w) => w.attempts === 1);
    expect(event).toMatchObject({ status: 'pending', last_status_code: null });
    expect(event.last_error).toMatch(/ECONNRESET|socket hang up/);
  });

  it('retries after a connection error and records it', async () => {
    const port = await closedPort();
    const id = await submitWithCallback(t, `http://127.0.0.1:${port}/nobody`);
    await patchTask(t, id, ACCEPT);
    const event = await waitForEvent(t, id, 'task.accepted', (w) => w.attempts === 1);
    expect(event).toMatchObject({ status: 'pending', last_status_code: null });
    expect(event.last_error).toMatch(/ECONNREFUSED/);
    expect(event.next_attempt_at).not.toBeNull();
  });

  it('marks an event failed after WEBHOOK_MAX_ATTEMPTS', async () => {
    const limited = await startTestApp({
      store,
      clock: new TestClock(),
      background: true,
      env: { ...WEBHOOK_TEST_ENV, WEBHOOK_MAX_ATTEMPTS: '2', WEBHOOK_RETRY_BASE_MS: '1000' },
    });
    try {
      const id = await submitWithCallback(limited, `${receiver.url}/fail-99-${store}`);
      await patchTask(limited, id, ACCEPT);
      await waitForEvent(limited, id, 'task.accepted', (w) => w.attempts === 1);
      (limited.clock as TestClock).advance(5000);
      const failed = await waitForEvent(limited, id, 'task.accepted', (w) => w.status === 'failed');
      expect(failed).toMatchObject({ attempts: 2, next_attempt_at: null, last_status_code: 500 });
    } finally {
      await limited.close();
    }
  });

  it('answers the admin endpoints’ errors with the contract’s error body', async () => {
    expect((await fetch(`${t.url}/api/v1/admin/webhooks`)).status).toBe(401);
    expect((await fetch(`${t.url}/api/v1/admin/webhooks?task_id=x`, { headers: { authorization: 'Bearer wrong-key-0123456789' } })).status).toBe(401);
    const unknown = await fetch(`${t.url}/api/v1/admin/webhooks/evt-2030-${'0'.repeat(32)}/retry`, { method: 'POST', headers: admin });
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toMatchObject({ error: 'not_found' });
    const junk = await fetch(`${t.url}/api/v1/admin/webhooks/${encodeURIComponent('../../x')}/retry`, { method: 'POST', headers: admin });
    expect(junk.status).toBe(404);
    const badLimit = await fetch(`${t.url}/api/v1/admin/webhooks?limit=0`, { headers: admin });
    expect(badLimit.status).toBe(400);
    expect(await (await fetch(`${t.url}/api/v1/admin/webhooks?task_id=not-a-task`, { headers: admin })).json()).toEqual({ webhooks: [] });

    const id = await submitWithCallback(t, `${receiver.url}/ok-done-${store}`);
    await patchTask(t, id, ACCEPT);
    const done = await waitForEvent(t, id, 'task.accepted', (w) => w.status === 'delivered');
    const again = await fetch(`${t.url}/api/v1/admin/webhooks/${done.id}/retry`, { method: 'POST', headers: admin });
    expect(again.status).toBe(409);
    expect(await again.json()).toMatchObject({ error: 'invalid_transition', from: 'delivered' });
    expect((await fetch(`${t.url}/api/v1/admin/webhooks/${done.id}/retry`, { method: 'POST' })).status).toBe(401);
  });
});
