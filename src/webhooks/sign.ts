import { KeyObject, sign, verify, type webcrypto } from 'node:crypto';

/**
 * Standard Webhooks' asymmetric scheme: `webhook-signature: v1a,<base64 Ed25519 signature>` over
 * `<webhook-id>.<webhook-timestamp>.<raw body>`, with the service's receipt key (published in
 * /.well-known/jwks.json), since there are no accounts to share a secret with.
 */

export function signedContent(id: string, timestamp: string, body: string): Buffer {
  return Buffer.from(`${id}.${timestamp}.${body}`, 'utf8');
}

export function signWebhook(id: string, timestamp: string, body: string, privateKey: webcrypto.CryptoKey | KeyObject): string {
  const key = privateKey instanceof KeyObject ? privateKey : KeyObject.from(privateKey);
  return `v1a,${sign(null, signedContent(id, timestamp, body), key).toString('base64')}`;
}

/**
 * True when one of the space-separated `v1a,` signatures of the header verifies with one of the
 * keys (a receiver tries every published key: the key may have been rotated since).
 */
export function verifyWebhookSignature(id: string, timestamp: string, body: string, header: string, publicKeys: readonly KeyObject[]): boolean {
  const content = signedContent(id, timestamp, body);
  for (const entry of header.trim().split(/\s+/)) {
    const [version, value] = entry.split(',', 2);
    if (version !== 'v1a' || value === undefined || value === '') continue;
    const signature = Buffer.from(value, 'base64');
    if (signature.length !== 64) continue;
    if (publicKeys.some((key) => verify(null, content, key, signature))) return true;
  }
  return false;
}
