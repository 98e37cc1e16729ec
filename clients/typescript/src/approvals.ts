import { fromBase64Url, toBase64Url, utf8 } from './encoding.js';

/**
 * Offline check of the passkey-signed approvals of a receipt_version 3, on WebCrypto only: the
 * same rules, in the same order, as the server's src/receipts/approval-verify.ts and the Python
 * client, pinned by the `approvals` vectors of docs/receipt-test-vectors.json.
 */

/** A public key as /.well-known/operator-keys.json lists it (EC P-256/384/521, OKP Ed25519, RSA). */
export interface OperatorJwk {
  kty?: string;
  crv?: string;
  x?: string;
  y?: string;
  n?: string;
  e?: string;
  alg?: string;
  [member: string]: unknown;
}

/** One passkey of /.well-known/operator-keys.json; `until` is null while it is valid. */
export interface OperatorKey {
  key_id: string;
  jwk: OperatorJwk;
  since: string;
  until: string | null;
}

/** The service's /.well-known/operator-keys.json. */
export interface OperatorKeySet {
  keys: OperatorKey[];
}

/** One approval as a version-3 receipt lists it (base64url values). */
export interface ReceiptApproval {
  key_id: string | null;
  at: string;
  attestation: { authenticator_data: string; client_data_json: string; signature: string } | null;
}

/** The first rule an attestation breaks, in the order they are checked. */
export type ApprovalProblem = 'format' | 'key' | 'type' | 'challenge' | 'user_present' | 'signature';

export interface ApprovalVerdict {
  index: number;
  key_id: string | null;
  at: string | null;
  /** signed: the attestation verifies; unsigned: approved with a key sign-in (attestation null), not a failure. */
  status: 'signed' | 'unsigned' | 'invalid';
  problem: ApprovalProblem | null;
  user_verified: boolean;
  detail: string;
}

const FLAG_UP = 0x01;
const FLAG_UV = 0x04;
const MIN_AUTHENTICATOR_DATA = 37;

class ApprovalError extends Error {
  constructor(
    readonly problem: ApprovalProblem,
    message: string,
  ) {
    super(message);
  }
}

/**
 * The approval challenge: SHA-256 of the RFC 8785 JSON of {task_id, request_sha256,
 * deliverable_sha256}, base64url (as clientDataJSON carries it). With three string members, RFC
 * 8785 is the members in code-point order, each string as JSON.stringify writes it.
 */
export async function approvalChallenge(subject: { task_id: string; request_sha256: string; deliverable_sha256: string }): Promise<string> {
  const canonical = `{"deliverable_sha256":${JSON.stringify(subject.deliverable_sha256)},"request_sha256":${JSON.stringify(subject.request_sha256)},"task_id":${JSON.stringify(subject.task_id)}}`;
  return toBase64Url(new Uint8Array(await crypto.subtle.digest('SHA-256', utf8(canonical) as Uint8Array<ArrayBuffer>)));
}

/** The RFC 7638 thumbprint (SHA-256, base64url) of a public JWK: a passkey's key_id. */
export async function passkeyKeyId(jwk: OperatorJwk): Promise<string> {
  const members = jwk.kty === 'EC' ? ['crv', 'kty', 'x', 'y'] : jwk.kty === 'OKP' ? ['crv', 'kty', 'x'] : jwk.kty === 'RSA' ? ['e', 'kty', 'n'] : null;
  if (members === null) throw new Error(`unsupported key type ${String(jwk.kty)}`);
  const parts = members.map((name) => {
    const value = jwk[name];
    if (typeof value !== 'string' || value === '') throw new Error(`the jwk has no ${name}`);
    return `${JSON.stringify(name)}:${JSON.stringify(value)}`;
  });
  return toBase64Url(new Uint8Array(await crypto.subtle.digest('SHA-256', utf8(`{${parts.join(',')}}`) as Uint8Array<ArrayBuffer>)));
}

/** Checks every approval of a version-3 receipt payload; without `keys`, attested approvals fail ('key'). */
export async function verifyApprovals(
  payload: { task_id: string; request_sha256: string; deliverable_sha256: string; approvals?: unknown },
  keys: OperatorKeySet | undefined,
): Promise<{ ok: boolean; detail: string; approvals: ApprovalVerdict[] }> {
  if (!Array.isArray(payload.approvals)) return { ok: false, detail: 'approvals is not a list', approvals: [] };
  const challenge = await approvalChallenge(payload);
  const verdicts: ApprovalVerdict[] = [];
  for (const [index, entry] of payload.approvals.entries()) verdicts.push(await verifyOne(index, entry, challenge, keys));
  const failed = verdicts.filter((v) => v.status === 'invalid');
  if (failed.length > 0) return { ok: false, detail: failed.map((v) => v.detail).join('; '), approvals: verdicts };
  const signed = verdicts.filter((v) => v.status === 'signed').length;
  const unsigned = verdicts.length - signed;
  const parts = [`${signed} signed by a published passkey`];
  if (unsigned > 0) parts.push(`${unsigned} unsigned (key sign-in)`);
  return { ok: true, detail: `${verdicts.length} approval(s): ${parts.join(', ')}`, approvals: verdicts };
}

