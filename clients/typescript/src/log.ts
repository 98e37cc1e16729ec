import { fromBase64, fromBase64Url, utf8 } from './encoding.js';
import { checkCheckpointTimestamp } from './tsa.js';

/**
 * Offline verification of a receipt's place in the service's public, append-only log
 * (docs/receipt-log.md), on WebCrypto only: the C2SP tlog-proof (GET
 * /api/v1/tasks/{task_id}/receipt-proof), the checkpoint's Ed25519 signed-note signature by the
 * log's verifier key (/log/vkey), the RFC 9162 inclusion path from the receipt to the signed root,
 * the RFC 3161 token when the proof carries one (its imprint, CMS signature and certificate, and
 * with `tsaCa` its chain: ./tsa.ts), and, given a checkpoint kept earlier and a consistency proof
 * (GET /log/consistency?from=N), that the log only grew since. Every check is named, so a changed
 * byte is named by the part it is in.
 */

export type LogCheckName = 'log_proof' | 'log_checkpoint' | 'log_inclusion' | 'log_timestamp' | 'log_consistency';

export interface LogCheck {
  name: LogCheckName;
  ok: boolean;
  detail: string;
}

export interface LogVerdict {
  valid: boolean;
  /** The first check that failed; null when valid. */
  failure: LogCheckName | null;
  /** The receipt's position in the log, when the proof could be read. */
  index: number | null;
  treeSize: number | null;
  /** The time-stamp authority's time (genTime), when the proof carries a token. */
  timestamp: string | null;
  checks: LogCheck[];
}

export interface VerifyReceiptLogOptions {
  /** The tlog-proof text. */
  proof: string;
  /** The verifier key, `<origin>+<hex key hash>+<base64 key>`. */
  vkey: string;
  /** A checkpoint kept earlier: with `consistency`, the log must have only grown since. */
  olderCheckpoint?: string;
  /** The consistency proof text (`tlog-consistency@v1`) from olderCheckpoint's size. */
  consistency?: string;
  /** Trusted TSA certificate(s), PEM (the TSA's CA, or its own): the token's chain must lead to one. */
  tsaCa?: string;
}

interface Checkpoint {
  origin: string;
  size: number;
  root: Uint8Array;
  body: string;
  signatures: { name: string; raw: Uint8Array }[];
}

const HASH = 32;

async function sha256(...parts: Uint8Array[]): Promise<Uint8Array> {
  const all = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    all.set(p, at);
    at += p.length;
  }
  return new Uint8Array(await crypto.subtle.digest('SHA-256', all as Uint8Array<ArrayBuffer>));
}
const nodeHash = (l: Uint8Array, r: Uint8Array) => sha256(Uint8Array.of(1), l, r);
const equal = (a: Uint8Array, b: Uint8Array) => a.length === b.length && a.every((x, i) => x === b[i]);
const hex = (b: Uint8Array) => Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
const message = (e: unknown) => (e instanceof Error ? e.message : String(e));

function parseCheckpoint(note: string): Checkpoint {
  const split = note.indexOf('\n\n');
  if (split < 0) throw new Error('no blank line between the checkpoint and its signatures');
  const body = note.slice(0, split + 1);
  const [origin = '', size = '', root = ''] = body.split('\n');
  if (origin === '') throw new Error('the checkpoint names no origin');
  if (!/^(0|[1-9][0-9]*)$/.test(size)) throw new Error('the tree size is not a decimal number');
  const rootBytes = fromBase64(root);
  if (rootBytes?.length !== HASH) throw new Error('the root hash is not 32 bytes of base64');
  const signatures = note
    .slice(split + 2)
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => {
      const m = /^\u2014 (\S+) ([A-Za-z0-9+/]+=*)$/.exec(line);
      const raw = m ? fromBase64(m[2] as string) : null;
      if (!m || !raw) throw new Error('a signature line is malformed');
      return { name: m[1] as string, raw };
    });
  return { origin, size: Number(size), root: rootBytes, body, signatures };
}

/** Hash lines up to a blank line, then the checkpoint. */
function hashesThenNote(lines: string[], at: number): { hashes: Uint8Array[]; note: string } {
  const hashes: Uint8Array[] = [];
  for (; at < lines.length && lines[at] !== ''; at++) {
    const h = fromBase64(lines[at] as string);
    if (h?.length !== HASH) throw new Error(`line ${at + 1} is not a base64 SHA-256 hash`);
    hashes.push(h);
  }
  if (at >= lines.length) throw new Error('no blank line before the checkpoint');
  return { hashes, note: lines.slice(at + 1).join('\n') };
}

