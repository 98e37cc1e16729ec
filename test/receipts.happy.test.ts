import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import { calculateJwkThumbprint, createLocalJWKSet, createRemoteJWKSet, decodeProtectedHeader, type JSONWebKeySet, jwtVerify } from 'jose';
import { describe, expect, it } from 'vitest';
import { ensureActiveKey } from '../src/receipts/keys.js';
import { verifyReceipt } from '../src/receipts/verify.js';
import { adminGet, type Json, patchOk, submit } from './operator.support.js';
import { runCli } from './receipts.support.js';
import { STORES, startTestApp, TestClock, useTestApp, validTask } from './support/app.js';

// An independent RFC 8785 implementation, as a client would use, not the service's own helper.
const canonicalize = createRequire(import.meta.url)('canonicalize') as (value: unknown) => string;
const sha256 = (text: string) => createHash('sha256').update(Buffer.from(text, 'utf8')).digest('hex');

describe.each(STORES)('receipts on %s', (store) => {
  const clock = new TestClock('2030-03-10T10:00:00.000Z');
  const t = useTestApp({ store, clock });

  async function jwks(): Promise<JSONWebKeySet> {
    const res = await fetch(`${t.url}/.well-known/jwks.json`);
    expect(res.status).toBe(200);
    return (await res.json()) as JSONWebKeySet;
  }

  async function deliver(request: Record<string, unknown>, notes: string): Promise<Json> {
    const id = await submit(t, request);
    clock.advance(10 * 60_000);
    await adminGet(t, `/api/v1/admin/tasks/${id}`);
    clock.advance(5 * 60_000);
    await patchOk(t, id, { status: 'accepted', eta: '2030-03-20T12:00:00Z' });
    clock.advance(2 * 3600_000);
    return patchOk(t, id, { status: 'delivered', operator_notes: notes });
  }

  it('publishes the public part of the signing key, with its RFC 7638 thumbprint as kid', async () => {
    const set = await jwks();
    expect(set.keys).toHaveLength(1);
    const [key] = set.keys;
    expect(Object.keys(key ?? {}).sort()).toEqual(['alg', 'crv', 'kid', 'kty', 'use', 'x']);
    expect(key).toMatchObject({ kty: 'OKP', crv: 'Ed25519', alg: 'EdDSA', use: 'sig' });
    expect(key?.kid).toBe(await calculateJwkThumbprint({ kty: 'OKP', crv: 'Ed25519', x: String(key?.x) }, 'sha256'));
  });

  it('signs a receipt a fresh jose client verifies against the published JWKS, binding exactly the contract payload', async () => {
    const request = validTask({
      task_type: 'data_collection',
      deadline: '2030-04-01T12:00:00',
      requester: 'agent-9',
      budget_usd: 10,
      output_format: 'structured_json',
    });
    const notes = 'Benches counted: 42.\r\nNorth gate: 7. Ünïcödé ✓';
    const task = await deliver(request, notes);
    const receipt = String(task.receipt);

    const header = decodeProtectedHeader(receipt);
    const set = await jwks();
    expect(header).toEqual({ alg: 'EdDSA', kid: set.keys[0]?.kid, typ: 'JWT' });

    const { payload } = await jwtVerify(receipt, createLocalJWKSet(set), { algorithms: ['EdDSA'], issuer: t.config.baseUrl, subject: String(task.task_id) });
    const remote = await jwtVerify(receipt, createRemoteJWKSet(new URL(`${t.url}/.well-known/jwks.json`)), { algorithms: ['EdDSA'] });
    expect(remote.payload).toEqual(payload);

    const { contact_email: _omitted, ...asked } = request;
    expect(payload).toEqual({
      iss: t.config.baseUrl,
      sub: task.task_id,
      iat: Math.floor(Date.parse(String(task.delivered_at)) / 1000),
      receipt_version: 2,
      task_id: task.task_id,
      task_type: 'data_collection',
      delivery: 'email',
      deliverable_sha256: sha256(notes),
      request_sha256: sha256(canonicalize(asked)),
      timeline: {
        submitted_at: task.created_at,
        seen_by_operator_at: task.seen_by_operator_at,
        accepted_at: task.accepted_at,
        delivered_at: task.delivered_at,
      },
      attachments: [],
    });
    expect(task.seen_by_operator_at).toBe('2030-03-10T10:10:00.000Z');

    // What the public status endpoint shows agrees with the receipt.
    const pub = (await (await fetch(`${t.url}/api/v1/tasks/${String(task.task_id)}`)).json()) as Json;
    expect(pub.receipt).toBe(receipt);
    expect(pub.deliverable_sha256).toBe(sha256(String(pub.operator_notes)));
    expect(pub.receipt_issued_at).toBe(task.delivered_at);
  });

  it('verifies with the exported verifyReceipt: signature, kid, task id and deliverable', async () => {
    const task = await deliver({}, 'Open on Sundays.');
    const result = await verifyReceipt(String(task.receipt), { jwks: await jwks(), expectedTaskId: String(task.task_id), operatorNotes: 'Open on Sundays.' });
    expect(result.valid).toBe(true);
    expect(result.checks.map((c) => [c.name, c.ok])).toEqual([
      ['format', true],
      ['kid', true],
      ['signature', true],
      ['payload', true],
      ['task_id', true],
      ['deliverable', true],
    ]);
    expect(result.payload?.task_id).toBe(task.task_id);
  });

  it('rotates keys with the CLI; old receipts keep verifying and new ones use the new key', async () => {
    const before = await deliver({}, 'Signed before the rotation.');
    const oldKid = decodeProtectedHeader(String(before.receipt)).kid;

    const rotated = await runCli('rotate-keys', [], { DATABASE_URL: t.config.databaseUrl, DATA_DIR: t.dataDir, LOG_LEVEL: 'silent' });
    expect(rotated.stderr).toBe('');
    expect(rotated.code).toBe(0);
    expect(rotated.stdout).toContain(`Retired key ${String(oldKid)}`);

    const set = await jwks();
    expect(set.keys).toHaveLength(2);
    expect(set.keys[1]?.kid).toBe(oldKid);
    const newKid = set.keys[0]?.kid;
    expect(newKid).not.toBe(oldKid);
    expect(rotated.stdout).toContain(`Active key is now ${String(newKid)}`);

    const after = await deliver({}, 'Signed after the rotation.');
    expect(decodeProtectedHeader(String(after.receipt)).kid).toBe(newKid);

    const keys = createLocalJWKSet(await jwks());
    await expect(jwtVerify(String(before.receipt), keys, { algorithms: ['EdDSA'] })).resolves.toBeTruthy();
    await expect(jwtVerify(String(after.receipt), keys, { algorithms: ['EdDSA'] })).resolves.toBeTruthy();

    // The retired key's private part is gone; only the active key can sign.
    const rows = await t.store.db.selectFrom('signing_keys').select(['kid', 'private_jwk', 'retired_at']).execute();
    expect(rows.find((r) => r.kid === oldKid)).toMatchObject({ private_jwk: '' });
    expect(rows.find((r) => r.kid === newKid)?.retired_at).toBeNull();
  });

  it('verifies from the command line, by task id and by receipt', async () => {
    const task = await deliver({ delivery: 'status_poll', contact_email: undefined }, 'Result: the shop closes at 18:00.');
    // The keys come from t.url; the receipt names the service's BASE_URL (another port here).
    const byId = await runCli('verify-receipt', [String(task.task_id), '--base-url', t.url, '--issuer', t.config.baseUrl]);
    expect(byId.stdout).toContain('VALID: signed by');
    expect(byId.stdout).toContain('✓ deliverable');
    expect(byId.code).toBe(0);

    const byReceipt = await runCli('verify-receipt', [String(task.receipt), '--issuer', t.config.baseUrl], { BASE_URL: t.url });
    expect(byReceipt.stdout).toContain(`claiming task ${String(task.task_id)}`);
    expect(byReceipt.stdout).toContain('✓ deliverable');
    expect(byReceipt.code).toBe(0);
  });

  it('creates one signing key even when instances start together', async () => {
    await t.store.db.deleteFrom('signing_keys').where('kid', 'is not', null).execute();
    const kids = await Promise.all(Array.from({ length: 4 }, () => ensureActiveKey(t.store.db, clock.now())));
    expect(new Set(kids).size).toBe(1);
    const rows = await t.store.db.selectFrom('signing_keys').select('kid').execute();
    expect(rows.map((r) => r.kid)).toEqual([kids[0]]);

    const second = await startTestApp({ shareDatabaseWith: t });
    try {
      const other = (await (await fetch(`${second.url}/.well-known/jwks.json`)).json()) as JSONWebKeySet;
      expect(other).toEqual(await jwks());
    } finally {
      await second.close();
    }
  });
});
