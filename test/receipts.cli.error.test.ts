import { generateKeyPair, SignJWT } from 'jose';
import { describe, expect, it } from 'vitest';
import { runCli } from './receipts.support.js';
import { useTestApp } from './support/app.js';

/**
 * `npm run verify-receipt` for a newcomer (issue 14): with no --base-url it uses BASE_URL or PORT
 * from the environment, or the receipt's own iss, and when it cannot reach the service it names
 * the URL it tried.
 */

async function receiptFrom(iss: string): Promise<string> {
  const { privateKey } = await generateKeyPair('EdDSA', { crv: 'Ed25519' });
  return new SignJWT({ receipt_version: 1, task_id: `task-2030-${'a'.repeat(32)}` })
    .setProtectedHeader({ alg: 'EdDSA', kid: 'k1', typ: 'JWT' })
    .setIssuer(iss)
    .setSubject(`task-2030-${'a'.repeat(32)}`)
    .setIssuedAt()
    .sign(privateKey);
}

describe('verify-receipt without configuration', () => {
  const t = useTestApp();

  it('checks a receipt against its own iss when neither --base-url nor BASE_URL is given', async () => {
    const result = await runCli('verify-receipt', [await receiptFrom(t.url)]);
    expect(result.stdout).toContain(`checked against ${t.url}`);
    // Signed with a key the service never published: reached the service, and refused.
    expect(result.stdout).toContain('INVALID');
    expect(result.code).toBe(1);
  }, 60_000);

  it('names the URL it failed to reach (the receipt issuer)', async () => {
    const result = await runCli('verify-receipt', [await receiptFrom('http://127.0.0.1:9')]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('could not reach http://127.0.0.1:9/');
  }, 60_000);

  it('uses PORT for a task id and names the URL it failed to reach', async () => {
    const id = `task-2030-${'b'.repeat(32)}`;
    const result = await runCli('verify-receipt', [id], { PORT: '9' });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`could not reach http://localhost:9/api/v1/tasks/${id}`);
  }, 60_000);

  it('BASE_URL wins over the receipt issuer', async () => {
    const result = await runCli('verify-receipt', [await receiptFrom('http://127.0.0.1:9')], { BASE_URL: t.url });
    expect(result.stdout).toContain(`checked against ${t.url}`);
  }, 60_000);
});
