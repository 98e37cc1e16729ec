/** Byte helpers on Web APIs only (TextEncoder, WebCrypto, atob): the library runs outside Node too. */

export const utf8 = (text: string): Uint8Array => new TextEncoder().encode(text);

export async function sha256Hex(data: Uint8Array): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', data as Uint8Array<ArrayBuffer>));
  return Array.from(digest, (b) => b.toString(16).padStart(2, '0')).join('');
}

/** Standard base64 (with padding) to bytes; null when it is not base64. */
export function fromBase64(text: string): Uint8Array | null {
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text) || text.length % 4 !== 0) return null;
  const binary = atob(text);
  return Uint8Array.from(binary, (c) => c.charCodeAt(0));
}

/** base64url without padding (JWS, RFC 7515) to bytes; null when it is not base64url. */
export function fromBase64Url(text: string): Uint8Array | null {
  if (!/^[A-Za-z0-9_-]*$/.test(text) || text.length % 4 === 1) return null;
  const standard = text.replaceAll('-', '+').replaceAll('_', '/');
  return fromBase64(standard.padEnd(standard.length + ((4 - (standard.length % 4)) % 4), '='));
}

export function toBytes(data: Uint8Array | ArrayBuffer | string): Uint8Array {
  if (typeof data === 'string') return utf8(data);
  return data instanceof Uint8Array ? data : new Uint8Array(data);
}

/** Bytes to base64url without padding (JWS, WebAuthn). */
export function toBase64Url(bytes: Uint8Array): string {
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replaceAll('+', '-').replaceAll('/', '_').replace(/=+$/, '');
}
