import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';

// The package is CommonJS with ESM-style typings; load it the CommonJS way, typed by hand.
const canonicalize = createRequire(import.meta.url)('canonicalize') as (value: unknown) => string | undefined;

/** RFC 8785 canonical JSON. */
export function canonicalJson(value: unknown): string {
  const text = canonicalize(value);
  if (text === undefined) throw new TypeError('value cannot be canonicalized');
  return text;
}

/** SHA-256 of text (UTF-8) or bytes: the one digest of stored key hashes, request hashes and receipt bindings. */
export function sha256(data: string | Buffer): Buffer {
  return createHash('sha256').update(data).digest();
}

export function sha256Hex(data: string | Buffer): string {
  return sha256(data).toString('hex');
}
