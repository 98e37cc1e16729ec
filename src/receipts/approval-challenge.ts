import { decodeCredentialPublicKey } from '@simplewebauthn/server/helpers';
import { calculateJwkThumbprint, type JWK } from 'jose';
import { canonicalJson, sha256 } from '../domain/canonical.js';

/**
 * What a passkey signs when an operator approves a deliverable, and the name its public key is
 * published under. Pure: the service (building the WebAuthn assertion options and checking the
 * response) and every offline verifier compute both the same way, from the receipt alone.
 */

/** The three receipt fields an approval binds: this deliverable, for this request, on this task. */
export interface ApprovalSubject {
  task_id: string;
  request_sha256: string;
  deliverable_sha256: string;
}

/**
 * The WebAuthn challenge of an approval: the 32 raw bytes of the SHA-256 of the RFC 8785 canonical
 * JSON of exactly `{task_id, request_sha256, deliverable_sha256}` (other fields of the argument are
 * ignored, so a whole receipt payload can be passed).
 */
export function approvalChallenge(subject: ApprovalSubject): Buffer {
  const { task_id, request_sha256, deliverable_sha256 } = subject;
  for (const [name, value] of Object.entries({ task_id, request_sha256, deliverable_sha256 })) {
    if (typeof value !== 'string') throw new TypeError(`approval challenge: ${name} must be a string`);
  }
  return sha256(canonicalJson({ task_id, request_sha256, deliverable_sha256 }));
}

/** The challenge as clientDataJSON carries it (base64url, no padding). */
export function approvalChallengeBase64url(subject: ApprovalSubject): string {
  return approvalChallenge(subject).toString('base64url');
}

// COSE key parameters (RFC 9053, IANA "COSE Key Type Parameters"): common labels, then per key type.
const KTY = 1;
const ALG = 3;
const CRV = -1;
const X = -2;
const Y = -3;
const RSA_N = -1;
const RSA_E = -2;
const KTY_OKP = 1;
const KTY_EC2 = 2;
const KTY_RSA = 3;

const EC2_CURVES: Record<number, { crv: string; size: number }> = {
  1: { crv: 'P-256', size: 32 },
  2: { crv: 'P-384', size: 48 },
  3: { crv: 'P-521', size: 66 },
};
const OKP_CURVES: Record<number, { crv: string; size: number }> = { 6: { crv: 'Ed25519', size: 32 } };
const JOSE_ALGS: Record<number, string> = {
  [-7]: 'ES256',
  [-35]: 'ES384',
  [-36]: 'ES512',
  [-8]: 'EdDSA',
  [-257]: 'RS256',
  [-258]: 'RS384',
  [-259]: 'RS512',
  [-37]: 'PS256',
  [-38]: 'PS384',
  [-39]: 'PS512',
};

function bytes(map: Map<number, unknown>, label: number, what: string, size?: number): string {
  const value = map.get(label);
  if (!(value instanceof Uint8Array)) throw new TypeError(`COSE key: ${what} missing`);
  if (size !== undefined && value.length !== size) throw new TypeError(`COSE key: ${what} is ${value.length} bytes, not ${size}`);
  return Buffer.from(value).toString('base64url');
}

/**
 * A passkey's COSE_Key (as WebAuthn registration returns it and the team store keeps it) as a
 * public JWK: EC2 (P-256, P-384, P-521), OKP (Ed25519) and RSA. `alg` is kept when the key names
 * one, so a verifier knows which signature scheme to use; it is not part of the thumbprint.
 */
export function coseToJwk(cose: Uint8Array): JWK {
  let map: Map<number, unknown>;
  try {
    map = decodeCredentialPublicKey(new Uint8Array(cose)) as unknown as Map<number, unknown>;
  } catch {
    throw new TypeError('COSE key: not CBOR');
  }
  if (!(map instanceof Map)) throw new TypeError('COSE key: not a CBOR map');
  const alg = JOSE_ALGS[Number(map.get(ALG))];
  const withAlg = (jwk: JWK): JWK => (alg ? { ...jwk, alg } : jwk);
  const kty = map.get(KTY);
  if (kty === KTY_EC2) {
    const curve = EC2_CURVES[Number(map.get(CRV))];
    if (!curve) throw new TypeError(`COSE key: unsupported EC2 curve ${String(map.get(CRV))}`);
    return withAlg({ kty: 'EC', crv: curve.crv, x: bytes(map, X, 'x', curve.size), y: bytes(map, Y, 'y', curve.size) });
  }
  if (kty === KTY_OKP) {
    const curve = OKP_CURVES[Number(map.get(CRV))];
    if (!curve) throw new TypeError(`COSE key: unsupported OKP curve ${String(map.get(CRV))}`);
    return withAlg({ kty: 'OKP', crv: curve.crv, x: bytes(map, X, 'x', curve.size) });
  }
  if (kty === KTY_RSA) return withAlg({ kty: 'RSA', n: bytes(map, RSA_N, 'n'), e: bytes(map, RSA_E, 'e') });
  throw new TypeError(`COSE key: unsupported key type ${String(kty)}`);
}

/** Only the public members a JWK thumbprint and a verifier need: never a private `d` that slipped in. */
export function publicJwk(jwk: JWK): JWK {
  const keep = (names: readonly string[]): JWK => {
    const out: Record<string, unknown> = {};
    for (const name of names) {
      const value = (jwk as Record<string, unknown>)[name];
      if (typeof value !== 'string' || value === '') throw new TypeError(`JWK: ${name} missing`);
      out[name] = value;
    }
    if (typeof jwk.alg === 'string') out.alg = jwk.alg;
    return out as JWK;
  };
  if (jwk.kty === 'EC') return keep(['kty', 'crv', 'x', 'y']);
  if (jwk.kty === 'OKP') return keep(['kty', 'crv', 'x']);
  if (jwk.kty === 'RSA') return keep(['kty', 'n', 'e']);
  throw new TypeError(`JWK: unsupported key type ${String(jwk.kty)}`);
}

/**
 * The `key_id` of a passkey: the RFC 7638 JWK thumbprint (SHA-256, base64url) of its public key,
 * given as the stored COSE_Key bytes or as a JWK.
 */
export async function passkeyKeyId(key: Uint8Array | JWK): Promise<string> {
  const jwk = key instanceof Uint8Array ? coseToJwk(key) : publicJwk(key);
  return calculateJwkThumbprint(jwk, 'sha256');
}

/** The RFC 7638 thumbprint (SHA-256, base64url) of a public JWK: the key_id of a passkey given as a JWK. */
export function jwkThumbprint(jwk: JWK): Promise<string> {
  return passkeyKeyId(jwk);
}