function parseProof(text: string): { extra: string | null; index: number; hashes: Uint8Array[]; note: string } {
  const lines = text.split('\n');
  if (lines[0] !== 'c2sp.org/tlog-proof@v1') throw new Error('the first line is not c2sp.org/tlog-proof@v1');
  let at = 1;
  let extra: string | null = null;
  if (lines[at]?.startsWith('extra ')) extra = (lines[at++] as string).slice(6);
  const index = /^index (0|[1-9][0-9]*)$/.exec(lines[at] ?? '');
  if (!index) throw new Error(`line ${at + 1} is not "index <n>"`);
  return { extra, index: Number(index[1]), ...hashesThenNote(lines, at + 1) };
}

function parseConsistency(text: string): { old: number; hashes: Uint8Array[]; note: string } {
  const lines = text.split('\n');
  if (lines[0] !== 'tlog-consistency@v1') throw new Error('the first line is not tlog-consistency@v1');
  const old = /^old (0|[1-9][0-9]*)$/.exec(lines[1] ?? '');
  if (!old) throw new Error('line 2 is not "old <size>"');
  return { old: Number(old[1]), ...hashesThenNote(lines, 2) };
}

/** The checkpoint's Ed25519 signed-note signature by `vkey` (c2sp.org/signed-note). */
async function signedBy(checkpoint: Checkpoint, vkey: string): Promise<{ ok: boolean; detail: string }> {
  const [name = '', hashHex = '', ...rest] = vkey.trim().split('+');
  const key = fromBase64(rest.join('+'));
  if (key?.length !== 33 || key[0] !== 1) return { ok: false, detail: 'the verifier key is not an Ed25519 signed-note key' };
  const keyHash = (await sha256(utf8(`${name}\n`), key)).subarray(0, 4);
  if (hex(keyHash) !== hashHex) return { ok: false, detail: "the verifier key's hash does not match its name and key" };
  if (checkpoint.origin !== name) return { ok: false, detail: `the checkpoint is of log ${checkpoint.origin}, the key of ${name}` };
  const line = checkpoint.signatures.find((s) => s.name === name && equal(s.raw.subarray(0, 4), keyHash));
  if (!line) return { ok: false, detail: `no signature by ${name} (key hash ${hashHex})` };
  let ok = false;
  if (line.raw.length === 68) {
    const publicKey = await crypto.subtle.importKey('raw', key.subarray(1) as Uint8Array<ArrayBuffer>, { name: 'Ed25519' }, false, ['verify']);
    ok = await crypto.subtle.verify(
      { name: 'Ed25519' },
      publicKey,
      line.raw.subarray(4) as Uint8Array<ArrayBuffer>,
      utf8(checkpoint.body) as Uint8Array<ArrayBuffer>,
    );
  }
  return {
    ok,
    detail: ok ? `signed by ${name} (key ${hashHex}), tree size ${checkpoint.size}` : `the signature by ${name} does not verify: the checkpoint was changed`,
  };
}

