import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { htask } from './cli.support.js';

/**
 * `htask webhook verify` (issue 30, item 5): a received webhook checked from the shell, headers
 * from a file ("name: value" lines or JSON) or flags, the raw body from a file or stdin. Signed
 * webhooks come from docs/receipt-test-vectors.json (fixed timestamps, so --tolerance is wide).
 */

interface WebhookVector {
  name: string;
  headers: Record<string, string>;
  body: string;
  expected: { valid: boolean; failure: string | null };
}

const vectors = JSON.parse(readFileSync(fileURLToPath(new URL('../../../docs/receipt-test-vectors.json', import.meta.url)), 'utf8')) as {
  jwks: unknown;
  webhooks: WebhookVector[];
};
const dir = mkdtempSync(path.join(tmpdir(), 'htask-webhook-'));
const jwksFile = path.join(dir, 'jwks.json');
writeFileSync(jwksFile, JSON.stringify(vectors.jwks));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const vector = (name: string) => vectors.webhooks.find((v) => v.name === name) as WebhookVector;
/** The vectors were signed at a fixed time: a tolerance of years keeps the freshness check out of the way. */
const WIDE = ['--tolerance', '1000000000'];

describe('htask webhook verify', () => {
  it('says VALID for a signed webhook (headers as a saved request, body from a file) and names the event', async () => {
    const v = vector('valid');
    const headersFile = path.join(dir, 'headers.txt');
    writeFileSync(
      headersFile,
      `POST /hooks HTTP/1.1\n${Object.entries(v.headers)
        .map(([k, value]) => `${k}: ${value}`)
        .join('\n')}\n`,
    );
    const bodyFile = path.join(dir, 'body.json');
    writeFileSync(bodyFile, v.body);
    const result = await htask(['webhook', 'verify', '--headers-file', headersFile, '--body-file', bodyFile, '--jwks-file', jwksFile, ...WIDE]);
    expect(result.stdout).toContain('VALID: signed by a key of');
    expect(result.stdout).toContain('event       task.delivered');
    expect(result.code).toBe(0);
  });

  it('takes headers as JSON or flags and the body on stdin; a tampered body is INVALID with exit 4', async () => {
    const v = vector('valid');
    const headersFile = path.join(dir, 'headers.json');
    writeFileSync(headersFile, JSON.stringify(v.headers));
    const fromJson = await htask(['webhook', 'verify', '--headers-file', headersFile, '--jwks-file', jwksFile, ...WIDE], { input: v.body });
    expect(fromJson.code).toBe(0);
    const flags = ['--id', v.headers['webhook-id'], '--timestamp', v.headers['webhook-timestamp'], '--signature', v.headers['webhook-signature']] as string[];
    const tampered = await htask(['webhook', 'verify', ...flags, '--jwks-file', jwksFile, ...WIDE], { input: v.body.replace('8:00', '9:00') });
    expect(tampered.stdout).toContain('INVALID (signature)');
    expect(tampered.code).toBe(4);
    const json = await htask(['--json', 'webhook', 'verify', ...flags, '--jwks-file', jwksFile, ...WIDE], { input: v.body });
    expect(JSON.parse(json.stdout)).toMatchObject({ valid: true, failure: null });
  });

  it('refuses a stale timestamp with the default tolerance (a replay) with exit 4', async () => {
    const v = vector('valid');
    const headersFile = path.join(dir, 'stale.json');
    writeFileSync(headersFile, JSON.stringify(v.headers));
    const result = await htask(['webhook', 'verify', '--headers-file', headersFile, '--jwks-file', jwksFile], { input: v.body });
    expect(result.stdout).toContain('INVALID (timestamp)');
    expect(result.code).toBe(4);
  });

  it('is a usage error (exit 2) without the three headers or with another subcommand', async () => {
    const missing = await htask(['webhook', 'verify', '--id', 'evt-1', '--jwks-file', jwksFile], { input: '{}' });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('webhook-id, webhook-timestamp and webhook-signature');
    const other = await htask(['webhook', 'sign'], { input: '{}' });
    expect(other.code).toBe(2);
  });

  it('names the URL it could not reach for the keys', async () => {
    const v = vector('valid');
    const headersFile = path.join(dir, 'unreachable.json');
    writeFileSync(headersFile, JSON.stringify(v.headers));
    const result = await htask(['webhook', 'verify', '--headers-file', headersFile, '--base-url', 'http://127.0.0.1:9', ...WIDE], { input: v.body });
    expect(result.code).toBe(1);
    expect(result.stdout + result.stderr).toContain('http://127.0.0.1:9');
  });
});
