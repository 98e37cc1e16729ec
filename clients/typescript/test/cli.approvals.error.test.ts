import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { derToRaw, passkeyKeyId } from '../src/approvals.js';
import { HumanTaskClient, type JSONWebKeySet, type OperatorKeySet } from '../src/index.js';
import { htask } from './cli.support.js';

/**
 * `htask verify` and the client on the passkey approvals of a version-3 receipt
 * (docs/receipt-test-vectors.json): offline with --operator-keys (a file or a URL), each broken
 * approval named with the rule it breaks, exit 4; offline without the keys, attested approvals fail
 * rather than pass unchecked; online, the client fetches /.well-known/operator-keys.json.
 */

interface Vectors {
  issuer: string;
  jwks: JSONWebKeySet;
  operator_keys: OperatorKeySet;
  receipts: { name: string; receipt: string; operator_notes: string }[];
}
const vectors = JSON.parse(readFileSync(fileURLToPath(new URL('../../../docs/receipt-test-vectors.json', import.meta.url)), 'utf8')) as Vectors;
const receipt = (name: string) => String(vectors.receipts.find((r) => r.name === name)?.receipt);

/** A stand-in for the service's two key documents, on loopback (the approvals server is another part). */
function keyServer(): Promise<Server> {
  const server = createServer((req, res) => {
    const body = req.url === '/.well-known/operator-keys.json' ? vectors.operator_keys : req.url === '/.well-known/jwks.json' ? vectors.jwks : null;
    res.writeHead(body === null ? 404 : 200, { 'content-type': 'application/json' }).end(JSON.stringify(body ?? { error: 'not_found' }));
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

describe('htask verify: passkey approvals', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'htask-approvals-'));
  const jwksFile = path.join(dir, 'jwks.json');
  const keysFile = path.join(dir, 'operator-keys.json');
  writeFileSync(jwksFile, JSON.stringify(vectors.jwks));
  writeFileSync(keysFile, JSON.stringify(vectors.operator_keys));
  let server: Server;
  let url: string;
  beforeAll(async () => {
    server = await keyServer();
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => {
    server.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const offline = (name: string, ...extra: string[]) =>
    htask(['verify', receipt(name), '--jwks-file', jwksFile, '--issuer', vectors.issuer, '--base-url', 'http://127.0.0.1:9', ...extra]);

  it('a valid receipt lists each approval, the unsigned one as such, and exits 0', async () => {
    const result = await offline('v3-valid-approvals', '--operator-keys', keysFile);
    expect(result.stdout).toContain('✓ approvals');
    expect(result.stdout).toMatch(/approvals\[0\] \(key [\w-]{43}\): signed, user present and verified, at 2026-11-17T15:30:00.000Z/);
    expect(result.stdout).toContain('approvals[1]');
    expect(result.stdout).toContain('user present (not verified)');
    expect(result.stdout).toContain('approvals[3]: unsigned (key sign-in)');
    expect(result.code).toBe(0);
  });

  it('a flipped byte in the second attestation is named, and exits 4 (INVALID (approvals))', async () => {
    const result = await offline('v3-second-approval-tampered', '--operator-keys', keysFile);
    expect(result.stdout).toMatch(/✗ approvals +approvals\[1\] \(key [\w-]{43}\): signature does not verify/);
    expect(result.stdout).toContain('INVALID (approvals)');
    expect(result.code).toBe(4);
    const json = await offline('v3-user-not-present', '--json', '--operator-keys', keysFile);
    expect(JSON.parse(json.stdout)).toMatchObject({ valid: false, failure: 'approvals', approvals: [{ status: 'invalid', problem: 'user_present' }] });
  });

  it('takes the operator keys from a URL too', async () => {
    const result = await offline('v3-key-retired', '--operator-keys', `${url}/.well-known/operator-keys.json`);
    expect(result.stdout).toContain('until 2026-11-01T00:00:00.000Z');
    expect(result.code).toBe(4);
  });

  it('offline without --operator-keys, attested approvals fail instead of passing unchecked', async () => {
    const result = await offline('v3-valid-approvals');
    expect(result.stdout).toContain('no operator keys given');
    expect(result.code).toBe(4);
  });

  it('an operator-keys file that is not a key set is a usage error naming it', async () => {
    writeFileSync(path.join(dir, 'bad.json'), '{"keys": "none"}');
    const result = await offline('v3-valid-approvals', '--operator-keys', path.join(dir, 'bad.json'));
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`--operator-keys ${path.join(dir, 'bad.json')} is not {keys: [{key_id, jwk, since, until}]}`);
  });

  it('online, the client fetches /.well-known/operator-keys.json for a version-3 receipt', async () => {
    const client = new HumanTaskClient({ baseUrl: url, issuer: vectors.issuer });
    const verdict = await client.verifyReceipt(receipt('v3-valid-approvals'));
    expect(verdict.valid).toBe(true);
    expect(verdict.approvals.map((a) => a.status)).toEqual(['signed', 'signed', 'signed', 'unsigned']);
    const wrong = await client.verifyReceipt(receipt('v3-wrong-challenge'));
    expect(wrong.failure).toBe('approvals');
    expect(wrong.approvals[0]?.detail).toContain('client_data_json challenge is');
  });
});

describe('the client’s WebAuthn helpers', () => {
  it('derToRaw refuses what is not exactly a DER ECDSA signature', () => {
    expect(derToRaw(new Uint8Array([0x30, 0x06, 0x02, 0x01, 0x01, 0x02, 0x01, 0x02]), 32)?.length).toBe(64);
    expect(derToRaw(new Uint8Array([0x30, 0x06, 0x02, 0x01, 0x01, 0x02, 0x01, 0x02, 0x00]), 32)).toBeNull();
    expect(derToRaw(new Uint8Array([0x31, 0x06, 0x02, 0x01, 0x01, 0x02, 0x01, 0x02]), 32)).toBeNull();
    expect(derToRaw(new Uint8Array([0x30, 0x25, 0x02, 0x21, ...new Array(33).fill(1), 0x02, 0x00]), 32)).toBeNull();
  });

  it('passkeyKeyId matches RFC 7638’s example', async () => {
    const n =
      '0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSoc_BJECPebWKRXjBZCiFV4n3oknjhMstn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-65YGjQR0_FDW2QvzqY368QQMicAtaSqzs8KJZgnYb9c7d0zgdAZHzu6qMQvRL5hajrn1n91CbOpbISD08qNLyrdkt-bFTWhAI4vMQFh6WeZu0fM4lFd2NcRwr3XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur-kEgU8awapJzKnqDKgw';
    expect(await passkeyKeyId({ kty: 'RSA', n, e: 'AQAB', alg: 'RS256' })).toBe('NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs');
  });
});
