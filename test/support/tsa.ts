import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';

/**
 * A real RFC 3161 time-stamp authority for tests: `openssl ts -reply` with a test CA made here (a
 * CA certificate and a TSA certificate with extendedKeyUsage critical timeStamping), behind a
 * loopback HTTP wrapper. `setMode` makes it hang, answer garbage, or sign another hash than asked.
 */

export type TsaMode = 'ok' | 'hang' | 'garbage' | 'wrong-hash';

export interface TestTsa {
  url: string;
  /** PEM of the test CA (TSA_CA_FILE). */
  caFile: string;
  /** PEM of a CA that did not issue the TSA's certificate. */
  otherCaFile: string;
  requests: number;
  setMode(mode: TsaMode): void;
  close(): Promise<void>;
}

const OPENSSL = '/usr/bin/openssl';

function makeCa(dir: string, name: string): void {
  execFileSync(
    OPENSSL,
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      path.join(dir, `${name}.key`),
      '-out',
      path.join(dir, `${name}.crt`),
      '-subj',
      `/CN=${name}`,
      '-days',
      '2',
      '-addext',
      'basicConstraints=critical,CA:TRUE',
      '-addext',
      'keyUsage=critical,keyCertSign,cRLSign',
    ],
    { stdio: 'ignore' },
  );
}

export async function startTestTsa(): Promise<TestTsa> {
  const dir = mkdtempSync(path.join(tmpdir(), 'hts-tsa-'));
  makeCa(dir, 'ca');
  makeCa(dir, 'other-ca');
  execFileSync(
    OPENSSL,
    ['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', path.join(dir, 'tsa.key'), '-out', path.join(dir, 'tsa.csr'), '-subj', '/CN=Test TSA'],
    { stdio: 'ignore' },
  );
  writeFileSync(path.join(dir, 'ext.cnf'), 'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=critical,timeStamping\n');
  execFileSync(
    OPENSSL,
    [
      'x509',
      '-req',
      '-in',
      path.join(dir, 'tsa.csr'),
      '-CA',
      path.join(dir, 'ca.crt'),
      '-CAkey',
      path.join(dir, 'ca.key'),
      '-CAcreateserial',
      '-out',
      path.join(dir, 'tsa.crt'),
      '-days',
      '2',
      '-extfile',
      path.join(dir, 'ext.cnf'),
    ],
    { stdio: 'ignore' },
  );
  writeFileSync(path.join(dir, 'serial'), '01\n');
  writeFileSync(
    path.join(dir, 'tsa.cnf'),
    [
      '[ tsa ]',
      'default_tsa = tsa_config1',
      '[ tsa_config1 ]',
      `serial = ${path.join(dir, 'serial')}`,
      `signer_cert = ${path.join(dir, 'tsa.crt')}`,
      `certs = ${path.join(dir, 'ca.crt')}`,
      `signer_key = ${path.join(dir, 'tsa.key')}`,
      'signer_digest = sha256',
      'default_policy = 1.2.3.4.1',
      'digests = sha256',
      'accuracy = secs:1',
      'ordering = no',
      'tsa_name = no',
      'ess_cert_id_chain = no',
      'ess_cert_id_alg = sha256',
      '',
    ].join('\n'),
  );
  let mode: TsaMode = 'ok';
  let counter = 0;
  const held: (() => void)[] = [];
  const state = { requests: 0 };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      state.requests += 1;
      if (mode === 'hang') {
        held.push(() => res.destroy());
        return;
      }
      if (mode === 'garbage') {
        res.writeHead(200, { 'content-type': 'application/timestamp-reply' }).end(Buffer.from('this is not DER at all'));
        return;
      }
      let query = Buffer.concat(chunks);
      if (mode === 'wrong-hash') {
        // The imprint is the first OCTET STRING of 32 bytes: sign another hash than the one asked.
        query = Buffer.from(query);
        const at = query.indexOf(Buffer.from([0x04, 0x20]));
        query[at + 2] = (query[at + 2] ?? 0) ^ 0xff;
      }
      counter += 1;
      const q = path.join(dir, `q${counter}.tsq`);
      const r = path.join(dir, `r${counter}.tsr`);
      writeFileSync(q, query);
      execFile(OPENSSL, ['ts', '-reply', '-config', path.join(dir, 'tsa.cnf'), '-queryfile', q, '-out', r], (error) => {
        if (error) {
          res.writeHead(500).end();
          return;
        }
        res.writeHead(200, { 'content-type': 'application/timestamp-reply' }).end(readFileSync(r));
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/tsa`,
    caFile: path.join(dir, 'ca.crt'),
    otherCaFile: path.join(dir, 'other-ca.crt'),
    get requests() {
      return state.requests;
    },
    setMode(next) {
      mode = next;
      if (next !== 'hang') for (const release of held.splice(0)) release();
    },
    async close() {
      for (const release of held.splice(0)) release();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
