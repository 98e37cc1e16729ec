import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runVerifyWebhook } from './webhooks.support.js';

/**
 * `npm run verify-webhook` without --base-url (issue 30, item 5): it used to say only "Cannot
 * verify: fetch failed". It names the URL it tried and how to point it elsewhere.
 */
describe('verify-webhook when the service cannot be reached', () => {
  it('names the JWKS URL it tried (from PORT) and the flags that change it', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'hts-verify-webhook-'));
    try {
      const headersFile = path.join(dir, 'headers.txt');
      writeFileSync(headersFile, 'webhook-id: evt-1\nwebhook-timestamp: 1795000000\nwebhook-signature: v1a,AAAA\n');
      const result = await runVerifyWebhook(['--headers-file', headersFile], '{}', { PORT: '9' });
      expect(result.code).toBe(1);
      expect(result.stdout).toContain('could not reach http://localhost:9/.well-known/jwks.json');
      expect(result.stdout).toContain('--base-url');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
