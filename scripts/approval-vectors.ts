import { createHash, createPrivateKey, generateKeyPairSync, type KeyObject, sign } from 'node:crypto';
import { calculateJwkThumbprint, type JWK } from 'jose';
import { approvalChallengeBase64url } from '../src/receipts/approval-challenge.js';

/**
 * The receipt_version 3 cases of docs/receipt-test-vectors.json: approvals whose WebAuthn
 * assertions a software authenticator makes here (authenticatorData = SHA-256(rpId) || flags ||
 * counter; clientDataJSON {type, challenge, origin}; the signature over authenticatorData ||
 * SHA-256(clientDataJSON), DER for ECDSA), each case with the verdict every verifier must reach and
 * which approval breaks which rule.
 *
 * The test passkeys live in the vectors file like the service's test keys. ECDSA signatures are
 * randomized, so a signature already in the file for the same case, approval and signed bytes is
 * kept: re-running the script rewrites the same bytes.
 */

const PASSKEY_NAMES = ['p256', 'ed25519', 'rsa', 'retired', 'unpublished', 'mislabelled'] as const;
type PasskeyName = (typeof PASSKEY_NAMES)[number];

const RP_ID = 'tasks.example.org';
const ORIGIN = 'https://tasks.example.org';
const FLAG_UP = 0x01;
const FLAG_UV = 0x04;

export interface ApprovalVectorContext {
  /** The v2 payload the v3 receipts extend (attachments included). */
  v2: Record<string, unknown> & { task_id: string; request_sha256: string; deliverable_sha256: string };
  otherTaskId: string;
  /** Signs a payload with the service's active test key (a compact JWS). */
  issue: (payload: object) => Promise<string>;
  base: Record<string, unknown>;
  /** The test passkeys and receipts of the previous run, to keep their bytes. */
  previous?: { test_passkeys?: Record<string, JWK>; receipts?: { name: string; receipt: string }[] };
}

interface Assertion {
  key: PasskeyName;
  /** The key_id claimed (default: the signing key's). */
  keyId?: PasskeyName;
  at: string;
  flags?: number;
  type?: string;
  challengeOf?: { task_id: string; request_sha256: string; deliverable_sha256: string };
  tamper?: (attestation: { authenticator_data: Buffer; client_data_json: Buffer; signature: Buffer }) => void;
}

type Approval = Assertion | { unsigned: true; at: string; keyId?: PasskeyName | null };

function newPasskey(name: PasskeyName): JWK {
  const pair =
    name === 'ed25519'
      ? generateKeyPairSync('ed25519')
      : name === 'rsa'
        ? generateKeyPairSync('rsa', { modulusLength: 2048 })
        : generateKeyPairSync('ec', { namedCurve: 'P-256' });
  return pair.privateKey.export({ format: 'jwk' }) as JWK;
}

function publicOf(jwk: JWK): JWK {
  if (jwk.kty === 'EC') return { kty: 'EC', crv: jwk.crv, x: jwk.x, y: jwk.y } as JWK;
  if (jwk.kty === 'OKP') return { kty: 'OKP', crv: jwk.crv, x: jwk.x } as JWK;
  return { kty: 'RSA', n: jwk.n, e: jwk.e } as JWK;
}

function signAssertion(key: KeyObject, jwk: JWK, data: Buffer): Buffer {
  if (jwk.kty === 'EC') return sign('sha256', data, { key, dsaEncoding: 'der' });
  if (jwk.kty === 'OKP') return sign(null, data, key);
  return sign('sha256', data, key);
}

/** Signatures of the previous run, by case, approval index and signed bytes. */
function previousSignatures(previous: ApprovalVectorContext['previous']): Map<string, string> {
  const found = new Map<string, string>();
  for (const vector of previous?.receipts ?? []) {
    const body = vector.receipt.split('.')[1];
    if (!vector.name.startsWith('v3-') || body === undefined) continue;
    const payload = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as { approvals?: { attestation: Record<string, string> | null }[] };
    for (const [index, approval] of (payload.approvals ?? []).entries()) {
      const a = approval.attestation;
      if (a?.signature) found.set(`${vector.name}/${index}/${a.authenticator_data}.${a.client_data_json}`, a.signature);
    }
  }
  return found;
}

