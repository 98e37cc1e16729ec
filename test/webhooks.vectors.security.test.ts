import { createPublicKey, type JsonWebKey } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { verifyWebhookSignature } from '../src/webhooks/sign.js';

/**
 * The server's own webhook signature check agrees with every webhook case of
 * docs/receipt-test-vectors.json (the timestamp tolerance is the receiver's part, not the signature's).
 */

interface WebhookVector {
  name: string;
  headers: Record<string, string>;
  body: string;
  expected: { valid: boolean; failure: string | null };
}

const vectors = JSON.parse(readFileSync(new URL('../docs/receipt-test-vectors.json', import.meta.url), 'utf8')) as {
  jwks: { keys: JsonWebKey[] };
  webhooks: WebhookVector[];
};
const keys = vectors.jwks.keys.map((jwk) => createPublicKey({ key: jwk, format: 'jwk' }));

describe('webhook test vectors against src/webhooks/sign.ts', () => {
  for (const v of vectors.webhooks) {
    const signed = v.expected.failure !== 'signature';
    it(`${v.name}: the signature ${signed ? 'verifies' : 'does not verify'}`, () => {
      expect(
        verifyWebhookSignature(v.headers['webhook-id'] ?? '', v.headers['webhook-timestamp'] ?? '', v.body, v.headers['webhook-signature'] ?? '', keys),
      ).toBe(signed);
    });
  }
});
