import { SignJWT } from 'jose';
import type { Db } from '../store/db.js';
import { activeSigningKey, RECEIPT_ALG } from './keys.js';
import type { ReceiptPayload } from './payload.js';

/** Signs a receipt with the active key: compact JWS, header {alg: EdDSA, kid, typ: JWT}. */
export async function signReceipt(db: Db, payload: ReceiptPayload, now: Date): Promise<string> {
  const key = await activeSigningKey(db, now);
  // The payload carries its own iat (from the service clock), so nothing else is added to it.
  return new SignJWT({ ...payload }).setProtectedHeader({ alg: RECEIPT_ALG, kid: key.kid, typ: 'JWT' }).sign(key.privateKey);
}
