import { KeyObject, randomBytes, sign, verify, type webcrypto } from 'node:crypto';
import { createSignature, verifySignature } from 'http-message-sig';

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

/**
 * Web Bot Auth headers of an outgoing request (docs/verified-agents.md, Outbound): RFC 9421 over
 * `@authority` (the receiver's) and `signature-agent` (the service's origin, whose
 * /.well-known/http-message-signatures-directory publishes the key), tag `web-bot-auth`, a
 * five-minute window and a fresh nonce; keyid is the key's RFC 7638 thumbprint (the receipt kid).
 */
export async function webBotAuthHeaders(
  url: string,
  signatureAgent: string,
  key: { kid: string; privateKey: webcrypto.CryptoKey | KeyObject },
  now: Date,
): Promise<Record<string, string>> {
  const privateKey = key.privateKey instanceof KeyObject ? key.privateKey : KeyObject.from(key.privateKey);
  const agent = `"${signatureAgent}"`;
  const created = Math.floor(now.getTime() / 1000);
  const fields = await createSignature(
    { kind: 'request', method: 'POST', targetUri: url, fields: [{ name: 'signature-agent', value: agent }] },
    {
      label: 'sig1',
      components: ['@authority', 'signature-agent'],
      parameters: { created, expires: created + 300, keyid: key.kid, alg: 'ed25519', nonce: randomBytes(64).toString('base64'), tag: 'web-bot-auth' },
      signer: { algorithm: 'ed25519', sign: (data: Uint8Array) => sign(null, data, privateKey) },
    },
  );
  return { 'signature-agent': agent, signature: fields.signature, 'signature-input': fields.signatureInput };
}

/**
 * Whether a webhook's Web Bot Auth signature (webBotAuthHeaders) verifies with one of `keys` (by
 * kid), for the receiver's `authority` (its Host), within its window at `nowSeconds`.
 */
export async function verifyWebBotAuth(
  authority: string,
  headers: ReadonlyMap<string, string>,
  keys: ReadonlyMap<string, KeyObject>,
  nowSeconds: number,
): Promise<{ valid: boolean; reason: string }> {
  const fields = [...headers].map(([name, value]) => ({ name, value }));
  try {
    await verifySignature(
      { kind: 'request', method: 'POST', targetUri: `https://${authority}/`, fields },
      {
        policy: {
          algorithms: ['ed25519'],
          requiredComponents: ['@authority', 'signature-agent'],
          requiredParameters: ['created', 'expires', 'keyid', 'tag'],
          clockSkew: 30,
          now: nowSeconds,
        },
        resolveVerifier: (candidate) => {
          const key = keys.get(String(candidate.parameters.keyid));
          if (key === undefined || candidate.parameters.tag !== 'web-bot-auth') throw new Error('unknown key or tag');
          return { algorithm: 'ed25519', verify: (data: Uint8Array, signature: Uint8Array) => verify(null, data, key, signature) };
        },
      },
    );
    return { valid: true, reason: 'Web Bot Auth (RFC 9421) Ed25519 signature verifies with a published key' };
  } catch (error) {
    return { valid: false, reason: `Web Bot Auth signature does not verify: ${error instanceof Error ? error.message : String(error)}` };
  }
}
