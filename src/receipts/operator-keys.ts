import { SignJWT } from 'jose';
import { iso } from '../domain/time.js';
import type { Db } from '../store/db.js';
import { insertLeaf } from '../store/receipt-log/receipt-log-repo.js';
import { coseToJwk, passkeyKeyId } from './approval-challenge.js';
import type { OperatorKey } from './approval-verify.js';
import { activeSigningKey, RECEIPT_ALG } from './keys.js';

/**
 * The operators' passkeys as the public knows them (contract "Decisions by more than one person",
 * docs/approvals.md): each public key as a JWK, named by its RFC 7638 thumbprint and never by its
 * operator, so a receipt's approvals can be checked offline while the operators stay anonymous.
 */

const coseOf = (publicKey: string) => new Uint8Array(Buffer.from(publicKey, 'base64url'));

/** The key id of a passkey (its COSE key as stored: base64url); null for a key type no verifier knows. */
export async function storedPasskeyKeyId(publicKey: string): Promise<string | null> {
  try {
    return await passkeyKeyId(coseOf(publicKey));
  } catch {
    return null;
  }
}

/** A passkey row as /.well-known/operator-keys.json lists it; null when its key type cannot be published. */
export async function operatorKey(row: { public_key: string; created_at: string; removed_at: string | null }): Promise<OperatorKey | null> {
  let jwk: OperatorKey['jwk'];
  try {
    jwk = coseToJwk(coseOf(row.public_key));
  } catch {
    return null;
  }
  return { key_id: await passkeyKeyId(jwk), jwk, since: row.created_at, until: row.removed_at };
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
  await insertLeaf(trx, { taskId: null, data: jws, createdAt: iso(now) });
}
