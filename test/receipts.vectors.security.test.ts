import { readFileSync } from 'node:fs';
import type { JSONWebKeySet } from 'jose';
import { describe, expect, it } from 'vitest';
import type { OperatorKeySet } from '../src/receipts/approval-verify.js';
import { sameIssuer } from '../src/receipts/issuer.js';
import { type VerifyOptions, verifyReceipt } from '../src/receipts/verify.js';

/**
 * The server's own verifier must reach every verdict of docs/receipt-test-vectors.json, the file
 * both clients and any third-party verifier are tested against.
 */

interface ReceiptVector {
  name: string;
  receipt: string;
  expected_issuer: string;
  expected_task_id: string;
  operator_notes: string;
  files?: { name: string; content_base64: string }[];
  expected: { valid: boolean; failure: string | null; approvals?: { status: string; problem: string | null }[] };
}

const vectors = JSON.parse(readFileSync(new URL('../docs/receipt-test-vectors.json', import.meta.url), 'utf8')) as {
  jwks: JSONWebKeySet;
  operator_keys: OperatorKeySet;
  receipts: ReceiptVector[];
  issuer_cases: { iss: string; expected_issuer: string; same: boolean }[];
};

describe('the one issuer rule (issuer_cases) in src/receipts/issuer.ts', () => {
  it('the vectors pin the host-mismatch case: localhost and 127.0.0.1 at one port are one issuer', () => {
    expect(vectors.issuer_cases).toContainEqual({ iss: 'http://localhost:8080', expected_issuer: 'http://127.0.0.1:8080', same: true });
    expect(vectors.receipts.find((v) => v.name === 'v1-loopback-alias')?.expected.valid).toBe(true);
  });
  for (const c of vectors.issuer_cases) {
    it(`${c.iss} ${c.same ? 'is' : 'is not'} ${c.expected_issuer}`, () => {
      expect(sameIssuer(c.iss, c.expected_issuer)).toBe(c.same);
    });
  }
});

describe('receipt test vectors against src/receipts/verify.ts', () => {
  it('covers every verdict the issue names', () => {
    const failures = new Set(vectors.receipts.map((v) => v.expected.failure));
    for (const failure of [null, 'signature', 'kid', 'issuer', 'deliverable', 'attachments', 'approvals']) expect(failures).toContain(failure);
    const problems = new Set(vectors.receipts.flatMap((v) => (v.expected.approvals ?? []).map((a) => a.problem ?? a.status)));
    for (const problem of ['signed', 'unsigned', 'format', 'key', 'type', 'challenge', 'user_present', 'signature']) expect(problems).toContain(problem);
    expect(vectors.receipts.some((v) => v.name.includes('retired') && v.expected.valid)).toBe(true);
    expect(vectors.receipts.some((v) => v.name.startsWith('v2') && v.expected.valid)).toBe(true);
  });

  for (const vector of vectors.receipts) {
    it(`${vector.name}: ${vector.expected.valid ? 'valid' : `invalid (${String(vector.expected.failure)})`}`, async () => {
      const options: VerifyOptions = {
        jwks: vectors.jwks,
        expectedIssuer: vector.expected_issuer,
        expectedTaskId: vector.expected_task_id,
        operatorNotes: vector.operator_notes,
        operatorKeys: vectors.operator_keys,
      };
      if (vector.files) options.files = vector.files.map((f) => ({ name: f.name, data: Buffer.from(f.content_base64, 'base64') }));
      const verdict = await verifyReceipt(vector.receipt, options);
      expect(verdict.valid).toBe(vector.expected.valid);
      const firstFailure = verdict.checks.find((c) => !c.ok)?.name ?? null;
      expect(firstFailure).toBe(vector.expected.failure);
      expect(verdict.approvals.map((a) => ({ status: a.status, problem: a.problem }))).toEqual(vector.expected.approvals ?? []);
    });
  }
});
