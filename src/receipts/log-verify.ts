import { createHash, createPublicKey, verify } from 'node:crypto';
import { HASH_SIZE, leafHash, nodeHash, rootFromInclusion } from './merkle.js';
import { checkTimestamp, parsePemCertificates } from './tsa.js';

/**
 * Checks that a receipt is in the public log, offline, from what anyone can hold: the C2SP
 * tlog-proof (`GET /api/v1/tasks/{task_id}/receipt-proof`) and the log's verifier key
 * (`/log/vkey`). Each check says what failed, so a changed byte is named by the part it is in:
 * the proof's lines, the checkpoint's signature, or the path from the receipt to the signed root.
 */

export interface LogCheck {
  name: 'log_proof' | 'log_checkpoint' | 'log_inclusion' | 'log_timestamp' | 'log_consistency';
  ok: boolean;
  detail: string;
}

export interface ParsedCheckpoint {
  origin: string;
  size: number;
  root: Buffer;
  body: string;
  signatures: { name: string; raw: Buffer }[];
}

export function parseCheckpointNote(note: string): ParsedCheckpoint {
  const split = note.indexOf('\n\n');
  if (split < 0) throw new Error('no blank line between the checkpoint and its signatures');
  const body = note.slice(0, split + 1);
  const [origin = '', size = '', root = ''] = body.split('\n');
  if (origin === '') throw new Error('the checkpoint names no origin');
  if (!/^(0|[1-9][0-9]*)$/.test(size)) throw new Error(`the checkpoint's tree size "${size.slice(0, 40)}" is not a decimal number`);
  const rootBytes = Buffer.from(root, 'base64');
  if (rootBytes.length !== HASH_SIZE || rootBytes.toString('base64') !== root) throw new Error("the checkpoint's root hash is not 32 bytes of base64");
  const signatures = note
    .slice(split + 2)
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => {
      const match = /^\u2014 (\S+) ([A-Za-z0-9+/]+=*)$/.exec(line);
      if (!match) throw new Error(`not a signature line: "${line.slice(0, 60)}"`);
      return { name: match[1] as string, raw: Buffer.from(match[2] as string, 'base64') };
    });
  return { origin, size: Number(size), root: rootBytes, body, signatures };
}

/** Whether `checkpoint` carries a valid Ed25519 signature by the signed-note verifier key `vkey`. */
export function signedByVkey(checkpoint: ParsedCheckpoint, vkey: string): { ok: boolean; detail: string } {
  const [name = '', hashHex = '', ...rest] = vkey.trim().split('+');
  const key = Buffer.from(rest.join('+'), 'base64');
  if (key.length !== 33 || key[0] !== 0x01) return { ok: false, detail: 'the verifier key is not an Ed25519 signed-note key' };
  const keyHash = createHash('sha256').update(`${name}\n`).update(key).digest().subarray(0, 4);
  if (keyHash.toString('hex') !== hashHex) return { ok: false, detail: "the verifier key's hash does not match its name and key" };
  if (checkpoint.origin !== name) return { ok: false, detail: `the checkpoint is of log ${checkpoint.origin}, the key of ${name}` };
  const publicKey = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: key.subarray(1).toString('base64url') }, format: 'jwk' });
  const line = checkpoint.signatures.find((s) => s.name === name && s.raw.subarray(0, 4).equals(keyHash));
  if (!line) return { ok: false, detail: `no signature by ${name} (key hash ${hashHex})` };
  const ok = line.raw.length === 68 && verify(null, Buffer.from(checkpoint.body, 'utf8'), publicKey, line.raw.subarray(4));
  return {
    ok,
    detail: ok ? `signed by ${name} (key ${hashHex}), tree size ${checkpoint.size}` : `the signature by ${name} does not verify: the checkpoint was changed`,
  };
}

export interface ParsedProof {
  extra: string | null;
  index: number;
  hashes: Buffer[];
  checkpoint: string;
}

