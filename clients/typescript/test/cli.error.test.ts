import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { taskIn } from '../../../test/operator.support.js';
import { useTestApp, validTask } from '../../../test/support/app.js';
import { freePort } from '../../../test/support/net.js';
import { htask } from './cli.support.js';

/** htask's exit codes: 1 refused or failed, 2 usage, 3 wait timed out, 4 receipt invalid. */

describe('htask refusals and failures', () => {
  // Two submissions an hour: both made here, so the third (by htask) is refused.
  const t = useTestApp({ limits: 'production', env: { TASK_LIMIT_PER_HOUR: '2' } });
  let delivered: string;
  let accepted: string;
  beforeAll(async () => {
    delivered = await taskIn(t, 'delivered');
    accepted = await taskIn(t, 'accepted');
  });

  it('a tampered receipt exits 4', async () => {
    const task = (await (await fetch(`${t.url}/api/v1/tasks/${delivered}`)).json()) as { receipt: string };
    const [h, p, s] = task.receipt.split('.');
    const payload = JSON.parse(Buffer.from(String(p), 'base64url').toString()) as Record<string, unknown>;
    const forged = `${h}.${Buffer.from(JSON.stringify({ ...payload, task_type: 'data_collection' })).toString('base64url')}.${s}`;
    const result = await htask(['verify', forged, '--issuer', t.config.baseUrl], { baseUrl: t.url });
    expect(result.code).toBe(4);
    expect(result.stdout).toMatch(/✗ signature/);
    expect(result.stdout).toContain('INVALID (signature)');
    const json = await htask(['--json', 'verify', forged, '--issuer', t.config.baseUrl], { baseUrl: t.url });
    expect(json.code).toBe(4);
    expect(JSON.parse(json.stdout)).toMatchObject({ valid: false, failure: 'signature' });
  });

  it('a 429 prints the error body and when to retry, and exits 1', async () => {
    const result = await htask(['submit', '-'], { baseUrl: t.url, input: JSON.stringify(validTask()) });
    expect(result.code).toBe(1);
    const [bodyLine, retryLine] = result.stderr.trim().split('\n');
    expect(JSON.parse(String(bodyLine))).toMatchObject({ error: 'rate_limited', limit: expect.any(String), retry_after_seconds: expect.any(Number) });
    expect(retryLine).toMatch(/^Retry after \d+ s \(at \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\)\.$/);
    const json = await htask(['--json', 'submit', '-'], { baseUrl: t.url, input: JSON.stringify(validTask()) });
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout)).toMatchObject({ error: 'rate_limited' });
  });

  it('wait exits 3 when it times out', async () => {
    const result = await htask(['wait', accepted, '--timeout', '2'], { baseUrl: t.url });
    expect(result.code).toBe(3);
    expect(result.stderr).toMatch(new RegExp(`Task ${accepted} is still accepted after \\d+ s`));
  }, 60_000);

  it('an unknown task exits 1 with the contract error body', async () => {
    const result = await htask(['status', 'task-2030-00000000000000000000000000000000'], { baseUrl: t.url });
    expect(result.code).toBe(1);
    expect(JSON.parse(result.stderr.trim())).toMatchObject({ error: 'task_not_found' });
  });

  it('an unreachable service exits 1', async () => {
    const result = await htask(['status', 'task-2030-00000000000000000000000000000000'], { baseUrl: `http://127.0.0.1:${await freePort()}` });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('network_error');
  });

  it.each([
    [[], 'no command given'],
    [['launch'], 'unknown command launch'],
    [['status'], 'status takes one argument'],
    [['wait', 'task-2030-00000000000000000000000000000000', '--files', 'x'], 'wait does not take --files'],
    [['wait', 'task-2030-00000000000000000000000000000000', '--timeout', 'soon'], '--timeout takes seconds'],
    [['submit'], 'submit needs a JSON file'],
    [['message', '--message', 'hi'], 'message needs --message and --reply-to'],
    [['--colour'], "Unknown option '--colour'"],
  ])('usage error %j exits 2', async (args, text) => {
    const result = await htask(args, { baseUrl: t.url });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(text);
    expect(result.stderr).toContain('Usage: htask');
  });
});

describe('htask verify offline against the test vectors', () => {
  const vectorsPath = fileURLToPath(new URL('../../../docs/receipt-test-vectors.json', import.meta.url));
  const vectors = JSON.parse(readFileSync(vectorsPath, 'utf8')) as {
    issuer: string;
    jwks: unknown;
    receipts: { name: string; receipt: string; files?: { name: string; content_base64: string }[] }[];
  };
  const dir = mkdtempSync(path.join(tmpdir(), 'htask-vectors-'));
  const jwksFile = path.join(dir, 'jwks.json');
  writeFileSync(jwksFile, JSON.stringify(vectors.jwks));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const v2 = vectors.receipts.find((r) => r.name === 'v2-valid-with-attachments');

  it('a version-2 receipt with its files exits 0; with a changed file exits 4', async () => {
    const files = path.join(dir, 'files');
    mkdirSync(files);
    for (const f of v2?.files ?? []) writeFileSync(path.join(files, f.name), Buffer.from(f.content_base64, 'base64'));
    const args = [
      'verify',
      String(v2?.receipt),
      '--jwks-file',
      jwksFile,
      '--issuer',
      vectors.issuer,
      '--files',
      files,
      '--base-url',
      `http://127.0.0.1:${await freePort()}`,
    ];
    const ok = await htask(args);
    expect(ok.stdout).toContain('✓ attachments');
    expect(ok.code).toBe(0);
    writeFileSync(path.join(files, 'door-sign.txt'), 'Sun closed');
    const changed = await htask(args);
    expect(changed.code).toBe(4);
    expect(changed.stdout).toMatch(/✗ attachments +door-sign.txt \(sha256 [0-9a-f]{64}\) is missing or altered/);
    expect(changed.stdout).toContain('INVALID (attachments)');
  });

  it('a receipt from another issuer exits 4', async () => {
    const wrong = vectors.receipts.find((r) => r.name === 'v1-wrong-issuer');
    const result = await htask(['verify', String(wrong?.receipt), '--jwks-file', jwksFile, '--issuer', vectors.issuer]);
    expect(result.code).toBe(4);
    expect(result.stdout).toContain('INVALID (issuer)');
  });
});
