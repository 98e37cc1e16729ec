import { createHash } from 'node:crypto';

/**
 * RFC 9162 (section 2.1) Merkle tree arithmetic over a log whose complete subtrees are stored:
 * node (level, index) is the hash of leaves [index * 2^level, (index + 1) * 2^level). Pure: the
 * functions ask a `NodeSource` for the stored nodes they need, so a caller can first learn which
 * nodes a computation reads (`neededNodes`), fetch them in one query, then compute.
 */

export const HASH_SIZE = 32;

export function leafHash(data: Uint8Array): Buffer {
  return createHash('sha256').update(Buffer.of(0)).update(data).digest();
}

export function nodeHash(left: Uint8Array, right: Uint8Array): Buffer {
  return createHash('sha256').update(Buffer.of(1)).update(left).update(right).digest();
}

/** MTH of the empty tree: SHA-256 of the empty string. */
export const EMPTY_ROOT = createHash('sha256').digest();

export type NodeSource = (level: number, index: number) => Buffer;

export function nodeKey(level: number, index: number): string {
  return `${level}/${index}`;
}

/** The largest power of two smaller than n (n > 1). */
function splitPoint(n: number): number {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

function log2(n: number): number {
  return Math.round(Math.log2(n));
}

function isPowerOfTwo(n: number): boolean {
  return n > 0 && 2 ** log2(n) === n;
}

/** MTH(D[start:end]) from stored complete subtrees (start is aligned as RFC 9162's recursion makes it). */
export function rangeHash(start: number, end: number, node: NodeSource): Buffer {
  const n = end - start;
  if (isPowerOfTwo(n) && start % n === 0) return node(log2(n), start / n);
  const k = splitPoint(n);
  return nodeHash(rangeHash(start, start + k, node), rangeHash(start + k, end, node));
}

/** The root hash of the tree of `size` leaves. */
export function rootHash(size: number, node: NodeSource): Buffer {
  return size === 0 ? EMPTY_ROOT : rangeHash(0, size, node);
}

/** RFC 9162 PATH(m, D[0:size]): the inclusion proof of leaf m, from the leaf's sibling up. */
export function inclusionProof(index: number, size: number, node: NodeSource): Buffer[] {
  const path: Buffer[] = [];
  const walk = (m: number, start: number, end: number): void => {
    const n = end - start;
    if (n <= 1) return;
    const k = splitPoint(n);
    if (m < k) {
      walk(m, start, start + k);
      path.push(rangeHash(start + k, end, node));
    } else {
      walk(m - k, start + k, end);
      path.push(rangeHash(start, start + k, node));
    }
  };
  walk(index, 0, size);
  return path;
}

/** RFC 9162 PROOF(m, D[0:size]): the consistency proof from the tree of `old` leaves to `size`. */
export function consistencyProof(old: number, size: number, node: NodeSource): Buffer[] {
  const proof: Buffer[] = [];
  if (old === 0 || old >= size) return proof;
  const sub = (m: number, start: number, end: number, whole: boolean): void => {
    const n = end - start;
    if (m === n) {
      if (!whole) proof.push(rangeHash(start, end, node));
      return;
    }
    const k = splitPoint(n);
    if (m <= k) {
      sub(m, start, start + k, whole);
      proof.push(rangeHash(start + k, end, node));
    } else {
      sub(m - k, start + k, end, false);
      proof.push(rangeHash(start, start + k, node));
    }
  };
  sub(old, 0, size, true);
  return proof;
}

/** The stored nodes `compute` reads, found by running it against a source that records. */
export function neededNodes(compute: (node: NodeSource) => unknown): { level: number; index: number }[] {
  const seen = new Map<string, { level: number; index: number }>();
  compute((level, index) => {
    seen.set(nodeKey(level, index), { level, index });
    return Buffer.alloc(HASH_SIZE);
  });
  return [...seen.values()];
}

/** A NodeSource over fetched nodes; a node missing from them is a broken store, not a bad request. */
export function sourceOf(nodes: Map<string, Buffer>): NodeSource {
  return (level, index) => {
    const hash = nodes.get(nodeKey(level, index));
    if (!hash) throw new Error(`receipt log: node ${nodeKey(level, index)} is missing`);
    return hash;
  };
}

/**
 * The nodes that appending `leafHashes` to a tree of `size` leaves completes, level by level, and
 * the existing nodes that computation reads (at most one per level: a left sibling).
 */
export function appendPlan(size: number, added: number): { reads: { level: number; index: number }[] } {
  const reads: { level: number; index: number }[] = [];
  for (let level = 1; 2 ** level <= size + added; level++) {
    const before = Math.floor(size / 2 ** level);
    const after = Math.floor((size + added) / 2 ** level);
    if (after > before && Math.floor(size / 2 ** (level - 1)) > 2 * before) reads.push({ level: level - 1, index: 2 * before });
  }
  return { reads };
}

/** Computes the nodes completed by appending leaves with `hashes` to a tree of `size` leaves. */
export function appendNodes(size: number, hashes: Buffer[], existing: NodeSource): { level: number; index: number; hash: Buffer }[] {
  const out: { level: number; index: number; hash: Buffer }[] = hashes.map((hash, i) => ({ level: 0, index: size + i, hash }));
  const fresh = new Map<string, Buffer>(out.map((n) => [nodeKey(n.level, n.index), n.hash]));
  const get = (level: number, index: number) => fresh.get(nodeKey(level, index)) ?? existing(level, index);
  const total = size + hashes.length;
  for (let level = 1; 2 ** level <= total; level++) {
    const before = Math.floor(size / 2 ** level);
    const after = Math.floor(total / 2 ** level);
    for (let index = before; index < after; index++) {
      const hash = nodeHash(get(level - 1, 2 * index), get(level - 1, 2 * index + 1));
      fresh.set(nodeKey(level, index), hash);
      out.push({ level, index, hash });
    }
  }
  return out;
}

/** RFC 9162 section 2.1.3.2: the root an inclusion proof leads to from `leaf`, or null when it cannot. */
export function rootFromInclusion(index: number, size: number, leaf: Buffer, proof: Buffer[]): Buffer | null {
  if (index >= size) return null;
  let fn = index;
  let sn = size - 1;
  let r = leaf;
  for (const p of proof) {
    if (sn === 0) return null;
    if (fn % 2 === 1 || fn === sn) {
      r = nodeHash(p, r);
      while (fn % 2 === 0 && fn !== 0) {
        fn = Math.floor(fn / 2);
        sn = Math.floor(sn / 2);
      }
    } else {
      r = nodeHash(r, p);
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  return sn === 0 ? r : null;
}