export function parseTlogProof(text: string): ParsedProof {
  const lines = text.split('\n');
  if (lines[0] !== 'c2sp.org/tlog-proof@v1') throw new Error('the first line is not c2sp.org/tlog-proof@v1');
  let at = 1;
  let extra: string | null = null;
  if (lines[at]?.startsWith('extra ')) extra = (lines[at++] as string).slice(6);
  const index = /^index (0|[1-9][0-9]*)$/.exec(lines[at] ?? '');
  if (!index) throw new Error(`line ${at + 1} is not "index <n>"`);
  return { extra, index: Number(index[1]), ...hashesThenCheckpoint(lines, at + 1) };
}

/** Base64 hash lines from `at` up to a blank line, then the checkpoint (tlog-proof and tlog-consistency alike). */
function hashesThenCheckpoint(lines: string[], from: number): { hashes: Buffer[]; checkpoint: string } {
  let at = from;
  const hashes: Buffer[] = [];
  for (; at < lines.length && lines[at] !== ''; at++) {
    const hash = Buffer.from(lines[at] as string, 'base64');
    if (hash.length !== HASH_SIZE || hash.toString('base64') !== lines[at]) throw new Error(`line ${at + 1} is not a base64 SHA-256 hash`);
    hashes.push(hash);
  }
  if (at >= lines.length) throw new Error('no blank line before the checkpoint');
  return { hashes, checkpoint: lines.slice(at + 1).join('\n') };
}

/** Every check of a receipt against its log proof and the log's verifier key. */
export function verifyLogProof(receipt: string, proofText: string, vkey: string): LogCheck[] {
  let proof: ParsedProof;
  let checkpoint: ParsedCheckpoint;
  try {
    proof = parseTlogProof(proofText);
    checkpoint = parseCheckpointNote(proof.checkpoint);
  } catch (error) {
    return [{ name: 'log_proof', ok: false, detail: `not a C2SP tlog-proof: ${error instanceof Error ? error.message : String(error)}` }];
  }
  const checks: LogCheck[] = [{ name: 'log_proof', ok: true, detail: `tlog-proof for leaf ${proof.index}, ${proof.hashes.length} hashes` }];
  const signed = signedByVkey(checkpoint, vkey);
  checks.push({ name: 'log_checkpoint', ...signed });
  const root = rootFromInclusion(proof.index, checkpoint.size, leafHash(Buffer.from(receipt.trim(), 'utf8')), proof.hashes);
  const included = root?.equals(checkpoint.root) ?? false;
  checks.push({
    name: 'log_inclusion',
    ok: included,
    detail: included
      ? `logged at position ${proof.index} of the public log (tree size ${checkpoint.size})`
      : `the receipt at index ${proof.index} does not lead to the checkpoint's root: the receipt or a proof hash was changed`,
  });
  return checks;
}

/**
 * RFC 9162 section 2.1.4.2: whether `proof` shows the tree (oldSize, oldRoot) is a prefix of (newSize, newRoot).
 * The TypeScript client has the same check (`verifyConsistencyProof` in clients/typescript/src/log.ts,
 * async on WebCrypto): kept twice on purpose, since nothing in src imports the client package (it is
 * published apart, dependency-free) and the service's verifier works on Buffers with node:crypto.
 */
