import { describe, expect, it } from 'vitest';
import { htask } from '../clients/typescript/test/cli.support.js';
import { patchOk, taskIn } from './operator.support.js';
import { runCli } from './receipts.support.js';
import { useTestApp } from './support/app.js';
import { freePort } from './support/net.js';

/**
 * Issue 30, item 4: one issuer rule for every verifier. The service's BASE_URL says localhost and
 * the developer calls it as 127.0.0.1 (or the other way round): the server's CLI and `htask verify`
 * give the same verdict, VALID, because loopback names are one host under the rule written in
 * docs/receipt-test-vectors.json (the Python client is held to the same vectors). Another port is
 * another issuer for both.
 */

const port = await freePort();

describe('one issuer rule: the service reached as 127.0.0.1 while BASE_URL says localhost', () => {
  const t = useTestApp({ env: { PORT: String(port), BASE_URL: `http://localhost:${port}` } });

  it('the server CLI and htask verify both say VALID, and both refuse another port', async () => {
    expect(t.url).toBe(`http://127.0.0.1:${port}`);
    const id = await taskIn(t, 'accepted');
    await patchOk(t, id, { status: 'delivered', operator_notes: 'Open Sundays 8:00-12:00.' });

    const server = await runCli('verify-receipt', [id, '--base-url', t.url]);
    expect(server.stdout).toContain('✓ issuer');
    expect(server.stdout).toContain('VALID');
    expect(server.code).toBe(0);

    const client = await htask(['verify', id], { baseUrl: t.url });
    expect(client.stdout).toContain(`VALID: signed by ${t.url}`);
    expect(client.code).toBe(0);

    const elsewhere = `http://127.0.0.1:${port + 1}`;
    const serverRefuses = await runCli('verify-receipt', [id, '--base-url', t.url, '--issuer', elsewhere]);
    expect(serverRefuses.stdout).toContain('✗ issuer');
    expect(serverRefuses.code).toBe(1);
    const clientRefuses = await htask(['verify', id, '--issuer', elsewhere], { baseUrl: t.url });
    expect(clientRefuses.stdout).toContain('INVALID (issuer)');
    expect(clientRefuses.code).toBe(4);
  }, 120_000);
});
