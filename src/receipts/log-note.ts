import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject, sign } from 'node:crypto';
import type { Db } from '../store/db.js';
import { getOrCreateSetting } from '../store/settings-repo.js';

/**
 * The log's own Ed25519 key and its C2SP signed notes (c2sp.org/signed-note, c2sp.org/tlog-checkpoint).
 * The key is generated on first use and kept in the store (setting `receipt_log_key`), so every
 * instance signs with the same one; it never rotates: it is the log's identity, which verifiers pin.
 */

const SETTING = 'receipt_log_key';
/** Signed-note signature type of Ed25519. */
const ED25519 = 0x01;

export interface LogKey {
  /** The key name: the log's origin. */
  name: string;
  privateKey: KeyObject;
  /** The raw 32-byte public key. */
  publicKey: Buffer;
  /** The first four bytes of SHA-256(name || "\n" || 0x01 || public key). */
  keyHash: Buffer;
  /** `<name>+<hex key hash>+<base64(0x01 || public key)>`. */
  vkey: string;
}

/** The log's origin: BASE_URL's host (with a non-default port) followed by `/log`. */
export function logOrigin(baseUrl: string): string {
  return `${new URL(baseUrl).host}/log`;
}

export function keyHash(name: string, publicKey: Uint8Array): Buffer {
  return createHash('sha256').update(`${name}\n`).update(Buffer.of(ED25519)).update(publicKey).digest().subarray(0, 4);
}

function rawPublicKey(key: KeyObject): Buffer {
  const jwk = createPublicKey(key).export({ format: 'jwk' });
  return Buffer.from(jwk.x ?? '', 'base64url');
}

/** The log's key, created in the store the first time any instance needs it. */
export async function logKey(db: Db, origin: string): Promise<LogKey> {
  const pkcs8 = await getOrCreateSetting(db, SETTING, () =>
    generateKeyPairSync('ed25519').privateKey.export({ format: 'der', type: 'pkcs8' }).toString('base64'),
  );
  const privateKey = createPrivateKey({ key: Buffer.from(pkcs8, 'base64'), format: 'der', type: 'pkcs8' });
  const publicKey = rawPublicKey(privateKey);
  const hash = keyHash(origin, publicKey);
  return {
    name: origin,
    privateKey,
    publicKey,
    keyHash: hash,
    vkey: `${origin}+${hash.toString('hex')}+${Buffer.concat([Buffer.of(ED25519), publicKey]).toString('base64')}`,
  };
}

/** The checkpoint's note text: origin, tree size, base64 root hash, extension lines, each ending in a line feed. */
export function checkpointBody(origin: string, size: number, root: Uint8Array, extensions: string[] = []): string {
  return [origin, String(size), Buffer.from(root).toString('base64'), ...extensions].map((line) => `${line}\n`).join('');
}

/** The signed note: the text, a blank line, and the signature line `— <name> <base64(key hash || signature)>`. */
export function signNote(body: string, key: LogKey): string {
  const signature = sign(null, Buffer.from(body, 'utf8'), key.privateKey);
  return `${body}\n\u2014 ${key.name} ${Buffer.concat([key.keyHash, signature]).toString('base64')}\n`;
}
