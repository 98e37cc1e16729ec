import { createHash, createPublicKey, verify } from 'node:crypto';

/**
 * An independent checker of the public receipt log, written from RFC 9162 and the C2SP specs
 * (tlog-tiles, tlog-checkpoint, signed-note, tlog-proof) without any of the service's code: what a
 * third-party auditor would run.
 */

const sha256 = (...parts: Uint8Array[]) => {
  const h = createHash('sha256');
  for (const p of parts) h.update(p);
  return h.digest();
};
export const hashLeaf = (data: Uint8Array) => sha256(Buffer.of(0), data);
export const hashChildren = (l: Uint8Array, r: Uint8Array) => sha256(Buffer.of(1), l, r);

/** MTH(D[n]) of RFC 9162 section 2.1.1, by the recursive definition. */
export function merkleRoot(leaves: Buffer[]): Buffer {
  if (leaves.length === 0) return sha256();
  if (leaves.length === 1) return leaves[0] as Buffer;
  let k = 1;
  while (k * 2 < leaves.length) k *= 2;
  return hashChildren(merkleRoot(leaves.slice(0, k)), merkleRoot(leaves.slice(k)));
}

/** RFC 9162 section 2.1.3.2: verifies an inclusion proof, returning the computed root (or null). */
export function rootFromInclusion(index: number, size: number, leaf: Buffer, proof: Buffer[]): Buffer | null {
  if (index >= size) return null;
  let fn = index;
  let sn = size - 1;
  let r = leaf;
  for (const p of proof) {
    if (sn === 0) return null;
    if (fn % 2 === 1 || fn === sn) {
      r = hashChildren(p, r);
      if (fn % 2 === 0) {
        while (fn % 2 === 0 && fn !== 0) {
          fn = Math.floor(fn / 2);
          sn = Math.floor(sn / 2);
        }
      }
    } else {
      r = hashChildren(r, p);
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  return sn === 0 ? r : null;
}

export interface Checkpoint {
  origin: string;
  size: number;
  root: Buffer;
  extensions: string[];
  body: string;
  signatures: { name: string; keyHash: Buffer; signature: Buffer }[];
}

/** Parses a signed note holding a checkpoint (tlog-checkpoint, signed-note). */
export function parseCheckpoint(note: string): Checkpoint {
  const split = note.indexOf('\n\n');
  if (split < 0) throw new Error('no blank line before the signatures');
  const body = note.slice(0, split + 1);
  const lines = body.slice(0, -1).split('\n');
  const [origin = '', size = '', root = '', ...extensions] = lines;
  if (!/^(0|[1-9][0-9]*)$/.test(size)) throw new Error(`bad tree size ${size}`);
  const signatures = note
    .slice(split + 2)
    .split('\n')
    .filter((l) => l !== '')
    .map((line) => {
      const m = /^\u2014 (\S+) (\S+)$/.exec(line);
      if (!m) throw new Error(`bad signature line ${line}`);
      const raw = Buffer.from(m[2] as string, 'base64');
      return { name: m[1] as string, keyHash: raw.subarray(0, 4), signature: raw.subarray(4) };
    });
  return { origin, size: Number(size), root: Buffer.from(root, 'base64'), extensions, body, signatures };
}

/** Verifies a checkpoint's signature against a signed-note verifier key `<name>+<hex hash>+<base64 key>`. */
export function checkpointSignedBy(checkpoint: Checkpoint, vkey: string): boolean {
  // The key's base64 may itself hold '+': split at the first two only (a name holds none).
  const [name = '', hashHex = '', ...keyParts] = vkey.trim().split('+');
  const keyB64 = keyParts.join('+');
  const key = Buffer.from(keyB64, 'base64');
  if (key[0] !== 0x01 || key.length !== 33) return false;
  const expectedHash = sha256(Buffer.from(`${name}\n`), key).subarray(0, 4);
  if (expectedHash.toString('hex') !== hashHex) return false;
  const publicKey = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: key.subarray(1).toString('base64url') }, format: 'jwk' });
  return checkpoint.signatures.some(
    (s) => s.name === name && s.keyHash.equals(expectedHash) && s.signature.length === 64 && verify(null, Buffer.from(checkpoint.body), publicKey, s.signature),
  );
}

/** The tlog-tiles path of tile N: three-digit groups, all but the last prefixed with x. */
export function tilePath(level: number | 'entries', index: number, width?: number): string {
  let digits = String(index % 1000).padStart(3, '0');
  let rest = Math.floor(index / 1000);
  while (rest > 0) {
    digits = `x${String(rest % 1000).padStart(3, '0')}/${digits}`;
    rest = Math.floor(rest / 1000);
  }
  return `/log/tile/${level}/${digits}${width === undefined ? '' : `.p/${width}`}`;
}

/** Splits an entry bundle: big-endian uint16 length, then the entry. */
export function bundleEntries(bundle: Buffer): Buffer[] {
  const out: Buffer[] = [];
  let at = 0;
  while (at < bundle.length) {
    const length = bundle.readUInt16BE(at);
    out.push(bundle.subarray(at + 2, at + 2 + length));
    at += 2 + length;
  }
  return out;
}

/** Parses a c2sp.org/tlog-proof@v1. */
export function parseProof(text: string): { extra: string | null; index: number; proof: Buffer[]; checkpoint: string } {
  const lines = text.split('\n');
  if (lines[0] !== 'c2sp.org/tlog-proof@v1') throw new Error('not a tlog-proof');
  let at = 1;
  let extra: string | null = null;
  if (lines[at]?.startsWith('extra ')) extra = (lines[at++] as string).slice(6);
  const m = /^index (0|[1-9][0-9]*)$/.exec(lines[at++] ?? '');
  if (!m) throw new Error('no index line');
  const proof: Buffer[] = [];
  while (lines[at] !== '' && at < lines.length) proof.push(Buffer.from(lines[at++] as string, 'base64'));
  return { extra, index: Number(m[1]), proof, checkpoint: lines.slice(at + 1).join('\n') };
}

/**
 * Reads the whole log the way a tlog-tiles client does (entry bundles and level-0 tiles, full and
 * partial) and checks each entry against its leaf hash and the tree against the checkpoint's root.
 * Returns the entries and their leaf hashes.
 */
export async function readWholeLog(base: string, size: number): Promise<{ entries: Buffer[]; hashes: Buffer[] }> {
  const entries: Buffer[] = [];
  const hashes: Buffer[] = [];
  for (let n = 0; n * 256 < size; n++) {
    const width = Math.min(256, size - n * 256);
    const partial = width < 256 ? width : undefined;
    const [tile, bundle] = await Promise.all([fetch(`${base}${tilePath(0, n, partial)}`), fetch(`${base}${tilePath('entries', n, partial)}`)]);
    if (tile.status !== 200 || bundle.status !== 200) throw new Error(`tile ${n}: ${tile.status}/${bundle.status}`);
    const tileBytes = Buffer.from(await tile.arrayBuffer());
    const got = bundleEntries(Buffer.from(await bundle.arrayBuffer()));
    if (tileBytes.length !== width * 32 || got.length !== width)
      throw new Error(`tile ${n}: ${tileBytes.length / 32} hashes, ${got.length} entries, expected ${width}`);
    got.forEach((entry, i) => {
      const hash = tileBytes.subarray(i * 32, i * 32 + 32);
      if (!hashLeaf(entry).equals(hash)) throw new Error(`entry ${n * 256 + i} does not hash to its tile's leaf hash`);
      entries.push(entry);
      hashes.push(Buffer.from(hash));
    });
  }
  return { entries, hashes };
}
