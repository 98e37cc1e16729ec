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

export function sha256Hex(text: string | Buffer): string {
  return createHash('sha256').update(text).digest('hex');
}
