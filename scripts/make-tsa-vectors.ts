import { execFileSync } from 'node:child_process';
import { constants, sign } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as asn1js from 'asn1js';
import * as pkijs from 'pkijs';

/**
 * Writes docs/tsa-test-vectors.json: RFC 3161 tokens made by a real TSA (`openssl ts -reply`)
 * over one checkpoint, with test CAs made here, and changed copies of them, each with the verdict
 * every verifier of a tlog-proof's extra line must reach. Both clients' tests read it
 * (clients/typescript/test/tsa.vectors.security.test.ts, clients/python/tests/test_tsa.py).
 * Not deterministic (keys, nonces and times are fresh): run it only to change the vectors. The
 * certificates are checked at the token's time, so the file does not expire.
 */

const OUT = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'docs', 'tsa-test-vectors.json');
const OPENSSL = '/usr/bin/openssl';
const CHECKPOINT =
  'tasks.example.org/log\n42\nq7w0J8Wm6lRQd8dJ8rYp5Zz1n0m7o2h3Xw8sT1b9d0E=\naudit 7 AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=\n\n— tasks.example.org/log AbCdEfGh\n';

const dir = mkdtempSync(path.join(tmpdir(), 'tsa-vectors-'));
const file = (name: string) => path.join(dir, name);
const openssl = (...args: string[]) => execFileSync(OPENSSL, args, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });

function makeCa(name: string): void {
  openssl(
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    `${name}.key`,
    '-out',
    `${name}.crt`,
    '-subj',
    `/CN=Test ${name}`,
    '-days',
    '3650',
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
  );
}

