import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { calculateJwkThumbprint, decodeProtectedHeader, exportJWK, generateKeyPair, type JSONWebKeySet, SignJWT } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import { verifyReceipt } from '../src/receipts/verify.js';
import { type Json, patchOk, submit, taskIn } from './operator.support.js';
import { runCli } from './receipts.support.js';
import { STORES, useTestApp } from './support/app.js';

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

describe.each(STORES)('receipt forgery and tampering on %s', (store) => {
  let task: Json;
  let jwks: JSONWebKeySet;
  const notes = 'The parcel was delivered to the front desk at 14:05.';
  const t = useTestApp({ store });
  beforeAll(async () => {
    const id = await submit(t, { delivery: 'status_poll', contact_email: undefined });
    await patchOk(t, id, { status: 'accepted' });
    task = await patchOk(t, id, { status: 'delivered', operator_notes: notes });
    jwks = (await (await fetch(`${t.url}/.well-known/jwks.json`)).json()) as JSONWebKeySet;
  });

  const failed = (result: Awaited<ReturnType<typeof verifyReceipt>>) => result.checks.filter((c) => !c.ok).map((c) => c.name);

  it('publishes no private key material', async () => {
    const text = await (await fetch(`${t.url}/.well-known/jwks.json`)).text();
    expect(text).not.toMatch(/"d"\s*:/);
    expect(text).not.toContain('private');
  });

  it('refuses a receipt whose payload was edited', async () => {
    const [header, payload, signature] = String(task.receipt).split('.');
    const claims = JSON.parse(Buffer.from(String(payload), 'base64url').toString()) as Json;
    const edited = `${header}.${b64({ ...claims, deliverable_sha256: '0'.repeat(64) })}.${signature}`;
    const result = await verifyReceipt(edited, { jwks });
    expect(result.valid).toBe(false);
    expect(failed(result)).toEqual(['signature']);
  });

  it('refuses a receipt for another task or another deliverable', async () => {
    const other = await verifyReceipt(String(task.receipt), { jwks, expectedTaskId: 'task-2030-00000000000000000000000000000000' });
    expect(failed(other)).toEqual(['task_id']);
    const changed = await verifyReceipt(String(task.receipt), { jwks, operatorNotes: `${notes} ` });
    expect(failed(changed)).toEqual(['deliverable']);
  });

  it('refuses a receipt signed by a key the service never published, even one claiming a published kid', async () => {
    const { privateKey, publicKey } = await generateKeyPair('EdDSA', { crv: 'Ed25519' });
    const claims = JSON.parse(Buffer.from(String(task.receipt).split('.')[1] ?? '', 'base64url').toString()) as Record<string, unknown>;
    const ownKid = await calculateJwkThumbprint(await exportJWK(publicKey));
    const unknown = await new SignJWT(claims).setProtectedHeader({ alg: 'EdDSA', kid: ownKid, typ: 'JWT' }).sign(privateKey);
    expect(failed(await verifyReceipt(unknown, { jwks }))).toEqual(['kid']);
    const impostor = await new SignJWT(claims)
      .setProtectedHeader({ alg: 'EdDSA', kid: String(decodeProtectedHeader(String(task.receipt)).kid), typ: 'JWT' })
      .sign(privateKey);
    expect(failed(await verifyReceipt(impostor, { jwks }))).toEqual(['signature']);
  });

  it('refuses unsigned, malformed and wrong-algorithm tokens', async () => {
    const claims = String(task.receipt).split('.')[1];
    const cases = [
      `${b64({ alg: 'none', typ: 'JWT' })}.${claims}.`,
      `${b64({ alg: 'HS256', kid: jwks.keys[0]?.kid, typ: 'JWT' })}.${claims}.c2lnbmF0dXJl`,
      `${b64({ alg: 'EdDSA', typ: 'JWT' })}.${claims}.c2lnbmF0dXJl`,
      'not-a-receipt',
      '',
    ];
    for (const token of cases) {
      const result = await verifyReceipt(token, { jwks });
      expect(result.valid, token).toBe(false);
      expect(failed(result)).toEqual(['format']);
    }
  });

  it('makes the CLI exit 1 with INVALID on a forged receipt, a wrong deliverable or a task without a receipt', async () => {
    const [header, payload, signature] = String(task.receipt).split('.');
    const claims = JSON.parse(Buffer.from(String(payload), 'base64url').toString()) as Json;
    const forged = `${header}.${b64({ ...claims, delivered: 'never' })}.${signature}`;
    const tampered = await runCli('verify-receipt', [forged, '--base-url', t.url]);
    expect(tampered.code).toBe(1);
    expect(tampered.stdout).toContain('✗ signature');
    expect(tampered.stdout).toContain('INVALID');

    const dir = mkdtempSync(path.join(tmpdir(), 'hts-notes-'));
    const file = path.join(dir, 'notes.txt');
    writeFileSync(file, 'Something else entirely.');
    const wrong = await runCli('verify-receipt', [String(task.receipt), '--base-url', t.url, '--notes-file', file]);
    expect(wrong.code).toBe(1);
    expect(wrong.stdout).toContain('✗ deliverable');

    const pending = await taskIn(t, 'accepted');
    const early = await runCli('verify-receipt', [pending, '--base-url', t.url]);
    expect(early.code).toBe(1);
    expect(early.stdout).toContain('is accepted: it has no receipt yet');

    const missing = await runCli('verify-receipt', ['task-2030-00000000000000000000000000000000', '--base-url', t.url]);
    expect(missing.code).toBe(1);
    expect(missing.stdout).toContain('has no task');

    const usage = await runCli('verify-receipt', []);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain('Usage: npm run verify-receipt');
    // Five CLI runs (tsx compiles each): seconds apiece on a loaded machine.
  }, 120_000);
});
