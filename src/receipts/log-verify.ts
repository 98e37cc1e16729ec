import { createHash, createPublicKey, verify } from 'node:crypto';
import { HASH_SIZE, leafHash, rootFromInclusion } from './merkle.js';

/**
 * Checks that a receipt is in the public log, offline, from what anyone can hold: the C2SP
 * tlog-proof (`GET /api/v1/tasks/{task_id}/receipt-proof`) and the log's verifier key
 * (`/log/vkey`). Each check says what failed, so a changed byte is named by the part it is in:
 * the proof's lines, the checkpoint's signature, or the path from the receipt to the signed root.
 */

export interface LogCheck {
  name: 'log_proof' | 'log_checkpoint' | 'log_inclusion';
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
  at += 1;
  const hashes: Buffer[] = [];
  for (; at < lines.length && lines[at] !== ''; at++) {
    const hash = Buffer.from(lines[at] as string, 'base64');
    if (hash.length !== HASH_SIZE || hash.toString('base64') !== lines[at]) throw new Error(`line ${at + 1} is not a base64 SHA-256 hash`);
    hashes.push(hash);
  }
  if (at >= lines.length) throw new Error('no blank line before the checkpoint');
  return { extra, index: Number(index[1]), hashes, checkpoint: lines.slice(at + 1).join('\n') };
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
