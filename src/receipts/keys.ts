import { type CryptoKey, calculateJwkThumbprint, exportJWK, generateKeyPair, importJWK, type JWK } from 'jose';
import { iso } from '../domain/time.js';
import type { Db } from '../store/db.js';
import { ACTIVE_SLOT, activeKeyRow, insertActiveKeyIfNone, listKeyRows, replaceActiveKey } from '../store/signing-keys-repo.js';

/**
 * Receipt-signing keys (Ed25519), kept in the `signing_keys` table so every instance on one store
 * signs with the same key and publishes the same JWKS. The active key carries
 * `active_slot = 'active'` (unique, migration 020); a retired key keeps its public part, published
 * forever so old receipts keep verifying, and loses its private part, which nothing needs again.
 */

export const RECEIPT_ALG = 'EdDSA';

/** The public part of a key as /.well-known/jwks.json lists it. */
export interface PublicReceiptJwk {
  kty: string;
  crv: string;
  x: string;
  kid: string;
  alg: typeof RECEIPT_ALG;
  use: 'sig';
}

export interface ActiveKey {
  kid: string;
  privateKey: CryptoKey;
}

export interface KeyInfo {
  kid: string;
  created_at: string;
  retired_at: string | null;
  active: boolean;
}

interface GeneratedKey {
  kid: string;
  publicJwk: PublicReceiptJwk;
  privateJwk: JWK;
}

async function generateKey(): Promise<GeneratedKey> {
  const { publicKey, privateKey } = await generateKeyPair(RECEIPT_ALG, { crv: 'Ed25519', extractable: true });
  const pub = await exportJWK(publicKey);
  // RFC 7638 thumbprint over the required members (crv, kty, x): stable, and derivable by anyone.
  const kid = await calculateJwkThumbprint(pub, 'sha256');
  const publicJwk: PublicReceiptJwk = { kty: pub.kty ?? 'OKP', crv: pub.crv ?? 'Ed25519', x: pub.x ?? '', kid, alg: RECEIPT_ALG, use: 'sig' };
  return { kid, publicJwk, privateJwk: { ...(await exportJWK(privateKey)), kid, alg: RECEIPT_ALG } };
}

/** The row of a freshly generated key that becomes the active one. */
function activeKeyValues(key: Awaited<ReturnType<typeof generateKey>>, now: Date) {
  return {
    kid: key.kid,
    public_jwk: JSON.stringify(key.publicJwk),
    private_jwk: JSON.stringify(key.privateJwk),
    created_at: iso(now),
    retired_at: null,
    active_slot: ACTIVE_SLOT,
  };
}

/**
 * Makes sure one key is active, creating it when none is. Safe when several instances start at
 * once: the unique active slot lets one insert win; the others find the winner.
 */
export async function ensureActiveKey(db: Db, now: Date): Promise<string> {
  const existing = await activeKeyRow(db);
  if (existing) return existing.kid;
  await insertActiveKeyIfNone(db, activeKeyValues(await generateKey(), now));
  const winner = await activeKeyRow(db);
  if (!winner) throw new Error('No active receipt-signing key after creating one');
  return winner.kid;
}

/** Retires the active key (its public part stays published) and activates a new one, atomically. */
export async function rotateKeys(db: Db, now: Date): Promise<{ retired: string | null; active: string }> {
  const key = await generateKey();
  const retired = await replaceActiveKey(db, activeKeyValues(key, now), iso(now));
  return { retired, active: key.kid };
}

// Imported CryptoKeys by kid: a kid is the thumbprint of its key, so an entry can never go stale.
const imported = new Map<string, CryptoKey>();

/** The key that signs receipts now; read from the store each time so a rotation elsewhere takes effect. */
export async function activeSigningKey(db: Db, now: Date): Promise<ActiveKey> {
  let row = await activeKeyRow(db);
  if (!row) {
    await ensureActiveKey(db, now);
    row = await activeKeyRow(db);
  }
  if (!row) throw new Error('No active receipt-signing key');
  let privateKey = imported.get(row.kid);
  if (!privateKey) {
    const key = await importJWK(JSON.parse(row.private_jwk) as JWK, RECEIPT_ALG);
    if (key instanceof Uint8Array) throw new Error('Receipt-signing key is not an asymmetric key');
    privateKey = key;
    imported.set(row.kid, privateKey);
  }
  return { kid: row.kid, privateKey };
}

/** Every key's public part, active first then newest first: the content of /.well-known/jwks.json. */
export async function publicKeys(db: Db): Promise<PublicReceiptJwk[]> {
  const rows = await listKeyRows(db);
  rows.sort((a, b) => Number(b.active_slot === ACTIVE_SLOT) - Number(a.active_slot === ACTIVE_SLOT));
  return rows.map((row) => JSON.parse(row.public_jwk) as PublicReceiptJwk);
}

export async function listKeys(db: Db): Promise<KeyInfo[]> {
  const rows = await listKeyRows(db);
  return rows.map((row) => ({ kid: row.kid, created_at: row.created_at, retired_at: row.retired_at, active: row.active_slot === ACTIVE_SLOT }));
}
