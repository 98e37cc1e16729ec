import { describe, expect, it } from 'vitest';
import { consistent } from '../../../src/receipts/log-verify.js';
import { consistencyProof, leafHash, nodeHash, rootHash } from '../../../src/receipts/merkle.js';
import { verifyConsistencyProof } from '../src/log.js';

/**
 * The RFC 9162 consistency check is written twice, in the service's verifier (Buffers,
 * node:crypto) and in the dependency-free client (WebCrypto): both must reach the same verdict on
 * every proof of trees up to 33 leaves, and on the same proofs with one hash, a root or a size
 * changed (every valid proof accepted, every changed hash or root refused).
 */

const LEAVES = 33;
const leaves = Array.from({ length: LEAVES }, (_, i) => leafHash(Buffer.from(`leaf ${i}`)));
const nodes = new Map<string, Buffer>();
const node = (level: number, index: number): Buffer => {
  const key = `${level}/${index}`;
  let hash = nodes.get(key);
  if (!hash) {
    hash = level === 0 ? (leaves[index] as Buffer) : nodeHash(node(level - 1, 2 * index), node(level - 1, 2 * index + 1));
    nodes.set(key, hash);
  }
  return hash;
};
const flip = (b: Buffer) => {
  const out = Buffer.from(b);
  out[0] = (out[0] ?? 0) ^ 1;
  return out;
};

describe('the service and the TypeScript client agree on consistency proofs', () => {
  it('for every pair of sizes up to 33 leaves, valid and changed', async () => {
    let checked = 0;
    for (let n = 1; n <= LEAVES; n++) {
      for (let m = 0; m <= n; m++) {
        const proof = m === 0 ? [] : consistencyProof(m, n, node);
        const [oldRoot, newRoot] = [rootHash(m, node), rootHash(n, node)];
        const cases: [number, Buffer, number, Buffer, Buffer[], boolean | null][] = [[m, oldRoot, n, newRoot, proof, true]];
        if (m > 0 && m < n) {
          cases.push([m, flip(oldRoot), n, newRoot, proof, false], [m, oldRoot, n, flip(newRoot), proof, false]);
          for (let i = 0; i < proof.length; i++) cases.push([m, oldRoot, n, newRoot, proof.map((h, j) => (j === i ? flip(h) : h)), false]);
          // Another size: a proof's hashes carry no size, so some of these verify (a leaf read as a node); both must agree.
          cases.push([m, oldRoot, n, newRoot, proof.slice(0, -1), false], [m, oldRoot, n + 1, newRoot, proof, null], [m + 1, oldRoot, n, newRoot, proof, null]);
        }
        for (const c of cases) {
          const [a, ra, b, rb, p, expected] = c;
          const service = consistent(a, ra, b, rb, p);
          expect(await verifyConsistencyProof(a, ra, b, rb, p), `${a}→${b}`).toBe(service);
          if (expected !== null) expect(service, `${a}→${b}`).toBe(expected);
          checked++;
        }
      }
    }
    expect(checked).toBeGreaterThan(1000);
  });
});