async function verifyOne(index: number, entry: unknown, challenge: string, keys: OperatorKeySet | undefined): Promise<ApprovalVerdict> {
  const record = typeof entry === 'object' && entry !== null ? (entry as Record<string, unknown>) : {};
  const keyId = typeof record.key_id === 'string' ? record.key_id : null;
  const at = typeof record.at === 'string' ? record.at : null;
  const label = `approvals[${index}]${keyId === null ? '' : ` (key ${keyId})`}`;
  const verdict = (status: ApprovalVerdict['status'], problem: ApprovalProblem | null, detail: string, userVerified = false): ApprovalVerdict => ({
    index,
    key_id: keyId,
    at,
    status,
    problem,
    user_verified: userVerified,
    detail: `${label}: ${detail}`,
  });
  try {
    if ((keyId === null && record.key_id !== null) || at === null || Number.isNaN(Date.parse(at)) || !('attestation' in record))
      throw new ApprovalError('format', 'not an approval {key_id, at (a date-time), attestation}');
    if (record.attestation === null) return verdict('unsigned', null, 'unsigned (key sign-in)');
    if (keyId === null) throw new ApprovalError('format', 'an attestation without a key_id');
    const attestation = decodeAttestation(record.attestation);
    const key = await publishedKey(keyId, Date.parse(at), at, keys);
    const clientData = attestation.clientData;
    if (clientData.type !== 'webauthn.get') throw new ApprovalError('type', `client_data_json type is ${JSON.stringify(clientData.type)}, not "webauthn.get"`);
    if (clientData.challenge !== challenge)
      throw new ApprovalError(
        'challenge',
        `client_data_json challenge is ${JSON.stringify(clientData.challenge)}, not ${challenge} (the approval challenge of this task_id, request_sha256 and deliverable_sha256)`,
      );
    const flags = attestation.authenticatorData[32] ?? 0;
    if ((flags & FLAG_UP) === 0) throw new ApprovalError('user_present', 'authenticator_data does not set the user-present (UP) flag');
    const clientHash = new Uint8Array(await crypto.subtle.digest('SHA-256', attestation.clientDataJson as Uint8Array<ArrayBuffer>));
    const signed = new Uint8Array(attestation.authenticatorData.length + clientHash.length);
    signed.set(attestation.authenticatorData);
    signed.set(clientHash, attestation.authenticatorData.length);
    if (!(await verifySignature(key, signed, attestation.signature)))
      throw new ApprovalError('signature', 'signature does not verify over authenticator_data and SHA-256(client_data_json) with this key');
    const userVerified = (flags & FLAG_UV) !== 0;
    return verdict('signed', null, `signed, user present${userVerified ? ' and verified' : ' (not verified)'}`, userVerified);
  } catch (error) {
    if (error instanceof ApprovalError) return verdict('invalid', error.problem, error.message);
    throw error;
  }
}

function decodeAttestation(value: unknown) {
  if (typeof value !== 'object' || value === null) throw new ApprovalError('format', 'attestation is neither null nor an object');
  const record = value as Record<string, unknown>;
  const field = (name: string): Uint8Array => {
    const text = record[name];
    const bytes = typeof text === 'string' && text !== '' ? fromBase64Url(text) : null;
    if (bytes === null) throw new ApprovalError('format', `attestation.${name} is not base64url`);
    return bytes;
  };
  const authenticatorData = field('authenticator_data');
  const clientDataJson = field('client_data_json');
  const signature = field('signature');
  if (authenticatorData.length < MIN_AUTHENTICATOR_DATA)
    throw new ApprovalError('format', `attestation.authenticator_data is ${authenticatorData.length} bytes, fewer than ${MIN_AUTHENTICATOR_DATA}`);
  let clientData: unknown;
  try {
    clientData = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(clientDataJson));
  } catch {
    clientData = null;
  }
  if (typeof clientData !== 'object' || clientData === null || Array.isArray(clientData))
    throw new ApprovalError('format', 'attestation.client_data_json is not a JSON object');
  return { authenticatorData, clientDataJson, clientData: clientData as Record<string, unknown>, signature };
}

interface VerificationKey {
  key: CryptoKey;
  alg: string;
  /** Bytes of r and of s in a raw ECDSA signature. */
  size: number;
}

const EC = { 'P-256': { hash: 'SHA-256', size: 32 }, 'P-384': { hash: 'SHA-384', size: 48 }, 'P-521': { hash: 'SHA-512', size: 66 } } as Record<
  string,
  { hash: string; size: number }
>;

