import { FlattenedSign, SignJWT } from 'jose';
import type { Db } from '../store/db.js';
import { activeSigningKey, RECEIPT_ALG } from './keys.js';
import type { ReceiptPayload } from './payload.js';

/** Signs a receipt with the active key: compact JWS, header {alg: EdDSA, kid, typ: JWT}. */
export async function signReceipt(db: Db, payload: ReceiptPayload, now: Date): Promise<string> {
  const key = await activeSigningKey(db, now);
  // The payload carries its own iat (from the service clock), so nothing else is added to it.
  return new SignJWT({ ...payload }).setProtectedHeader({ alg: RECEIPT_ALG, kid: key.kid, typ: 'JWT' }).sign(key.privateKey);
}

/** A detached JWS (RFC 7515, appendix F): the protected header and signature, without the payload. */
export interface DetachedSignature {
  protected: string;
  signature: string;
}

/**
 * Signs `payload` with the active receipt key as a detached JWS (the A2A agent card's
 * `signatures`): the header carries alg, kid and `jku` (where the key is published), so a
 * verifier finds the key in the same JWKS as for receipts.
 */
export async function signDetached(db: Db, payload: string, now: Date, header: { typ?: string; jku?: string } = {}): Promise<DetachedSignature> {
  const key = await activeSigningKey(db, now);
  const jws = await new FlattenedSign(new TextEncoder().encode(payload)).setProtectedHeader({ ...header, alg: RECEIPT_ALG, kid: key.kid }).sign(key.privateKey);
  return { protected: jws.protected ?? '', signature: jws.signature };
}
