import { createHash, createPrivateKey, sign } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { CompactSign, calculateJwkThumbprint, exportJWK, generateKeyPair, importJWK, type JWK } from 'jose';
import { type ApprovalVectorContext, approvalVectors } from './approval-vectors.js';

/**
 * Writes docs/receipt-test-vectors.json: receipts (v1 and v2), webhooks (Standard Webhooks `v1a`)
 * and a JWKS, each case with the verdict every verifier must reach. The server's tests, the
 * TypeScript client's tests and the Python client's tests all read it, and any third-party
 * verifier can prove itself against it.
 *
 * Deterministic: the test key pairs were generated once and live IN the vectors file (they are
 * TEST keys, published on purpose, and sign nothing real); Ed25519 signatures are deterministic
 * and every timestamp is fixed, so re-running the script rewrites the same bytes.
 * `tsx scripts/make-test-vectors.ts --new-keys` generates fresh test keys.
 */

const OUT = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'docs', 'receipt-test-vectors.json');
const ISSUER = 'https://tasks.example.org';
const TASK_ID = 'task-2026-0123456789abcdef0123456789abcdef';
const OTHER_TASK_ID = 'task-2026-fedcba9876543210fedcba9876543210';
const NOTES = 'Open on Sundays 8:00-12:00; sign photographed at the door.';
const NOW = 1795000000; // 2026-11-18T…Z: the "current time" webhook verifiers are given
const KEY_NAMES = ['active', 'retired', 'unpublished'] as const;
type KeyName = (typeof KEY_NAMES)[number];

const sha256 = (data: string | Uint8Array) => createHash('sha256').update(data).digest('hex');
const b64 = (data: string | Uint8Array) => Buffer.from(data).toString('base64');

async function loadKeys(fresh: boolean): Promise<Record<KeyName, JWK>> {
  if (!fresh && existsSync(OUT)) {
    const existing = JSON.parse(readFileSync(OUT, 'utf8')) as { test_private_keys: Record<KeyName, JWK> };
    return existing.test_private_keys;
  }
  const keys = {} as Record<KeyName, JWK>;
  for (const name of KEY_NAMES) {
    const { privateKey } = await generateKeyPair('EdDSA', { crv: 'Ed25519', extractable: true });
    const jwk = await exportJWK(privateKey);
    keys[name] = { ...jwk, kid: await calculateJwkThumbprint(jwk, 'sha256'), alg: 'EdDSA' };
  }
  return keys;
}

function publicPart(jwk: JWK): JWK {
  return { kty: jwk.kty, crv: jwk.crv, x: jwk.x, kid: jwk.kid, alg: 'EdDSA', use: 'sig' } as JWK;
}

async function jws(payload: object, key: JWK, kid = key.kid): Promise<string> {
  const privateKey = await importJWK(key, 'EdDSA');
  return new CompactSign(new TextEncoder().encode(JSON.stringify(payload))).setProtectedHeader({ alg: 'EdDSA', kid, typ: 'JWT' }).sign(privateKey);
}

function webhookSignature(key: JWK, id: string, timestamp: number, body: string): string {
  const keyObject = createPrivateKey({ key: key as Record<string, unknown> as never, format: 'jwk' });
  return `v1a,${b64(sign(null, Buffer.from(`${id}.${timestamp}.${body}`), keyObject))}`;
}