export function consistent(oldSize: number, oldRoot: Buffer, newSize: number, newRoot: Buffer, proof: Buffer[]): boolean {
  if (oldSize > newSize) return false;
  if (oldSize === newSize) return proof.length === 0 && oldRoot.equals(newRoot);
  if (oldSize === 0) return proof.length === 0;
  if (proof.length === 0) return false;
  const path = (oldSize & (oldSize - 1)) === 0 ? [oldRoot, ...proof] : proof;
  let fn = oldSize - 1;
  let sn = newSize - 1;
  while (fn % 2 === 1) {
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  let fr = path[0] as Buffer;
  let sr = path[0] as Buffer;
  for (const c of path.slice(1)) {
    if (sn === 0) return false;
    if (fn % 2 === 1 || fn === sn) {
      fr = nodeHash(c, fr);
      sr = nodeHash(c, sr);
      while (fn % 2 === 0 && fn !== 0) {
        fn = Math.floor(fn / 2);
        sn = Math.floor(sn / 2);
      }
    } else {
      sr = nodeHash(sr, c);
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  return sn === 0 && fr.equals(oldRoot) && sr.equals(newRoot);
}

/** Parses `tlog-consistency@v1` (GET /log/consistency?from=N). */
export function parseConsistencyProof(text: string): { old: number; hashes: Buffer[]; checkpoint: string } {
  const lines = text.split('\n');
  if (lines[0] !== 'tlog-consistency@v1') throw new Error('the first line is not tlog-consistency@v1');
  const old = /^old (0|[1-9][0-9]*)$/.exec(lines[1] ?? '');
  if (!old) throw new Error('line 2 is not "old <size>"');
  return { old: Number(old[1]), ...hashesThenCheckpoint(lines, 2) };
}

/**
 * Checks that the log only grew since `oldNote` (a checkpoint the verifier kept): both signed by
 * the key, and the consistency proof leads from the old root to the new one. `newNote` is the
 * checkpoint the receipt's proof is against; the consistency proof must end at it too.
 */
export function verifyConsistency(oldNote: string, consistencyText: string, vkey: string, newNote?: string): LogCheck {
  const fail = (detail: string): LogCheck => ({ name: 'log_consistency', ok: false, detail });
  let old: ParsedCheckpoint;
  let proof: ReturnType<typeof parseConsistencyProof>;
  let current: ParsedCheckpoint;
  try {
    old = parseCheckpointNote(oldNote);
  } catch (error) {
    return fail(`the older checkpoint is not a checkpoint: ${error instanceof Error ? error.message : String(error)}`);
  }
  const oldSigned = signedByVkey(old, vkey);
  if (!oldSigned.ok) return fail(`the older checkpoint: ${oldSigned.detail}`);
  try {
    proof = parseConsistencyProof(consistencyText);
    current = parseCheckpointNote(proof.checkpoint);
  } catch (error) {
    return fail(`not a consistency proof: ${error instanceof Error ? error.message : String(error)}`);
  }
  const signed = signedByVkey(current, vkey);
  if (!signed.ok) return fail(`the consistency proof's checkpoint: ${signed.detail}`);
  if (newNote !== undefined && proof.checkpoint !== newNote) return fail("the consistency proof ends at another checkpoint than the receipt's proof");
  if (proof.old !== old.size) return fail(`the consistency proof starts at size ${proof.old}, the older checkpoint has ${old.size}`);
  if (old.size > current.size) return fail(`the log shrank from ${old.size} to ${current.size} leaves: it was rolled back or forked`);
  if (!consistent(old.size, old.root, current.size, current.root, proof.hashes)) {
    return fail(
      `the tree of ${current.size} leaves does not extend the older checkpoint of ${old.size}: the log was forked or rewritten (or a proof hash changed)`,
    );
  }
  return { name: 'log_consistency', ok: true, detail: `the log only grew: ${old.size} → ${current.size} leaves` };
}

/**
 * The RFC 3161 token on a proof's extra line: its imprint is SHA-256 of the checkpoint as served,
 * its CMS signature verifies (pkijs), and with CA certificates (PEM) its chain leads to one.
 */
export async function verifyTimestamp(extra: string, checkpointNote: string, caPem?: string): Promise<LogCheck> {
  try {
    const trusted = caPem === undefined ? [] : parsePemCertificates(caPem);
    await checkTimestamp(Buffer.from(extra, 'base64'), Buffer.from(checkpointNote, 'utf8'), trusted);
    return {
      name: 'log_timestamp',
      ok: true,
      detail: `RFC 3161 token over the checkpoint: signature verifies${caPem === undefined ? ' (chain not checked: pass --tsa-ca)' : ', chain to the given CA'}`,
    };
  } catch (error) {
    return { name: 'log_timestamp', ok: false, detail: error instanceof Error ? error.message : String(error) };
  }
}
