import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { CompactSign, decodeJwt, importJWK, type JSONWebKeySet, type JWK } from 'jose';
import { describe, expect, it } from 'vitest';
import type { OperatorKeySet } from '../src/receipts/approval-verify.js';
import { verifyReceipt } from '../src/receipts/verify.js';
import { runCli } from './receipts.support.js';

/**
 * The approvals of a version-3 receipt, checked offline, where the shared vectors
 * (test/receipts.vectors.security.test.ts) do not reach: no operator keys given, approvals that are
 * not a list, an attestation without a key_id, and `npm run verify-receipt` naming the approval and
 * the rule it breaks, with the operator keys from a file.
 */

const vectors = JSON.parse(readFileSync(new URL('../docs/receipt-test-vectors.json', import.meta.url), 'utf8')) as {
  jwks: JSONWebKeySet;
  operator_keys: OperatorKeySet;
  test_private_keys: { active: JWK };
  receipts: { name: string; receipt: string; expected_issuer: string; operator_notes: string }[];
};
const vector = (name: string) => {
  const found = vectors.receipts.find((v) => v.name === name);
  if (!found) throw new Error(`no vector ${name}`);
  return found;
};

async function reissue(receipt: string, change: (payload: Record<string, unknown>) => void): Promise<string> {
  const payload = decodeJwt(receipt) as Record<string, unknown>;
  change(payload);
  const key = await importJWK(vectors.test_private_keys.active, 'EdDSA');
  return new CompactSign(new TextEncoder().encode(JSON.stringify(payload)))
    .setProtectedHeader({ alg: 'EdDSA', kid: String(vectors.test_private_keys.active.kid), typ: 'JWT' })
    .sign(key);
}

describe('approvals: what the vectors cannot say', () => {
  it('without operator keys, an attested approval fails (key) and an unsigned one still passes', async () => {
    const verdict = await verifyReceipt(vector('v3-valid-approvals').receipt, { jwks: vectors.jwks });
    expect(verdict.valid).toBe(false);
    expect(verdict.checks.find((c) => !c.ok)?.name).toBe('approvals');
    expect(verdict.approvals.map((a) => a.problem ?? a.status)).toEqual(['key', 'key', 'key', 'unsigned']);
    expect(verdict.approvals[0]?.detail).toContain('no operator keys given');
  });

  it('a version-3 receipt whose approvals are not a list, or empty, is a payload problem', async () => {
    for (const approvals of ['yes', [], null]) {
      const receipt = await reissue(vector('v3-valid-approvals').receipt, (p) => {
        p.approvals = approvals;
      });
      const verdict = await verifyReceipt(receipt, { jwks: vectors.jwks, operatorKeys: vectors.operator_keys });
      expect(verdict.valid).toBe(false);
      expect(verdict.checks.find((c) => !c.ok)).toMatchObject({ name: 'payload', detail: expect.stringContaining('approvals') });
    }
  });

  it('an attestation without a key_id, an entry that is not an object, and a bad date are format problems', async () => {
    const receipt = await reissue(vector('v3-valid-approvals').receipt, (p) => {
      const list = p.approvals as Record<string, unknown>[];
      p.approvals = [{ ...list[0], key_id: null }, 'approved', { ...list[1], at: 'yesterday' }, list[3]];
    });
    const verdict = await verifyReceipt(receipt, { jwks: vectors.jwks, operatorKeys: vectors.operator_keys });
    expect(verdict.approvals.map((a) => a.problem ?? a.status)).toEqual(['format', 'format', 'format', 'unsigned']);
    expect(verdict.approvals[0]?.detail).toBe('approvals[0]: an attestation without a key_id');
  });

  it('an operator-keys set that is not a list of keys refuses every attested approval by name', async () => {
    const verdict = await verifyReceipt(vector('v3-valid-approvals').receipt, {
      jwks: vectors.jwks,
      operatorKeys: { keys: 'none' } as unknown as OperatorKeySet,
    });
    expect(verdict.approvals[0]?.detail).toMatch(/^approvals\[0\] \(key [\w-]+\): key_id is not in the operator keys$/);
  });
});

describe('npm run verify-receipt with --operator-keys', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'approvals-cli-'));
  writeFileSync(path.join(dir, 'jwks.json'), JSON.stringify(vectors.jwks));
  writeFileSync(path.join(dir, 'operator-keys.json'), JSON.stringify(vectors.operator_keys));
  writeFileSync(path.join(dir, 'notes.txt'), vector('v3-valid-approvals').operator_notes);
  const offline = (receipt: string, keys = path.join(dir, 'operator-keys.json')) =>
    runCli('verify-receipt', [
      receipt,
      '--jwks-file',
      path.join(dir, 'jwks.json'),
      '--operator-keys',
      keys,
      '--notes-file',
      path.join(dir, 'notes.txt'),
      '--base-url',
      'http://127.0.0.1:9',
      '--issuer',
      'https://tasks.example.org',
    ]);

  it('names the approval whose signature byte was flipped, and says INVALID', async () => {
    const result = await offline(vector('v3-second-approval-tampered').receipt);
    expect(result.stdout).toMatch(/✗ approvals +approvals\[1\] \(key [\w-]+\): signature does not verify/);
    expect(result.stdout).toMatch(/approvals\[0\] \(key [\w-]+\): signed, user present and verified/);
    expect(result.stdout).toContain('INVALID');
    expect(result.code).toBe(1);
  }, 60_000);

  it('names the retired key with its period, and reports the unsigned approval as such', async () => {
    const retired = await offline(vector('v3-key-retired').receipt);
    expect(retired.stdout).toContain('but the key was valid from 2026-01-05T10:00:00.000Z until 2026-11-01T00:00:00.000Z');
    expect(retired.code).toBe(1);
    const valid = await offline(vector('v3-valid-approvals').receipt);
    expect(valid.stdout).toContain('approvals[3]: unsigned (key sign-in)');
    expect(valid.stdout).toContain('VALID: signed by');
    expect(valid.code).toBe(0);
  }, 60_000);

  it('refuses to verify when the operator keys cannot be read, naming the file', async () => {
    const result = await offline(vector('v3-valid-approvals').receipt, path.join(dir, 'missing.json'));
    expect(result.stdout).toContain(`Cannot verify the approvals: cannot read --operator-keys ${path.join(dir, 'missing.json')}`);
    expect(result.code).toBe(1);
  }, 60_000);
});