async function main(): Promise<void> {
  const keys = await loadKeys(process.argv.includes('--new-keys'));
  const jwks = { keys: [publicPart(keys.active), publicPart(keys.retired)] };

  const timeline = {
    submitted_at: '2026-11-17T09:00:00.000Z',
    seen_by_operator_at: '2026-11-17T09:20:00.000Z',
    accepted_at: '2026-11-17T09:21:00.000Z',
    delivered_at: '2026-11-17T15:42:00.000Z',
  };
  const v1 = {
    iss: ISSUER,
    sub: TASK_ID,
    iat: 1794930120,
    receipt_version: 1,
    task_id: TASK_ID,
    task_type: 'real_world_verification',
    delivery: 'status_poll',
    deliverable_sha256: sha256(NOTES),
    request_sha256: sha256('{"description":"Check whether the bakery at 12 Main Street is open on Sunday mornings."}'),
    timeline,
  };
  const files = [
    { name: 'door-sign.txt', media_type: 'text/plain', content: 'Sun 8:00-12:00' },
    {
      name: 'pixel.png',
      media_type: 'image/png',
      content: Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64'),
    },
  ];
  const asBytes = (content: string | Buffer) => (typeof content === 'string' ? Buffer.from(content, 'utf8') : content);
  const v2 = {
    ...v1,
    receipt_version: 2,
    attachments: files.map((f) => ({ name: f.name, media_type: f.media_type, size: asBytes(f.content).length, sha256: sha256(asBytes(f.content)) })),
  };
  const fileInputs = files.map((f) => ({ name: f.name, content_base64: b64(asBytes(f.content)) }));

  const valid = await jws(v1, keys.active);
  const [header, , signature] = valid.split('.');
  const tamperedPayload = Buffer.from(JSON.stringify({ ...v1, deliverable_sha256: sha256('Closed on Sundays.') })).toString('base64url');

  const base = { expected_issuer: ISSUER, expected_task_id: TASK_ID, operator_notes: NOTES };
  const receipts: object[] = [
    { name: 'v1-valid', description: 'A version-1 receipt signed by the active key.', receipt: valid, ...base, expected: { valid: true, failure: null } },
    {
      name: 'v1-valid-retired-key',
      description: 'Signed by a retired (expired) key that is still published: old receipts keep verifying.',
      receipt: await jws(v1, keys.retired),
      ...base,
      expected: { valid: true, failure: null },
    },
    {
      name: 'v1-tampered-payload',
      description: 'The payload was changed after signing (another deliverable hash); the signature no longer matches.',
      receipt: `${header}.${tamperedPayload}.${signature}`,
      ...base,
      expected: { valid: false, failure: 'signature' },
    },
    {
      name: 'v1-wrong-key',
      description: 'Signed by a key that is not published, claiming the kid of a published one.',
      receipt: await jws(v1, keys.unpublished, keys.active.kid),
      ...base,
      expected: { valid: false, failure: 'signature' },
    },
    {
      name: 'v1-unknown-kid',
      description: 'Signed by a key that is not published, under its own kid.',
      receipt: await jws(v1, keys.unpublished),
      ...base,
      expected: { valid: false, failure: 'kid' },
    },
    {
      name: 'v1-wrong-issuer',
      description: 'Validly signed, but names another issuer than the service whose keys verify it.',
      receipt: await jws({ ...v1, iss: 'https://impostor.example.com' }, keys.active),
      ...base,
      expected: { valid: false, failure: 'issuer' },
    },
    {
      name: 'v1-loopback-alias',
      description:
        'Issued as http://localhost:8080 and checked against http://127.0.0.1:8080: loopback names are one host under the issuer rule (same scheme, port and path), so it verifies.',
      receipt: await jws({ ...v1, iss: 'http://localhost:8080' }, keys.active),
      ...base,
      expected_issuer: 'http://127.0.0.1:8080',
      expected: { valid: true, failure: null },
    },
    {
      name: 'v1-loopback-other-port',
      description: 'Issued as http://localhost:8080 and checked against http://127.0.0.1:9090: another port is another issuer.',
      receipt: await jws({ ...v1, iss: 'http://localhost:8080' }, keys.active),
      ...base,
      expected_issuer: 'http://127.0.0.1:9090',
      expected: { valid: false, failure: 'issuer' },
    },
    {
      name: 'v1-other-task',
      description: 'A valid receipt for another task than the one asked about.',
      receipt: valid,
      ...base,
      expected_task_id: OTHER_TASK_ID,
      expected: { valid: false, failure: 'task_id' },
    },
    {
      name: 'v1-deliverable-mismatch',
      description: 'A valid receipt, checked against a deliverable other than the one signed.',
      receipt: valid,
      ...base,
      operator_notes: 'Closed on Sundays.',
      expected: { valid: false, failure: 'deliverable' },
    },
    { name: 'malformed', description: 'Not a compact JWS.', receipt: 'not-a-receipt', ...base, expected: { valid: false, failure: 'format' } },
    {
      name: 'v2-valid-with-attachments',
      description: 'A version-2 receipt listing two attachments, checked with the files.',
      receipt: await jws(v2, keys.active),
      ...base,
      files: fileInputs,
      expected: { valid: true, failure: null },
    },
    {
      name: 'v2-valid-no-attachments',
      description: 'A version-2 receipt of a delivery without files (attachments: []), checked with no files.',
      receipt: await jws({ ...v2, attachments: [] }, keys.active),
      ...base,
      files: [],
      expected: { valid: true, failure: null },
    },
    {
      name: 'v2-attachment-hash-mismatch',
      description: 'A valid version-2 receipt, but one file given differs from the one signed.',
      receipt: await jws(v2, keys.active),
      ...base,
      files: [fileInputs[0], { name: 'pixel.png', content_base64: b64('not the picture') }],
      expected: { valid: false, failure: 'attachments' },
    },
    {
      name: 'v2-attachment-missing',
      description: 'A valid version-2 receipt, but a signed attachment is not among the files given.',
      receipt: await jws(v2, keys.active),
      ...base,
      files: [fileInputs[0]],
      expected: { valid: false, failure: 'attachments' },
    },
    {
      name: 'v2-attachment-not-signed',
      description: 'A valid version-2 receipt, but a file given is one the receipt does not sign.',
      receipt: await jws(v2, keys.active),
      ...base,
      files: [...fileInputs, { name: 'extra.txt', content_base64: b64('slipped in later') }],
      expected: { valid: false, failure: 'attachments' },
    },
  ];

  const previous = existsSync(OUT) ? (JSON.parse(readFileSync(OUT, 'utf8')) as ApprovalVectorContext['previous']) : undefined;
  const approvals = await approvalVectors({
    v2,
    otherTaskId: OTHER_TASK_ID,
    issue: (payload) => jws(payload, keys.active),
    base,
    ...(process.argv.includes('--new-keys') ? {} : { previous }),
  });
  receipts.push(...approvals.receipts);

  const task = { task_id: TASK_ID, status: 'delivered', operator_notes: NOTES, deliverable_sha256: v1.deliverable_sha256, updated_at: timeline.delivered_at };
  const body = JSON.stringify({ type: 'task.delivered', timestamp: '2026-11-18T01:46:40.000Z', data: task });
  const id = 'evt-2026-00112233445566778899aabbccddeeff';
  const hook = (sig: string, overrides: { timestamp?: number; body?: string } = {}) => ({
    headers: { 'webhook-id': id, 'webhook-timestamp': String(overrides.timestamp ?? NOW), 'webhook-signature': sig },
    body: overrides.body ?? body,
  });
  const good = webhookSignature(keys.active, id, NOW, body);
  const webhooks = [
    { name: 'valid', description: 'Signed by the active key.', ...hook(good), expected: { valid: true, failure: null } },
    {
      name: 'valid-retired-key',
      description: 'Signed by a retired key still published.',
      ...hook(webhookSignature(keys.retired, id, NOW, body)),
      expected: { valid: true, failure: null },
    },
    {
      name: 'valid-among-several',
      description: 'Several space-separated signatures; one verifies.',
      ...hook(`v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4= ${webhookSignature(keys.unpublished, id, NOW, body)} ${good}`),
      expected: { valid: true, failure: null },
    },
    {
      name: 'tampered-body',
      description: 'The body was changed after signing.',
      ...hook(good, { body: body.replace('8:00-12:00', '9:00-12:00') }),
      expected: { valid: false, failure: 'signature' },
    },
    {
      name: 'wrong-key',
      description: 'Signed by a key that is not published.',
      ...hook(webhookSignature(keys.unpublished, id, NOW, body)),
      expected: { valid: false, failure: 'signature' },
    },
    {
      name: 'symmetric-only',
      description: 'Only a symmetric v1 (HMAC) signature, which this service never sends.',
      ...hook('v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4='),
      expected: { valid: false, failure: 'signature' },
    },
    {
      name: 'stale-timestamp',
      description: 'Validly signed, but the timestamp is more than the tolerance away from now (a replay).',
      ...hook(webhookSignature(keys.active, id, NOW - 3600, body), { timestamp: NOW - 3600 }),
      expected: { valid: false, failure: 'timestamp' },
    },
  ];

  // The one issuer rule, as pairs: every verifier's sameIssuer(iss, expected) must give `same`.
  const issuer_cases = [
    { iss: ISSUER, expected_issuer: ISSUER, same: true },
    { iss: ISSUER, expected_issuer: `${ISSUER}/`, same: true },
    { iss: ISSUER, expected_issuer: 'HTTPS://Tasks.Example.org', same: true },
    { iss: ISSUER, expected_issuer: 'https://tasks.example.org:443', same: true },
    { iss: ISSUER, expected_issuer: 'http://tasks.example.org', same: false },
    { iss: ISSUER, expected_issuer: 'https://tasks.example.org:8443', same: false },
    { iss: ISSUER, expected_issuer: 'https://impostor.example.com', same: false },
    { iss: ISSUER, expected_issuer: 'https://tasks.example.org.evil.example', same: false },
    { iss: 'https://example.org/tasks', expected_issuer: 'https://example.org/tasks/', same: true },
    { iss: 'https://example.org/tasks', expected_issuer: 'https://example.org', same: false },
    { iss: 'http://localhost:8080', expected_issuer: 'http://127.0.0.1:8080', same: true },
    { iss: 'http://localhost:8080', expected_issuer: 'http://[::1]:8080', same: true },
    { iss: 'http://127.0.0.1:8080', expected_issuer: 'http://127.8.9.10:8080', same: true },
    { iss: 'http://localhost:8080', expected_issuer: 'http://127.0.0.1:9090', same: false },
    { iss: 'http://localhost:8080', expected_issuer: 'https://localhost:8080', same: false },
    { iss: 'http://localhost:8080', expected_issuer: 'http://localhost.evil.example:8080', same: false },
    { iss: 'http://localhost', expected_issuer: 'http://127.0.0.1:80', same: true },
    { iss: 'not a url', expected_issuer: 'not a url', same: true },
    { iss: 'not a url', expected_issuer: ISSUER, same: false },
  ];

  const vectors = {
    description:
      'Test vectors for verifiers of this service\'s receipts (compact JWS, EdDSA/Ed25519, with the passkey-signed approvals of receipt_version 3) and webhooks (Standard Webhooks, asymmetric "v1a"). Generated by scripts/make-test-vectors.ts.',
    how_to_use: [
      'Receipts: verify `receipt` against `jwks`; the issuer must be `expected_issuer`, `sub`/`task_id` must be `expected_task_id`, SHA-256 of the UTF-8 `operator_notes` must be `deliverable_sha256`, and when `files` are given (base64 content; matched by content, names are informative) every signed attachment must be among them (same SHA-256 and size) and every file given must be signed.',
      'Webhooks: verify `webhook-signature` (space-separated `v1a,<base64 Ed25519 signature>` entries; other versions ignored) over "<webhook-id>.<webhook-timestamp>.<body>" with any key of `jwks`, and refuse a timestamp more than `webhook_tolerance_seconds` away from `now`.',
      'Issuer rule: `iss` matches the expected issuer when both are the same origin and path: scheme and port equal (default ports filled in), paths equal without trailing slashes, hosts equal ignoring case, and any two loopback hosts (localhost, 127.0.0.0/8, [::1]) count as one host. Strings that are not URLs must be equal. `issuer_cases` lists pairs with the answer.',
      'Approvals (receipt_version 3): check each entry of the payload\'s `approvals` against `operator_keys` (docs/receipt-log.md, "Approvals"). An attestation null is "unsigned (key sign-in)", not a failure. Otherwise, in this order, the first rule broken is its `problem`: format (three base64url fields, client_data_json a JSON object, authenticator_data at least 37 bytes; key_id and `at` present); key (an operator key with that key_id, since <= at < until or until null, whose jwk has that RFC 7638 thumbprint); type (client_data_json type "webauthn.get"); challenge (client_data_json challenge = base64url of SHA-256 of the RFC 8785 JSON {task_id, request_sha256, deliverable_sha256} of the receipt); user_present (flag 0x01 of authenticator_data byte 32); signature (over authenticator_data || SHA-256(client_data_json) with the jwk: ES256 as DER, EdDSA, RS256 unless the jwk names another alg). `expected.approvals` lists each entry\'s status (signed, unsigned, invalid) and problem.',
      '`expected.failure` names the first check that fails: format, kid, signature, issuer, task_id, deliverable, attachments, approvals (receipts); signature, timestamp (webhooks).',
    ],
    warning: 'TEST KEYS ONLY. The private keys below were generated for these vectors and are public; they sign nothing real. Never trust them.',
    issuer: ISSUER,
    now: NOW,
    webhook_tolerance_seconds: 300,
    jwks,
    test_private_keys: keys,
    operator_keys: approvals.operator_keys,
    test_passkeys: approvals.test_passkeys,
    webauthn: approvals.webauthn,
    issuer_cases,
    receipts,
    webhooks,
  };
  writeFileSync(OUT, `${JSON.stringify(vectors, null, 2)}\n`);
  process.stdout.write(`Wrote ${OUT}: ${receipts.length} receipt and ${webhooks.length} webhook cases.\n`);
}

await main();
