import { cose, decodeCredentialPublicKey } from '@simplewebauthn/server/helpers';
import { type JWK, SignJWT } from 'jose';
import type { Db } from '../store/db.js';
import { insertLeaf } from '../store/receipt-log/receipt-log-repo.js';
import { jwkThumbprint } from './approval-challenge.js';
import { activeSigningKey, RECEIPT_ALG } from './keys.js';

/**
 * The operators' passkeys as the public knows them (contract "Decisions by more than one person",
 * docs/approvals.md): each public key as a JWK, named by its RFC 7638 thumbprint and never by its
 * operator, so a receipt's approvals can be checked offline while the operators stay anonymous.
 */

const b64 = (bytes: Uint8Array | undefined): string => Buffer.from(bytes ?? new Uint8Array()).toString('base64url');

const EC_CURVES: Record<number, string> = { 1: 'P-256', 2: 'P-384', 3: 'P-521' };
const OKP_CURVES: Record<number, string> = { 6: 'Ed25519' };

/** The JWK of a passkey's COSE public key (as stored: base64url); null for a key type no verifier knows. */
export function passkeyJwk(publicKey: string): JWK | null {
  const key = decodeCredentialPublicKey(new Uint8Array(Buffer.from(publicKey, 'base64url')));
  if (cose.isCOSEPublicKeyEC2(key)) {
    const crv = EC_CURVES[key.get(cose.COSEKEYS.crv) ?? 0];
    return crv ? { kty: 'EC', crv, x: b64(key.get(cose.COSEKEYS.x)), y: b64(key.get(cose.COSEKEYS.y)) } : null;
  }
  if (cose.isCOSEPublicKeyOKP(key)) {
    const crv = OKP_CURVES[key.get(cose.COSEKEYS.crv) ?? 0];
    return crv ? { kty: 'OKP', crv, x: b64(key.get(cose.COSEKEYS.x)) } : null;
  }
  if (cose.isCOSEPublicKeyRSA(key)) return { kty: 'RSA', n: b64(key.get(cose.COSEKEYS.n)), e: b64(key.get(cose.COSEKEYS.e)) };
  return null;
}

/** The key id of a passkey: the thumbprint of its JWK; null for a key type no verifier knows. */
export async function passkeyKeyId(publicKey: string): Promise<string | null> {
  const jwk = passkeyJwk(publicKey);
  return jwk ? jwkThumbprint(jwk) : null;
}

export interface OperatorKey {
  key_id: string;
  jwk: JWK;
  since: string;
  until: string | null;
}

/** A passkey row as /.well-known/operator-keys.json lists it; null when its key type cannot be published. */
export async function operatorKey(row: { public_key: string; created_at: string; removed_at: string | null }): Promise<OperatorKey | null> {
  const jwk = passkeyJwk(row.public_key);
  if (!jwk) return null;
  return { key_id: await jwkThumbprint(jwk), jwk, since: row.created_at, until: row.removed_at };
}

/**
 * Appends the `operator_key` leaf of a passkey added or removed to the public receipt log, in the
 * caller's transaction (docs/receipt-log.md): a compact JWS signed with the receipt key whose
 * payload is the key as operator-keys.json lists it at that moment. A history rewritten later (a
 * key's `since` moved back, a removal hidden) contradicts the log.
 */
export async function appendOperatorKeyLeaf(trx: Db, issuer: string, key: OperatorKey, now: Date): Promise<void> {
  const signing = await activeSigningKey(trx, now);
  const jws = await new SignJWT({ kind: 'operator_key', iss: issuer, iat: Math.floor(now.getTime() / 1000), ...key })
    .setProtectedHeader({ alg: RECEIPT_ALG, kid: signing.kid, typ: 'JWT' })
    .sign(signing.privateKey);
  await insertLeaf(trx, { taskId: null, data: jws, createdAt: now.toISOString() });
}
