import { createHash, generateKeyPairSync } from 'node:crypto';
import { isoCBOR } from '@simplewebauthn/server/helpers';
import { calculateJwkThumbprint, type JWK } from 'jose';
import { describe, expect, it } from 'vitest';
import { approvalChallenge, approvalChallengeBase64url, coseToJwk, passkeyKeyId } from '../src/receipts/approval-challenge.js';

/**
 * The approval challenge and the passkey key_id, checked against values computed another way: the
 * canonical JSON written out by hand, RFC 7638's own example, and node:crypto's JWK export of keys
 * whose COSE form is built here the way an authenticator encodes it.
 */

const subject = {
  task_id: 'tsk_01JABCDEF',
  request_sha256: 'a'.repeat(64),
  deliverable_sha256: 'b'.repeat(64),
};

const b64u = (s: string) => Buffer.from(s, 'base64url');

function coseEc2(jwk: JWK): Uint8Array {
  return isoCBOR.encode(
    new Map<number, number | Uint8Array>([
      [1, 2],
      [3, -7],
      [-1, 1],
      [-2, b64u(jwk.x ?? '')],
      [-3, b64u(jwk.y ?? '')],
    ]),
  );
}

describe('approval challenge', () => {
  it('is the SHA-256 of the RFC 8785 JSON of exactly task_id, request_sha256 and deliverable_sha256', () => {
    const text = `{"deliverable_sha256":"${'b'.repeat(64)}","request_sha256":"${'a'.repeat(64)}","task_id":"tsk_01JABCDEF"}`;
    const expected = createHash('sha256').update(text, 'utf8').digest();
    const challenge = approvalChallenge(subject);
    expect(challenge).toHaveLength(32);
    expect(challenge.equals(expected)).toBe(true);
    expect(approvalChallengeBase64url(subject)).toBe(expected.toString('base64url'));
  });

  it('ignores other receipt fields, so a whole payload can be passed', () => {
    const payload = { ...subject, iss: 'https://x.example', receipt_version: 3, approvals: [] };
    expect(approvalChallenge(payload).equals(approvalChallenge(subject))).toBe(true);
  });

  it('changes with each of the three fields', () => {
    const base = approvalChallengeBase64url(subject);
    expect(approvalChallengeBase64url({ ...subject, task_id: 'tsk_other' })).not.toBe(base);
    expect(approvalChallengeBase64url({ ...subject, request_sha256: 'c'.repeat(64) })).not.toBe(base);
    expect(approvalChallengeBase64url({ ...subject, deliverable_sha256: 'c'.repeat(64) })).not.toBe(base);
  });

  it('canonicalizes non-ASCII task ids as UTF-8 (RFC 8785 leaves them unescaped)', () => {
    const text = `{"deliverable_sha256":"d","request_sha256":"r","task_id":"é"}`;
    const expected = createHash('sha256').update(text, 'utf8').digest();
    expect(approvalChallenge({ task_id: 'é', request_sha256: 'r', deliverable_sha256: 'd' }).equals(expected)).toBe(true);
  });
});

describe('passkey key_id (RFC 7638 thumbprint)', () => {
  it("matches RFC 7638's example for an RSA JWK", async () => {
    const rfc: JWK = {
      kty: 'RSA',
      n: '0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSoc_BJECPebWKRXjBZCiFV4n3oknjhMstn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-65YGjQR0_FDW2QvzqY368QQMicAtaSqzs8KJZgnYb9c7d0zgdAZHzu6qMQvRL5hajrn1n91CbOpbISD08qNLyrdkt-bFTWhAI4vMQFh6WeZu0fM4lFd2NcRwr3XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur-kEgU8awapJzKnqDKgw',
      e: 'AQAB',
      alg: 'RS256',
      kid: '2011-04-29',
    };
    expect(await passkeyKeyId(rfc)).toBe('NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs');
  });

  it('is the same for a P-256 passkey given as COSE or as JWK, and equals jose over the exported key', async () => {
    const { publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const jwk = publicKey.export({ format: 'jwk' }) as JWK;
    const cose = coseEc2(jwk);
    expect(coseToJwk(cose)).toEqual({ kty: 'EC', crv: 'P-256', x: jwk.x, y: jwk.y, alg: 'ES256' });
    const expected = await calculateJwkThumbprint({ kty: 'EC', crv: 'P-256', x: jwk.x, y: jwk.y });
    expect(await passkeyKeyId(cose)).toBe(expected);
    expect(await passkeyKeyId(jwk)).toBe(expected);
    expect(expected).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it('is the same for an Ed25519 passkey given as COSE or as JWK', async () => {
    const { publicKey } = generateKeyPairSync('ed25519');
    const jwk = publicKey.export({ format: 'jwk' }) as JWK;
    const cose = isoCBOR.encode(
      new Map<number, number | Uint8Array>([
        [1, 1],
        [3, -8],
        [-1, 6],
        [-2, b64u(jwk.x ?? '')],
      ]),
    );
    expect(coseToJwk(cose)).toEqual({ kty: 'OKP', crv: 'Ed25519', x: jwk.x, alg: 'EdDSA' });
    const expected = await calculateJwkThumbprint({ kty: 'OKP', crv: 'Ed25519', x: jwk.x });
    expect(await passkeyKeyId(cose)).toBe(expected);
    expect(await passkeyKeyId(jwk)).toBe(expected);
  });

  it('is the same for an RSA passkey given as COSE or as JWK', async () => {
    const { publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const jwk = publicKey.export({ format: 'jwk' }) as JWK;
    const cose = isoCBOR.encode(
      new Map<number, number | Uint8Array>([
        [1, 3],
        [3, -257],
        [-1, b64u(jwk.n ?? '')],
        [-2, b64u(jwk.e ?? '')],
      ]),
    );
    expect(coseToJwk(cose)).toEqual({ kty: 'RSA', n: jwk.n, e: jwk.e, alg: 'RS256' });
    expect(await passkeyKeyId(cose)).toBe(await passkeyKeyId(jwk));
  });

  it('ignores private and extra members of a JWK', async () => {
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const priv = privateKey.export({ format: 'jwk' }) as JWK;
    const { d: _d, ...pub } = priv;
    expect(await passkeyKeyId({ ...priv, kid: 'x', use: 'sig' })).toBe(await passkeyKeyId(pub));
  });
});
