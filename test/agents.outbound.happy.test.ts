import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { verify } from 'web-bot-auth';
import { verifierFromJWK } from 'web-bot-auth/crypto';
import { STORES, TestClock, useTestApp } from './support/app.js';
import { waitUntil } from './support/smtp.js';
import { ACCEPT, patchTask, runVerifyWebhook, submitWithCallback, useReceiver, WEBHOOK_TEST_ENV } from './webhooks.support.js';

/**
 * Outbound (docs/verified-agents.md): every webhook also carries a Web Bot Auth signature made
 * with the service's key, published in its own directory; a receiver verifies it with Cloudflare's
 * web-bot-auth package, from the directory the service publishes.
 */

describe.each(STORES)('signed webhooks on %s', (store) => {
  const receiver = useReceiver();
  // The receiver checks the window against its own clock: the service's clock is the real one here.
  const t = useTestApp({ store, clock: new TestClock(new Date()), background: true, env: WEBHOOK_TEST_ENV });

  it('publishes its directory and signs each webhook so web-bot-auth verifies it', async () => {
    const directory = await fetch(`${t.url}/.well-known/http-message-signatures-directory`);
    expect(directory.status).toBe(200);
    expect(directory.headers.get('content-type')).toMatch(/^application\/http-message-signatures-directory\+json/);
    const { keys } = (await directory.json()) as { keys: (JsonWebKey & { kid: string })[] };
    expect(keys.length).toBeGreaterThan(0);

    const id = await submitWithCallback(t, `${receiver.url}/ok-signed`);
    await patchTask(t, id, ACCEPT);
    await waitUntil(() => receiver.to('/ok-signed').length > 0, 15_000);
    const [delivery] = receiver.to('/ok-signed');
    const headers = new Headers(Object.entries(delivery?.headers ?? {}).map(([name, value]) => [name, String(value)]));
    expect(headers.get('signature-agent')).toBe(`"${new URL(t.config.baseUrl).origin}"`);
    expect(headers.get('signature-input')).toMatch(/tag="web-bot-auth"/);

    let keyid = '';
    await verify({ method: 'POST', url: `${receiver.url}/ok-signed`, headers }, async (data, signature, params) => {
      keyid = params.keyid;
      const jwk = keys.find((key) => key.kid === params.keyid);
      if (!jwk) throw new Error('unknown key');
      await (await verifierFromJWK({ kty: jwk.kty, crv: jwk.crv, x: jwk.x }))(data, signature, params);
    });
    expect(keyid).toBe(keys[0]?.kid);

    // A tampered signature does not verify.
    const tampered = new Headers(headers);
    tampered.set('signature-agent', '"https://impostor.example"');
    await expect(
      verify({ method: 'POST', url: `${receiver.url}/ok-signed`, headers: tampered }, async (data, signature, params) => {
        const jwk = keys.find((key) => key.kid === params.keyid) as JsonWebKey;
        await (await verifierFromJWK({ kty: jwk.kty, crv: jwk.crv, x: jwk.x }))(data, signature, params);
      }),
    ).rejects.toThrow();

    // npm run verify-webhook checks it too, from the saved request (its Host is the @authority).
    const dir = mkdtempSync(path.join(tmpdir(), 'wba-'));
    const save = (name: string, all: Headers) => {
      const file = path.join(dir, name);
      writeFileSync(file, [...all, ['host', String(delivery?.headers.host)]].map(([k, v]) => `${k}: ${v}`).join('\n'));
      return file;
    };
    const bodyFile = path.join(dir, 'body.json');
    writeFileSync(bodyFile, delivery?.body ?? '');
    const good = await runVerifyWebhook(['--headers-file', save('good.txt', headers), '--body-file', bodyFile, '--base-url', t.url]);
    expect(good.stdout).toMatch(/✓ web bot auth/);
    expect(good.code).toBe(0);
    const bad = await runVerifyWebhook(['--headers-file', save('bad.txt', tampered), '--body-file', bodyFile, '--base-url', t.url]);
    expect(bad.stdout).toMatch(/✗ web bot auth/);
    expect(bad.code).toBe(4);
  }, 60_000);
});
