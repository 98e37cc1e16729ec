import { isoCBOR } from '@simplewebauthn/server/helpers';
import type { JWK } from 'jose';
import { describe, expect, it } from 'vitest';
import { type ApprovalSubject, approvalChallenge, coseToJwk, passkeyKeyId } from '../src/receipts/approval-challenge.js';

/** Malformed inputs to the approval challenge and the key_id are refused by name, never hashed as something else. */

const cose = (entries: [number, number | Uint8Array][]) => isoCBOR.encode(new Map(entries));

describe('approval challenge: bad subjects', () => {
  it('refuses a missing or non-string field, naming it', () => {
    const good = { task_id: 't', request_sha256: 'r', deliverable_sha256: 'd' };
    for (const name of ['task_id', 'request_sha256', 'deliverable_sha256'] as const) {
      const { [name]: _gone, ...missing } = good;
      expect(() => approvalChallenge(missing as unknown as ApprovalSubject)).toThrow(name);
      expect(() => approvalChallenge({ ...good, [name]: 1 } as unknown as ApprovalSubject)).toThrow(name);
    }
  });
});

describe('passkey key_id: bad keys', () => {
  it('refuses bytes that are not CBOR, or not a map', async () => {
    await expect(passkeyKeyId(new Uint8Array([0xff, 0x00]))).rejects.toThrow('COSE key');
    await expect(passkeyKeyId(isoCBOR.encode(5))).rejects.toThrow('not a CBOR map');
  });

  it('refuses an unknown key type or curve', () => {
    expect(() => coseToJwk(cose([[1, 4]]))).toThrow('unsupported key type 4');
    expect(() =>
      coseToJwk(
        cose([
          [1, 2],
          [-1, 8],
          [-2, new Uint8Array(32)],
          [-3, new Uint8Array(32)],
        ]),
      ),
    ).toThrow('unsupported EC2 curve 8');
    expect(() =>
      coseToJwk(
        cose([
          [1, 1],
          [-1, 4],
          [-2, new Uint8Array(32)],
        ]),
      ),
    ).toThrow('unsupported OKP curve 4');
  });

  it('refuses a P-256 key with a missing or short coordinate', () => {
    expect(() =>
      coseToJwk(
        cose([
          [1, 2],
          [-1, 1],
          [-2, new Uint8Array(32)],
        ]),
      ),
    ).toThrow('y missing');
    expect(() =>
      coseToJwk(
        cose([
          [1, 2],
          [-1, 1],
          [-2, new Uint8Array(31)],
          [-3, new Uint8Array(32)],
        ]),
      ),
    ).toThrow('x is 31 bytes, not 32');
  });

  it('refuses a JWK without its required members', async () => {
    await expect(passkeyKeyId({ kty: 'EC', crv: 'P-256', x: 'AA' } as JWK)).rejects.toThrow('y missing');
    await expect(passkeyKeyId({ kty: 'oct', k: 'AA' } as JWK)).rejects.toThrow('unsupported key type oct');
  });
});
