import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { JSONWebKeySet, OperatorKeySet } from '../src/index.js';
import { sameIssuer, verifyReceipt, verifyWebhook } from '../src/index.js';

/** The client's verifiers reach every verdict of docs/receipt-test-vectors.json. */

interface Vectors {
  jwks: JSONWebKeySet;
  operator_keys: OperatorKeySet;
  now: number;
  webhook_tolerance_seconds: number;
  receipts: {
    name: string;
    receipt: string;
    expected_issuer: string;
    expected_task_id: string;
    operator_notes: string;
    files?: { name: string; content_base64: string }[];
    expected: { valid: boolean; failure: string | null; approvals?: { status: string; problem: string | null }[] };
  }[];
  issuer_cases: { iss: string; expected_issuer: string; same: boolean }[];
  webhooks: { name: string; headers: Record<string, string>; body: string; expected: { valid: boolean; failure: string | null } }[];
}

const VECTORS_PATH = fileURLToPath(new URL('../../../docs/receipt-test-vectors.json', import.meta.url));
const vectors = JSON.parse(readFileSync(VECTORS_PATH, 'utf8')) as Vectors;

describe('the one issuer rule (issuer_cases)', () => {
  for (const c of vectors.issuer_cases) {
    it(`${c.iss} ${c.same ? 'is' : 'is not'} ${c.expected_issuer}`, () => {
      expect(sameIssuer(c.iss, c.expected_issuer)).toBe(c.same);
    });
  }
});

describe('receipt vectors', () => {
  for (const v of vectors.receipts) {
    it(`${v.name}: ${v.expected.valid ? 'valid' : `invalid (${String(v.expected.failure)})`}`, async () => {
      const verdict = await verifyReceipt(v.receipt, {
        jwks: vectors.jwks,
        issuer: v.expected_issuer,
        taskId: v.expected_task_id,
        operatorNotes: v.operator_notes,
        operatorKeys: vectors.operator_keys,
        ...(v.files ? { files: v.files.map((f) => ({ name: f.name, data: Buffer.from(f.content_base64, 'base64') })) } : {}),
      });
      expect(verdict.valid).toBe(v.expected.valid);
      expect(verdict.failure).toBe(v.expected.failure);
      expect(verdict.approvals.map((a) => ({ status: a.status, problem: a.problem }))).toEqual(v.expected.approvals ?? []);
    });
  }

  it('without the issuer, the wrong-issuer receipt still verifies its signature (the issuer check is what catches it)', async () => {
    const v = vectors.receipts.find((r) => r.name === 'v1-wrong-issuer');
    const verdict = await verifyReceipt(String(v?.receipt), { jwks: vectors.jwks });
    expect(verdict.valid).toBe(true);
    expect(verdict.payload?.iss).toBe('https://impostor.example.com');
  });
});

describe('webhook vectors', () => {
  for (const v of vectors.webhooks) {
    it(`${v.name}: ${v.expected.valid ? 'valid' : `invalid (${String(v.expected.failure)})`}`, async () => {
      const verdict = await verifyWebhook(
        { headers: v.headers, body: v.body },
        { jwks: vectors.jwks, now: vectors.now, toleranceSeconds: vectors.webhook_tolerance_seconds },
      );
      expect(verdict.valid).toBe(v.expected.valid);
      expect(verdict.failure).toBe(v.expected.failure);
      if (verdict.valid) expect(verdict.event?.type).toBe('task.delivered');
    });
  }

  it('accepts a Headers object and a byte body', async () => {
    const v = vectors.webhooks.find((w) => w.name === 'valid');
    const verdict = await verifyWebhook(
      { headers: new Headers(v?.headers), body: new TextEncoder().encode(String(v?.body)) },
      { jwks: vectors.jwks, now: vectors.now },
    );
    expect(verdict.valid).toBe(true);
  });

  it('refuses a request without the Standard Webhooks headers', async () => {
    const verdict = await verifyWebhook({ headers: {}, body: '{}' }, { jwks: vectors.jwks, now: vectors.now });
    expect(verdict).toMatchObject({ valid: false, failure: 'format' });
  });
});

describe('the built library', () => {
  it('loads as plain ESM without tsx (node, no loader) and reaches the same verdicts', async () => {
    const root = fileURLToPath(new URL('..', import.meta.url));
    await run(process.execPath, [`${root}scripts/build.mjs`]);
    const built = readFileSync(`${root}dist/index.js`, 'utf8');
    // Platform-neutral: nothing Node-only, nothing of the server's runtime.
    expect(built).not.toMatch(/from ["']node:/);
    expect(built).not.toMatch(/better-sqlite3|fastify|kysely/);
    const script = `
      import { verifyReceipt } from ${JSON.stringify(`${root}dist/index.js`)};
      import { readFileSync } from 'node:fs';
      const v = JSON.parse(readFileSync(${JSON.stringify(VECTORS_PATH)}, 'utf8'));
      const out = [];
      for (const r of v.receipts) {
        const files = r.files?.map((f) => ({ name: f.name, data: Buffer.from(f.content_base64, 'base64') }));
        const verdict = await verifyReceipt(r.receipt, { jwks: v.jwks, operatorKeys: v.operator_keys, issuer: r.expected_issuer, taskId: r.expected_task_id, operatorNotes: r.operator_notes, ...(files ? { files } : {}) });
        out.push(verdict.failure === r.expected.failure);
      }
      process.stdout.write(JSON.stringify(out));`;
    const stdout = await run(process.execPath, ['--input-type=module', '-e', script]);
    const results = JSON.parse(stdout) as boolean[];
    expect(results).toHaveLength(vectors.receipts.length);
    expect(results.every(Boolean)).toBe(true);
  });
});

function run(command: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(command, args, { timeout: 60_000 }, (error, stdout, stderr) => (error ? reject(new Error(`${String(error)}\n${stderr}`)) : resolve(stdout)));
  });
}