/** A TSA certificate issued by the CA, for a key made by `genpkey` with `keyArgs`. */
function makeTsa(name: string, keyArgs: string[], essAlg: 'sha1' | 'sha256' = 'sha256'): void {
  openssl('genpkey', ...keyArgs, '-out', `${name}.key`);
  openssl('req', '-new', '-key', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=Test TSA ${name}`);
  writeFileSync(file('ext.cnf'), 'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=critical,timeStamping\n');
  openssl(
    'x509',
    '-req',
    '-in',
    `${name}.csr`,
    '-CA',
    'ca.crt',
    '-CAkey',
    'ca.key',
    '-CAcreateserial',
    '-out',
    `${name}.crt`,
    '-days',
    '3650',
    '-extfile',
    'ext.cnf',
  );
  writeFileSync(file(`${name}.serial`), '01\n');
  writeFileSync(
    file(`${name}.cnf`),
    [
      '[ tsa ]',
      'default_tsa = t',
      '[ t ]',
      `serial = ${name}.serial`,
      `signer_cert = ${name}.crt`,
      'certs = ca.crt',
      `signer_key = ${name}.key`,
      'signer_digest = sha256',
      'default_policy = 1.2.3.4.1',
      'digests = sha256',
      'accuracy = secs:1',
      `ess_cert_id_alg = ${essAlg}`,
      '',
    ].join('\n'),
  );
}

function reply(tsa: string, data: string, digest = '-sha256'): Buffer {
  writeFileSync(file('data'), data);
  openssl('ts', '-query', '-data', 'data', digest, '-cert', '-out', 'q.tsq');
  openssl('ts', '-reply', '-config', `${tsa}.cnf`, '-queryfile', 'q.tsq', '-out', 'r.tsr');
  return readFileSync(file('r.tsr'));
}

/** The token with its certificates replaced by `certs` (re-encoded with pkijs). */
function withCertificates(token: Buffer, certs: string[]): Buffer {
  const resp = pkijs.TimeStampResp.fromBER(new Uint8Array(token));
  const signed = new pkijs.SignedData({ schema: resp.timeStampToken?.content });
  signed.certificates = certs.map((name) => {
    const pem = readFileSync(file(`${name}.crt`), 'utf8').replace(/-----[A-Z ]+-----|\s+/g, '');
    return pkijs.Certificate.fromBER(new Uint8Array(Buffer.from(pem, 'base64')));
  });
  const content = new pkijs.ContentInfo({ contentType: pkijs.ContentInfo.SIGNED_DATA, content: signed.toSchema(true) });
  const out = new pkijs.TimeStampResp({ status: resp.status, timeStampToken: content });
  return Buffer.from(out.toSchema().toBER());
}

/**
 * The token re-signed by its TSA's key with RSASSA-PSS (SHA-256, MGF1-SHA-256, salt 32): `openssl
 * ts` signs with PKCS#7, which has no PSS, so this one signature is made here over the same
 * signed attributes.
 */
function resignedPss(token: Buffer, keyName: string): Buffer {
  const resp = pkijs.TimeStampResp.fromBER(new Uint8Array(token));
  const signed = new pkijs.SignedData({ schema: resp.timeStampToken?.content });
  const info = signed.signerInfos[0] as pkijs.SignerInfo;
  const attrs = Buffer.from(info.signedAttrs?.encodedValue ?? new ArrayBuffer(0));
  attrs[0] = 0x31;
  const sha256 = () => new pkijs.AlgorithmIdentifier({ algorithmId: '2.16.840.1.101.3.4.2.1' });
  info.signatureAlgorithm = new pkijs.AlgorithmIdentifier({
    algorithmId: '1.2.840.113549.1.1.10',
    algorithmParams: new pkijs.RSASSAPSSParams({
      hashAlgorithm: sha256(),
      maskGenAlgorithm: new pkijs.AlgorithmIdentifier({ algorithmId: '1.2.840.113549.1.1.8', algorithmParams: sha256().toSchema() }),
      saltLength: 32,
    }).toSchema(),
  });
  const key = readFileSync(file(`${keyName}.key`), 'utf8');
  info.signature = new asn1js.OctetString({ valueHex: sign('sha256', attrs, { key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: 32 }) });
  const content = new pkijs.ContentInfo({ contentType: pkijs.ContentInfo.SIGNED_DATA, content: signed.toSchema(true) });
  return Buffer.from(new pkijs.TimeStampResp({ status: resp.status, timeStampToken: content }).toSchema().toBER());
}

const flip = (token: Buffer, at: number) => {
  const out = Buffer.from(token);
  out[at] = (out[at] ?? 0) ^ 0x01;
  return out;
};

/** The token with a digit of its genTime changed (the TSTInfo's first GeneralizedTime). */
function changedGenTime(token: Buffer): Buffer {
  const at = token.indexOf(Buffer.from([0x18, 0x0f]));
  return flip(token, at + 2 + 13);
}

makeCa('ca');
makeCa('other-ca');
makeTsa('rsa', ['-algorithm', 'RSA', '-pkeyopt', 'rsa_keygen_bits:2048']);
makeTsa('rsa-ess-v1', ['-algorithm', 'RSA', '-pkeyopt', 'rsa_keygen_bits:2048'], 'sha1');
makeTsa('p256', ['-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256']);
makeTsa('p384', ['-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-384']);

const pem = (name: string) => readFileSync(file(`${name}.crt`), 'utf8');
const rsa = reply('rsa', CHECKPOINT);
const p256 = reply('p256', CHECKPOINT);
const cases: { name: string; token: Buffer; trusted: string | null; valid: boolean; chained?: boolean; error?: string }[] = [
  { name: 'rsa_pkcs1_chained', token: rsa, trusted: 'ca', valid: true, chained: true },
  { name: 'rsa_pkcs1_no_trusted_certificate', token: rsa, trusted: null, valid: true, chained: false },
  { name: 'rsa_tsa_certificate_itself_trusted', token: rsa, trusted: 'rsa', valid: true, chained: true },
  { name: 'rsa_ess_cert_id_v1_sha1', token: reply('rsa-ess-v1', CHECKPOINT), trusted: 'ca', valid: true, chained: true },
  { name: 'ecdsa_p256_chained', token: p256, trusted: 'ca', valid: true, chained: true },
  { name: 'ecdsa_p384_chained', token: reply('p384', CHECKPOINT), trusted: 'ca', valid: true, chained: true },
  { name: 'rsa_pss_chained', token: resignedPss(rsa, 'rsa'), trusted: 'ca', valid: true, chained: true },
  { name: 'rsa_flipped_signature_byte', token: flip(rsa, rsa.length - 1), trusted: null, valid: false, error: 'signature does not verify' },
  { name: 'ecdsa_flipped_signature_byte', token: flip(p256, p256.length - 3), trusted: null, valid: false, error: 'signature' },
  { name: 'rsa_other_ca', token: rsa, trusted: 'other-ca', valid: false, error: 'does not chain' },
  { name: 'rsa_wrong_imprint', token: reply('rsa', `${CHECKPOINT}changed`), trusted: 'ca', valid: false, error: 'another hash' },
  { name: 'rsa_changed_tstinfo', token: changedGenTime(rsa), trusted: 'ca', valid: false, error: 'messageDigest' },
  { name: 'rsa_wrong_certificate', token: withCertificates(rsa, ['p256', 'ca']), trusted: 'ca', valid: false, error: 'ESSCertID' },
  { name: 'refused_sha384_request', token: reply('rsa', CHECKPOINT, '-sha384'), trusted: 'ca', valid: false, error: 'refused' },
  { name: 'garbage', token: Buffer.from('this is not DER at all'), trusted: null, valid: false, error: 'malformed' },
];

const vectors = {
  description:
    "RFC 3161 TimeStampResp test vectors for verifiers of the receipt log's checkpoint tokens (a tlog-proof's extra line). Made by a real TSA (openssl ts -reply) with test CAs; generated by scripts/make-tsa-vectors.ts.",
  how_to_use: [
    "Check each case's `token` (base64 DER TimeStampResp) over the UTF-8 bytes of `data` (a checkpoint as served), trusting the PEM certificate `certificates[trusted]` (none when null).",
    'A valid token: PKIStatus granted, SHA-256 imprint of `data`, messageDigest = hash of the TSTInfo, ESSCertID/ESSCertIDv2 naming the signer certificate, the signature over the signed attributes (DER SET) verifying with it, extendedKeyUsage timeStamping critical, certificates valid at genTime and, when a certificate is trusted, a chain to it.',
    '`expected.valid` is the verdict; `expected.chained` whether the chain was checked; `expected.error` a phrase the failure names.',
  ],
  warning: 'TEST CERTIFICATES ONLY: the CAs and TSAs here were made for these vectors; their private keys were thrown away.',
  data: CHECKPOINT,
  certificates: { ca: pem('ca'), 'other-ca': pem('other-ca'), rsa: pem('rsa') },
  cases: cases.map((c) => ({
    name: c.name,
    token: c.token.toString('base64'),
    trusted: c.trusted,
    expected: { valid: c.valid, ...(c.chained === undefined ? {} : { chained: c.chained }), ...(c.error === undefined ? {} : { error: c.error }) },
  })),
};
writeFileSync(OUT, `${JSON.stringify(vectors, null, 2)}\n`);
rmSync(dir, { recursive: true, force: true });
process.stdout.write(`wrote ${OUT}: ${cases.length} cases\n`);