async function publishedKey(keyId: string, atMs: number, at: string, keys: OperatorKeySet | undefined): Promise<VerificationKey> {
  if (keys === undefined) throw new ApprovalError('key', 'no operator keys given to check the attestation against (/.well-known/operator-keys.json)');
  const entry = (Array.isArray(keys.keys) ? keys.keys : []).find((k) => k?.key_id === keyId);
  if (entry === undefined) throw new ApprovalError('key', 'key_id is not in the operator keys');
  const since = Date.parse(entry.since);
  const until = entry.until === null ? null : Date.parse(entry.until);
  if (Number.isNaN(since) || (until !== null && Number.isNaN(until))) throw new ApprovalError('key', 'the published key has no valid since/until');
  if (atMs < since || (until !== null && atMs >= until))
    throw new ApprovalError('key', `approved at ${at}, but the key was valid from ${entry.since} ${until === null ? 'on' : `until ${entry.until}`}`);
  let thumbprint: string;
  let key: VerificationKey;
  try {
    thumbprint = await passkeyKeyId(entry.jwk);
    key = await importKey(entry.jwk);
  } catch (error) {
    throw new ApprovalError('key', `the published jwk is not a usable public key (${error instanceof Error ? error.message : String(error)})`);
  }
  if (thumbprint !== keyId) throw new ApprovalError('key', `the published jwk's thumbprint is ${thumbprint}, not the key_id`);
  return key;
}

async function importKey(jwk: OperatorJwk): Promise<VerificationKey> {
  if (jwk.kty === 'EC') {
    const curve = EC[String(jwk.crv)];
    if (!curve) throw new Error(`unsupported curve ${String(jwk.crv)}`);
    const key = await crypto.subtle.importKey('jwk', { kty: 'EC', crv: jwk.crv, x: jwk.x, y: jwk.y }, { name: 'ECDSA', namedCurve: String(jwk.crv) }, false, [
      'verify',
    ]);
    return { key, alg: typeof jwk.alg === 'string' ? jwk.alg : `ES${curve.hash.slice(4)}`, size: curve.size };
  }
  if (jwk.kty === 'OKP' && jwk.crv === 'Ed25519') {
    return {
      key: await crypto.subtle.importKey('jwk', { kty: 'OKP', crv: 'Ed25519', x: jwk.x }, { name: 'Ed25519' }, false, ['verify']),
      alg: 'EdDSA',
      size: 0,
    };
  }
  if (jwk.kty === 'RSA') {
    const alg = typeof jwk.alg === 'string' ? jwk.alg : 'RS256';
    const hash = `SHA-${alg.slice(2)}`;
    const name = alg.startsWith('PS') ? 'RSA-PSS' : 'RSASSA-PKCS1-v1_5';
    return { key: await crypto.subtle.importKey('jwk', { kty: 'RSA', n: jwk.n, e: jwk.e }, { name, hash }, false, ['verify']), alg, size: 0 };
  }
  throw new Error(`unsupported key type ${String(jwk.kty)}`);
}

async function verifySignature({ key, alg, size }: VerificationKey, data: Uint8Array, signature: Uint8Array): Promise<boolean> {
  const bytes = data as Uint8Array<ArrayBuffer>;
  try {
    if (alg.startsWith('ES')) {
      const raw = derToRaw(signature, size);
      return raw !== null && (await crypto.subtle.verify({ name: 'ECDSA', hash: `SHA-${alg.slice(2)}` }, key, raw as Uint8Array<ArrayBuffer>, bytes));
    }
    if (alg === 'EdDSA') return await crypto.subtle.verify({ name: 'Ed25519' }, key, signature as Uint8Array<ArrayBuffer>, bytes);
    if (alg.startsWith('PS'))
      return await crypto.subtle.verify({ name: 'RSA-PSS', saltLength: Number(alg.slice(2)) / 8 }, key, signature as Uint8Array<ArrayBuffer>, bytes);
    return await crypto.subtle.verify({ name: 'RSASSA-PKCS1-v1_5' }, key, signature as Uint8Array<ArrayBuffer>, bytes);
  } catch {
    return false;
  }
}

/**
 * WebAuthn ECDSA signatures are ASN.1 DER (SEQUENCE of INTEGER r, INTEGER s); WebCrypto wants r||s,
 * each left-padded to the curve size. Null for anything that is not exactly that.
 */
export function derToRaw(der: Uint8Array, size: number): Uint8Array | null {
  let offset = 0;
  const readLength = (): number | null => {
    const first = der[offset++];
    if (first === undefined) return null;
    if (first < 0x80) return first;
    if (first !== 0x81) return null;
    const next = der[offset++];
    return next === undefined || next < 0x80 ? null : next;
  };
  if (der[offset++] !== 0x30) return null;
  const total = readLength();
  if (total === null || offset + total !== der.length) return null;
  const raw = new Uint8Array(size * 2);
  for (let part = 0; part < 2; part++) {
    if (der[offset++] !== 0x02) return null;
    const length = readLength();
    if (length === null || length === 0 || offset + length > der.length) return null;
    let value = der.subarray(offset, offset + length);
    offset += length;
    while (value.length > 1 && value[0] === 0) value = value.subarray(1);
    if (value.length > size) return null;
    raw.set(value, part * size + (size - value.length));
  }
  return offset === der.length ? raw : null;
}