/** RFC 9162 section 2.1.3.2. */
async function rootFromInclusion(index: number, size: number, leaf: Uint8Array, proof: Uint8Array[]): Promise<Uint8Array | null> {
  if (index >= size) return null;
  let fn = index;
  let sn = size - 1;
  let r = leaf;
  for (const p of proof) {
    if (sn === 0) return null;
    if (fn % 2 === 1 || fn === sn) {
      r = await nodeHash(p, r);
      while (fn % 2 === 0 && fn !== 0) {
        fn = Math.floor(fn / 2);
        sn = Math.floor(sn / 2);
      }
    } else {
      r = await nodeHash(r, p);
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  return sn === 0 ? r : null;
}

/** RFC 9162 section 2.1.4.2: whether the tree (m, oldRoot) is a prefix of (n, newRoot). */
export async function verifyConsistencyProof(m: number, oldRoot: Uint8Array, n: number, newRoot: Uint8Array, proof: Uint8Array[]): Promise<boolean> {
  if (m > n) return false;
  if (m === n) return proof.length === 0 && equal(oldRoot, newRoot);
  if (m === 0) return proof.length === 0;
  if (proof.length === 0) return false;
  const path = (m & (m - 1)) === 0 ? [oldRoot, ...proof] : proof;
  let fn = m - 1;
  let sn = n - 1;
  while (fn % 2 === 1) {
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  let fr = path[0] as Uint8Array;
  let sr = fr;
  for (const c of path.slice(1)) {
    if (sn === 0) return false;
    if (fn % 2 === 1 || fn === sn) {
      fr = await nodeHash(c, fr);
      sr = await nodeHash(c, sr);
      while (fn % 2 === 0 && fn !== 0) {
        fn = Math.floor(fn / 2);
        sn = Math.floor(sn / 2);
      }
    } else {
      sr = await nodeHash(sr, c);
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  return sn === 0 && equal(fr, oldRoot) && equal(sr, newRoot);
}

/** Every check of a receipt's place in the public log; see the module comment for what each covers. */
export async function verifyReceiptLog(receipt: string, options: VerifyReceiptLogOptions): Promise<LogVerdict> {
  const checks: LogCheck[] = [];
  const verdict = (index: number | null, size: number | null, timestamp: string | null): LogVerdict => {
    const failed = checks.find((c) => !c.ok);
    return { valid: failed === undefined, failure: failed?.name ?? null, index, treeSize: size, timestamp, checks };
  };
  let proof: ReturnType<typeof parseProof>;
  let checkpoint: Checkpoint;
  try {
    proof = parseProof(options.proof);
    checkpoint = parseCheckpoint(proof.note);
  } catch (error) {
    checks.push({ name: 'log_proof', ok: false, detail: `not a C2SP tlog-proof: ${message(error)}` });
    return verdict(null, null, null);
  }
  checks.push({ name: 'log_proof', ok: true, detail: `tlog-proof for leaf ${proof.index}, ${proof.hashes.length} hashes` });
  checks.push({ name: 'log_checkpoint', ...(await signedBy(checkpoint, options.vkey)) });
  const root = await rootFromInclusion(proof.index, checkpoint.size, await sha256(Uint8Array.of(0), utf8(receipt.trim())), proof.hashes);
  const included = root !== null && equal(root, checkpoint.root);
  checks.push({
    name: 'log_inclusion',
    ok: included,
    detail: included
      ? `logged at position ${proof.index} of the public log (tree size ${checkpoint.size})`
      : `the receipt at index ${proof.index} does not lead to the checkpoint's root: the receipt or a proof hash was changed`,
  });
  let timestamp: string | null = null;
  if (proof.extra !== null) {
    try {
      const t = await checkCheckpointTimestamp(proof.extra, proof.note, options.tsaCa);
      timestamp = t.genTime;
      checks.push({
        name: 'log_timestamp',
        ok: true,
        detail: `RFC 3161 token over the checkpoint, time ${t.genTime}, signed by ${t.signer}: signature verifies${t.chained ? ', chain to a trusted TSA certificate' : ' (chain not checked: pass tsaCa)'}`,
      });
    } catch (error) {
      checks.push({ name: 'log_timestamp', ok: false, detail: message(error) });
    }
  }
  if (options.olderCheckpoint !== undefined) checks.push(await consistencyCheck(options.olderCheckpoint, options.consistency, options.vkey));
  return verdict(proof.index, checkpoint.size, timestamp);
}

async function consistencyCheck(oldNote: string, text: string | undefined, vkey: string): Promise<LogCheck> {
  const fail = (detail: string): LogCheck => ({ name: 'log_consistency', ok: false, detail });
  let old: Checkpoint;
  try {
    old = parseCheckpoint(oldNote);
  } catch (error) {
    return fail(`the older checkpoint is not a checkpoint: ${message(error)}`);
  }
  const oldSigned = await signedBy(old, vkey);
  if (!oldSigned.ok) return fail(`the older checkpoint: ${oldSigned.detail}`);
  if (text === undefined) return fail('no consistency proof given for the older checkpoint');
  let proof: ReturnType<typeof parseConsistency>;
  let current: Checkpoint;
  try {
    proof = parseConsistency(text);
    current = parseCheckpoint(proof.note);
  } catch (error) {
    return fail(`not a consistency proof: ${message(error)}`);
  }
  const signed = await signedBy(current, vkey);
  if (!signed.ok) return fail(`the consistency proof's checkpoint: ${signed.detail}`);
  if (proof.old !== old.size) return fail(`the consistency proof starts at size ${proof.old}, the older checkpoint has ${old.size}`);
  if (old.size > current.size) return fail(`the log shrank from ${old.size} to ${current.size} leaves: it was rolled back or forked`);
  if (!(await verifyConsistencyProof(old.size, old.root, current.size, current.root, proof.hashes))) {
    return fail(
      `the tree of ${current.size} leaves does not extend the older checkpoint of ${old.size}: the log was forked or rewritten (or a proof hash changed)`,
    );
  }
  return { name: 'log_consistency', ok: true, detail: `the log only grew: ${old.size} → ${current.size} leaves` };
}

/** The tree size of a checkpoint note, or null when it is not one (to ask for a consistency proof). */
export function checkpointSize(note: string): number | null {
  try {
    return parseCheckpoint(note).size;
  } catch {
    return null;
  }
}

/** The `sub` (task id) a receipt claims, unverified: only to know which proof to fetch. */
export function receiptSubject(receipt: string): string | undefined {
  const payload = fromBase64Url(receipt.trim().split('.')[1] ?? '');
  try {
    const sub = payload ? (JSON.parse(new TextDecoder().decode(payload)) as { sub?: unknown }).sub : undefined;
    return typeof sub === 'string' ? sub : undefined;
  } catch {
    return undefined;
  }
}
