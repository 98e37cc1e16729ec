import { createHash, createPublicKey, constants as cryptoConstants, type JsonWebKey, type KeyObject, verify } from 'node:crypto';
import type { JWK } from 'jose';
import { type ApprovalSubject, approvalChallengeBase64url, passkeyKeyId } from './approval-challenge.js';

/**
 * Offline check of the passkey attestations a receipt (receipt_version 3) carries, against the
 * published operator keys (/.well-known/operator-keys.json). Pure apart from the clock-free
 * crypto: the same rules the TypeScript and Python clients apply, pinned by the `approvals`
 * vectors of docs/receipt-test-vectors.json. docs/receipt-log.md ("Approvals") has the rules.
 */

export interface OperatorKey {
  key_id: string;
  jwk: JWK;
  since: string;
  /** Null while the passkey is valid. */
  until: string | null;
}

export interface OperatorKeySet {
  keys: OperatorKey[];
}

export interface ApprovalAttestation {
  authenticator_data: string;
  client_data_json: string;
  signature: string;
}

export interface ReceiptApproval {
  /** Null only for an approval without a passkey. */
  key_id: string | null;
  at: string;
  /** Null when the operator approved signed in with a key, not a passkey. */
  attestation: ApprovalAttestation | null;
}

/** The first rule an attestation breaks, in the order they are checked. */
export type ApprovalProblem = 'format' | 'key' | 'type' | 'challenge' | 'user_present' | 'signature';

export interface ApprovalVerdict {
  index: number;
  key_id: string | null;
  at: string | null;
  status: 'signed' | 'unsigned' | 'invalid';
  problem: ApprovalProblem | null;
  user_verified: boolean;
  detail: string;
}

export interface ApprovalsCheck {
  ok: boolean;
  detail: string;
  approvals: ApprovalVerdict[];
}

const FLAG_UP = 0x01;
const FLAG_UV = 0x04;
/** rpIdHash (32) + flags (1) + signCount (4). */
const MIN_AUTHENTICATOR_DATA = 37;
const B64URL = /^[A-Za-z0-9_-]*$/;

class ApprovalError extends Error {
  constructor(
    readonly problem: ApprovalProblem,
    message: string,
  ) {
    super(message);
  }
}

/**
 * Checks every approval of a receipt payload. Without `keys`, attested approvals cannot be
 * checked and fail ('key'); unsigned ones (attestation null) never need a key.
 */
export async function verifyApprovals(payload: ApprovalSubject & { approvals?: unknown }, keys: OperatorKeySet | undefined): Promise<ApprovalsCheck> {
  if (!Array.isArray(payload.approvals)) return { ok: false, detail: 'approvals is not a list', approvals: [] };
  const challenge = approvalChallengeBase64url(payload);
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
    const signed = Buffer.concat([attestation.authenticatorData, createHash('sha256').update(attestation.clientDataJson).digest()]);
    if (!verifySignature(key, signed, attestation.signature))
      throw new ApprovalError('signature', 'signature does not verify over authenticator_data and SHA-256(client_data_json) with this key');
    const userVerified = (flags & FLAG_UV) !== 0;
    return verdict('signed', null, `signed, user present${userVerified ? ' and verified' : ' (not verified)'}`, userVerified);
  } catch (error) {
    if (error instanceof ApprovalError) return verdict('invalid', error.problem, error.message);
    throw error;
  }
}

interface DecodedAttestation {
  authenticatorData: Buffer;
  clientDataJson: Buffer;
  clientData: Record<string, unknown>;
  signature: Buffer;
}

function decodeAttestation(value: unknown): DecodedAttestation {
  if (typeof value !== 'object' || value === null) throw new ApprovalError('format', 'attestation is neither null nor an object');
  const record = value as Record<string, unknown>;
  const field = (name: keyof ApprovalAttestation): Buffer => {
    const text = record[name];
    if (typeof text !== 'string' || text === '' || !B64URL.test(text)) throw new ApprovalError('format', `attestation.${name} is not base64url`);
    return Buffer.from(text, 'base64url');
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
  key: KeyObject;
  alg: string;
}

/** The published key named key_id, valid at `at` (since ≤ at < until), whose JWK has that thumbprint. */
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
  let key: KeyObject;
  try {
    thumbprint = await passkeyKeyId(entry.jwk);
    key = createPublicKey({ key: entry.jwk as JsonWebKey, format: 'jwk' });
  } catch (error) {
    throw new ApprovalError('key', `the published jwk is not a usable public key (${error instanceof Error ? error.message : String(error)})`);
  }
  if (thumbprint !== keyId) throw new ApprovalError('key', `the published jwk's thumbprint is ${thumbprint}, not the key_id`);
  return { key, alg: algorithmOf(entry.jwk) };
}

/** The signature scheme: the JWK's `alg` when given, else the one its key type implies (ES256 for P-256). */
function algorithmOf(jwk: JWK): string {
  if (typeof jwk.alg === 'string') return jwk.alg;
  if (jwk.kty === 'OKP') return 'EdDSA';
  if (jwk.kty === 'RSA') return 'RS256';
  return { 'P-256': 'ES256', 'P-384': 'ES384', 'P-521': 'ES512' }[String(jwk.crv)] ?? 'ES256';
}

/** WebAuthn signatures: ECDSA as ASN.1 DER, Ed25519 raw, RSA PKCS#1 v1.5 or PSS. */
function verifySignature({ key, alg }: VerificationKey, data: Buffer, signature: Buffer): boolean {
  try {
    switch (alg) {
      case 'ES256':
      case 'ES384':
      case 'ES512':
        return verify(`sha${alg.slice(2)}`, data, { key, dsaEncoding: 'der' }, signature);
      case 'EdDSA':
      case 'Ed25519':
        return verify(null, data, key, signature);
      case 'RS256':
      case 'RS384':
      case 'RS512':
        return verify(`sha${alg.slice(2)}`, data, key, signature);
      case 'PS256':
      case 'PS384':
      case 'PS512':
        return verify(
          `sha${alg.slice(2)}`,
          data,
          { key, padding: cryptoConstants.RSA_PKCS1_PSS_PADDING, saltLength: cryptoConstants.RSA_PSS_SALTLEN_DIGEST },
          signature,
        );
      default:
        return false;
    }
  } catch {
    return false;
  }
}
