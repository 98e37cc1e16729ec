import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { checkTimestamp, parsePemCertificates } from '../../../src/receipts/tsa.js';
import { checkCheckpointTimestamp } from '../src/tsa.js';

/**
 * The client's RFC 3161 check reaches every verdict of docs/tsa-test-vectors.json (tokens from a
 * real `openssl ts -reply`, and changed copies), and agrees with two independent checkers on
 * each: the service's own pkijs verifier and `openssl ts -verify`.
 */

interface Vectors {
  data: string;
  certificates: Record<string, string>;
  cases: { name: string; token: string; trusted: string | null; expected: { valid: boolean; chained?: boolean; error?: string } }[];
}

const vectors = JSON.parse(readFileSync(fileURLToPath(new URL('../../../docs/tsa-test-vectors.json', import.meta.url)), 'utf8')) as Vectors;
const dir = mkdtempSync(path.join(tmpdir(), 'tsa-vectors-test-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function clientVerdict(c: Vectors['cases'][number]) {
  const trusted = c.trusted === null ? undefined : vectors.certificates[c.trusted];
  try {
    const t = await checkCheckpointTimestamp(c.token, vectors.data, trusted);
    return { valid: true, chained: t.chained, genTime: t.genTime, error: '' };
  } catch (error) {
    return { valid: false, chained: false, genTime: '', error: (error as Error).message };
  }
}

describe('RFC 3161 token vectors (TypeScript client)', () => {
  it.each(vectors.cases.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    const verdict = await clientVerdict(c);
    expect(verdict.valid, verdict.error).toBe(c.expected.valid);
    if (c.expected.chained !== undefined) expect(verdict.chained).toBe(c.expected.chained);
    if (c.expected.error !== undefined) expect(verdict.error).toContain(c.expected.error);
    if (verdict.valid) expect(verdict.genTime).toMatch(/^\d{14}(\.\d+)?Z$/);
  });

  it.each(vectors.cases.map((c) => [c.name, c] as const))('%s: the service (pkijs) and openssl ts -verify agree', async (_name, c) => {
    const token = Buffer.from(c.token, 'base64');
    const trusted = c.trusted === null ? [] : parsePemCertificates(vectors.certificates[c.trusted] as string);
    const pkijsOk = await checkTimestamp(token, Buffer.from(vectors.data), trusted).then(
      () => true,
      () => false,
    );
    // pkijs builds chains only up to a CA: the TSA's own certificate as the trusted one is openssl's (-partial_chain) to judge.
    if (c.trusted !== 'rsa') expect(pkijsOk).toBe(c.expected.valid);
    // openssl always wants a chain, and `openssl ts` verifies with PKCS#7, which has no RSA-PSS.
    if (c.trusted === null || c.name.includes('pss')) return;
    writeFileSync(path.join(dir, 'r.tsr'), token);
    writeFileSync(path.join(dir, 'data'), vectors.data);
    writeFileSync(path.join(dir, 'ca.pem'), vectors.certificates[c.trusted] as string);
    let opensslOk = true;
    try {
      execFileSync('/usr/bin/openssl', ['ts', '-verify', '-in', 'r.tsr', '-data', 'data', '-CAfile', 'ca.pem', '-partial_chain'], {
        cwd: dir,
        stdio: 'ignore',
      });
    } catch {
      opensslOk = false;
    }
    expect(opensslOk).toBe(c.expected.valid);
  });
});