export async function approvalVectors(context: ApprovalVectorContext) {
  const passkeys = {} as Record<PasskeyName, JWK>;
  for (const name of PASSKEY_NAMES) passkeys[name] = context.previous?.test_passkeys?.[name] ?? newPasskey(name);
  const keyIds = {} as Record<PasskeyName, string>;
  for (const name of PASSKEY_NAMES) keyIds[name] = await calculateJwkThumbprint(publicOf(passkeys[name]));
  const reuse = previousSignatures(context.previous);

  const entry = (name: PasskeyName, since: string, until: string | null, jwkOf: PasskeyName = name) => ({
    key_id: keyIds[name],
    jwk: publicOf(passkeys[jwkOf]),
    since,
    until,
  });
  const operator_keys = {
    keys: [
      entry('p256', '2026-01-05T10:00:00.000Z', null),
      entry('ed25519', '2026-11-10T08:00:00.000Z', null),
      entry('rsa', '2026-03-01T12:00:00.000Z', null),
      entry('retired', '2026-01-05T10:00:00.000Z', '2026-11-01T00:00:00.000Z'),
      // Published under its own key_id but with another passkey's public key: a verifier must check the thumbprint.
      entry('mislabelled', '2026-01-05T10:00:00.000Z', null, 'p256'),
    ],
  };

  const v3 = { ...context.v2, receipt_version: 3, attachments: [] as unknown[] };
  const rpIdHash = createHash('sha256').update(RP_ID).digest();
  const signedBefore = new Map<string, Buffer>();

  function attest(caseName: string, index: number, a: Assertion) {
    const challenge = approvalChallengeBase64url(a.challengeOf ?? v3);
    const counter = Buffer.alloc(4);
    counter.writeUInt32BE(7 + index);
    const authenticator_data = Buffer.concat([rpIdHash, Buffer.from([a.flags ?? FLAG_UP | FLAG_UV]), counter]);
    const client_data_json = Buffer.from(JSON.stringify({ type: a.type ?? 'webauthn.get', challenge, origin: ORIGIN, crossOrigin: false }));
    const jwk = passkeys[a.key];
    const signed = Buffer.concat([authenticator_data, createHash('sha256').update(client_data_json).digest()]);
    // A tampered case is stored tampered: it takes the signature of the same bytes from an intact case.
    const sameBytes = `${a.key}/${signed.toString('base64url')}`;
    const kept = a.tamper ? undefined : reuse.get(`${caseName}/${index}/${authenticator_data.toString('base64url')}.${client_data_json.toString('base64url')}`);
    const signature = Buffer.from(
      signedBefore.get(sameBytes) ??
        (kept ? Buffer.from(kept, 'base64url') : signAssertion(createPrivateKey({ key: jwk as Record<string, unknown> as never, format: 'jwk' }), jwk, signed)),
    );
    if (!signedBefore.has(sameBytes)) signedBefore.set(sameBytes, Buffer.from(signature));
    const attestation = { authenticator_data, client_data_json, signature };
    a.tamper?.(attestation);
    return {
      authenticator_data: attestation.authenticator_data.toString('base64url'),
      client_data_json: attestation.client_data_json.toString('base64url'),
      signature: attestation.signature.toString('base64url'),
    };
  }

  const flipByte = (bytes: Buffer, at: number) => {
    bytes[at] = (bytes[at] ?? 0) ^ 0x01;
  };

  const AT = ['2026-11-17T15:30:00.000Z', '2026-11-17T15:35:00.000Z', '2026-11-17T15:38:00.000Z', '2026-11-17T15:40:00.000Z'] as const;
  const cases: {
    name: string;
    description: string;
    approvals: Approval[];
    expected: { valid: boolean; failure: string | null; approvals: { status: string; problem: string | null }[] };
  }[] = [];
  const ok = { status: 'signed', problem: null };
  const unsigned = { status: 'unsigned', problem: null };
  const bad = (problem: string) => ({ status: 'invalid', problem });
  const add = (name: string, description: string, approvals: Approval[], expectedApprovals: { status: string; problem: string | null }[]) => {
    const valid = expectedApprovals.every((a) => a.status !== 'invalid');
    cases.push({ name, description, approvals, expected: { valid, failure: valid ? null : 'approvals', approvals: expectedApprovals } });
  };

  add(
    'v3-valid-approvals',
    'Four approvals: a P-256 passkey (user verified), an Ed25519 passkey (user present only), an RSA passkey, and an operator signed in with a key (attestation null).',
    [
      { key: 'p256', at: AT[0] },
      { key: 'ed25519', at: AT[1], flags: FLAG_UP },
      { key: 'rsa', at: AT[2] },
      { unsigned: true, at: AT[3], keyId: null },
    ],
    [ok, ok, ok, unsigned],
  );
  add(
    'v3-unsigned-only',
    'Two approvals given without passkeys: reported as unsigned (key sign-in), not as failures.',
    [
      { unsigned: true, at: AT[0], keyId: null },
      { unsigned: true, at: AT[1], keyId: null },
    ],
    [unsigned, unsigned],
  );
  add(
    'v3-wrong-challenge',
    "A valid assertion over another task's approval challenge (replayed from that task).",
    [
      { key: 'p256', at: AT[0], challengeOf: { ...v3, task_id: context.otherTaskId } },
      { unsigned: true, at: AT[1], keyId: null },
    ],
    [bad('challenge'), unsigned],
  );
  add('v3-wrong-type', 'A registration (webauthn.create), not an assertion.', [{ key: 'p256', at: AT[0], type: 'webauthn.create' }], [bad('type')]);
  add(
    'v3-wrong-key',
    'Signed by an unpublished passkey, under the key_id of a published one.',
    [{ key: 'unpublished', keyId: 'p256', at: AT[0] }],
    [bad('signature')],
  );
  add('v3-unknown-key', 'Signed by a passkey whose key_id is not in the operator keys.', [{ key: 'unpublished', at: AT[0] }], [bad('key')]);
  add('v3-key-retired', 'Signed by a passkey retired (until) before the approval was given.', [{ key: 'retired', at: AT[0] }], [bad('key')]);
  add('v3-key-not-yet-valid', 'Dated before the passkey was published (since).', [{ key: 'ed25519', at: '2026-11-09T08:00:00.000Z' }], [bad('key')]);
  add(
    'v3-key-thumbprint-mismatch',
    "The operator keys list a key_id whose jwk is another passkey's (its thumbprint is not the key_id); the assertion is by that jwk's passkey.",
    [{ key: 'p256', keyId: 'mislabelled', at: AT[0] }],
    [bad('key')],
  );
  add(
    'v3-user-not-present',
    'Validly signed, but the authenticator data does not set the user-present (UP) flag.',
    [{ key: 'p256', at: AT[0], flags: 0 }],
    [bad('user_present')],
  );
  add(
    'v3-flipped-signature',
    'One byte of the signature flipped (inside r of the DER ECDSA signature).',
    [{ key: 'p256', at: AT[0], tamper: (a) => flipByte(a.signature, 10) }],
    [bad('signature')],
  );
  add(
    'v3-flipped-authenticator-data',
    'One byte of the authenticator data flipped (the signature counter).',
    [{ key: 'p256', at: AT[0], tamper: (a) => flipByte(a.authenticator_data, 36) }],
    [bad('signature')],
  );
  add(
    'v3-flipped-client-data',
    'One byte of the client data JSON flipped (in the origin), the challenge intact.',
    [
      {
        key: 'p256',
        at: AT[0],
        tamper: (a) => {
          a.client_data_json = Buffer.from(a.client_data_json.toString('utf8').replace('tasks.example', 'tasks.exbmple'));
        },
      },
    ],
    [bad('signature')],
  );
  add(
    'v3-second-approval-tampered',
    'The first approval is sound; one byte of the second (Ed25519) signature is flipped: the verdict names the second.',
    [
      { key: 'p256', at: AT[0] },
      { key: 'ed25519', at: AT[1], tamper: (a) => flipByte(a.signature, 0) },
    ],
    [ok, bad('signature')],
  );
  add(
    'v3-malformed-attestation',
    'The client data is not JSON.',
    [
      {
        key: 'p256',
        at: AT[0],
        tamper: (a) => {
          a.client_data_json = Buffer.from('not json');
        },
      },
    ],
    [bad('format')],
  );

  const receipts = [];
  for (const c of cases) {
    const approvals = c.approvals.map((a, index) =>
      'unsigned' in a
        ? { key_id: a.keyId ? keyIds[a.keyId] : null, at: a.at, attestation: null }
        : { key_id: keyIds[a.keyId ?? a.key], at: a.at, attestation: attest(c.name, index, a) },
    );
    receipts.push({
      name: c.name,
      description: c.description,
      receipt: await context.issue({ ...v3, approvals }),
      ...context.base,
      files: [],
      expected: c.expected,
    });
  }
  return { operator_keys, test_passkeys: passkeys, webauthn: { rp_id: RP_ID, origin: ORIGIN }, receipts };
}
