import { readFileSync } from 'node:fs';
import { AppError } from '../../domain/errors.js';
import { AUDIT_CHAIN_START, auditEntryHash, auditExtension } from '../../domain/team/audit-chain.js';
import { iso } from '../../domain/time.js';
import { checkpointBody, type LogKey, signNote } from '../../receipts/log-note.js';
import { appendNodes, appendPlan, EMPTY_ROOT, inclusionProof, leafHash, neededNodes, nodeKey, rootHash, sourceOf } from '../../receipts/merkle.js';
import { parsePemCertificates, requestTimestamp } from '../../receipts/tsa.js';
import { type Db, lockKeys, withTransaction } from '../../store/db.js';
import {
  assignLeafIndexes,
  auditHead,
  chainAuditEntries,
  findNodes,
  insertCheckpoint,
  insertLeaf,
  insertNodes,
  latestCheckpoint,
  leafIndexOfTask,
  leafRange,
  nodeRange,
  setCheckpointTsr,
  unchainedAudit,
  waitingLeaves,
} from '../../store/receipt-log/receipt-log-repo.js';
import type { ServiceDeps } from '../context.js';
import { startPeriodic } from '../runtime/periodic.js';

/**
 * The public receipt log (contract "Receipts in a public, append-only log", docs/receipt-log.md):
 * leaves written with their receipts, a sequencer that integrates them, and the reads that serve
 * it as C2SP tlog-tiles.
 */

/** Leaves integrated per transaction. */
const BATCH = 4096;
/** How often the sequencer looks for waiting leaves: well within the contract's 2 s. */
export const SEQUENCER_INTERVAL_MS = 500;
/** Hashes per tile (tlog-tiles: tile height 8). */
const TILE_WIDTH = 256;
const TILE_HEIGHT = 8;
/** The PostgreSQL advisory lock that lets one sequencer run at a time across instances. */
const SEQUENCER_LOCK = 'receipt-log-sequencer';

type Deps = Pick<ServiceDeps, 'store' | 'config' | 'clock' | 'log' | 'metrics' | 'changes' | 'receiptLog' | 'timestamps'>;

/** Writes a receipt's leaf in the transaction that issues the receipt; the sequencer places it. */
export async function appendReceiptLeaf(trx: Db, taskId: string, receipt: string, now: Date): Promise<void> {
  await insertLeaf(trx, { taskId, data: receipt, createdAt: iso(now) });
}

/**
 * Integrates the waiting leaves: gives each the next index, stores the subtrees they complete,
 * chains the audit entries recorded since, and signs the new checkpoint (with the audit chain's
 * head as its extension line), all in one transaction per batch. A crash anywhere rolls the batch
 * back whole: no index half-used, no tiles without their checkpoint, no fork. On PostgreSQL the
 * transaction first takes an advisory lock, so two instances integrate one after the other (the
 * second finds the first's checkpoint); the unique leaf index backs that up. Returns the leaves placed.
 */
export async function integrateLog(deps: Deps): Promise<number> {
  let total = 0;
  const key = deps.receiptLog;
  for (;;) {
    const placed = await withTransaction(deps.store.db, (trx) => integrateBatch(trx, deps, key));
    total += placed;
    if (placed < BATCH) return total;
  }
}

async function integrateBatch(trx: Db, deps: Deps, key: LogKey): Promise<number> {
  await lockKeys(trx, deps.store.dialect, [SEQUENCER_LOCK]);
  const waiting = await waitingLeaves(trx, BATCH);
  const unchained = await unchainedAudit(trx, BATCH);
  if (waiting.length === 0 && unchained.length === 0) return 0;
  const latest = await latestCheckpoint(trx);
  const size = latest?.size ?? 0;
  const total = size + waiting.length;
  let root: Buffer;
  if (waiting.length === 0 && latest) {
    root = Buffer.from(latest.root, 'base64');
  } else {
    root = await placeLeaves(trx, size, waiting);
    const taskIds = waiting.flatMap((leaf) => (leaf.task_id === null ? [] : [leaf.task_id]));
    await deps.changes.publishAll(
      taskIds.map((taskId) => ({ kind: 'task' as const, taskId })),
      trx,
    );
  }
  const head = await chainAudit(trx, unchained);
  const note = signNote(checkpointBody(key.name, total, root, [auditExtension(head.entries, head.hash)]), key);
  await insertCheckpoint(trx, { seq: (latest?.seq ?? -1) + 1, size: total, root: root.toString('base64'), note, createdAt: iso(deps.clock.now()) });
  return Math.max(waiting.length, unchained.length);
}

/** Gives waiting leaves their indexes and stores the subtrees they complete; returns the new root. */
async function placeLeaves(trx: Db, size: number, waiting: { id: string; task_id: string | null; data: string }[]): Promise<Buffer> {
  const total = size + waiting.length;
  const hashes = waiting.map((leaf) => leafHash(Buffer.from(leaf.data, 'utf8')));
  // Existing nodes the new ones and the new root read: a left sibling per level, and the old
  // complete subtrees of the root's decomposition.
  const old = (level: number, index: number) => index < Math.floor(size / 2 ** level);
  const reads = [...appendPlan(size, waiting.length).reads, ...neededNodes((node) => rootHash(total, node)).filter((n) => old(n.level, n.index))];
  const existing = await findNodes(trx, reads);
  const nodes = appendNodes(size, hashes, sourceOf(existing));
  for (const n of nodes) existing.set(nodeKey(n.level, n.index), n.hash);
  await assignLeafIndexes(
    trx,
    waiting.map((leaf, i) => ({ id: leaf.id, taskId: leaf.task_id, index: size + i })),
  );
  await insertNodes(trx, nodes);
  return rootHash(total, sourceOf(existing));
}

/** Links the unchained audit entries after the chain's head; returns the new head. */
async function chainAudit(trx: Db, unchained: AuditRowToChain[]): Promise<{ entries: number; hash: string }> {
  const head = await auditHead(trx);
  let previous = head?.hash ?? AUDIT_CHAIN_START;
  let next = head ? head.index + 1 : 0;
  const links = unchained.map((row) => {
    previous = auditEntryHash(previous, { ...row, details: JSON.parse(row.details) as Record<string, unknown> });
    return { id: row.id, index: next++, hash: previous };
  });
  await chainAuditEntries(trx, links);
  return { entries: next, hash: previous };
}

type AuditRowToChain = { id: string; at: string; actor: string; action: string; task_id: string | null; details: string };

/** Runs the sequencer every SEQUENCER_INTERVAL_MS; returns its stop. */
export function startLogSequencer(deps: Deps): () => Promise<void> {
  return startPeriodic(deps, {
    name: 'receipt log sequencer',
    firstDelayMs: SEQUENCER_INTERVAL_MS,
    intervalMs: SEQUENCER_INTERVAL_MS,
    run: () => integrateLog(deps),
  });
}

/**
 * Time-stamps the latest checkpoint with TSA_URL (RFC 3161) when it has no token yet: the token is
 * checked (receipts/tsa.ts) before it is kept, so a TSA that hangs, answers garbage or signs
 * another hash leaves the checkpoint without one, says so in readiness and metrics, and is asked
 * again at the next tick. Checkpoints replaced before their turn are not time-stamped: the latest
 * covers the tree they are prefixes of.
 */
export async function timestampCheckpoint(deps: Deps): Promise<void> {
  const url = deps.config.tsa.url;
  if (url === undefined) return;
  const latest = await latestCheckpoint(deps.store.db);
  if (!latest || latest.tsr !== null) return;
  try {
    const caFile = deps.config.tsa.caFile;
    const trusted = caFile === undefined ? [] : parsePemCertificates(readFileSync(caFile, 'utf8'));
    const token = await requestTimestamp(url, Buffer.from(latest.note, 'utf8'), { timeoutMs: deps.config.tsa.timeoutMs, trusted });
    await setCheckpointTsr(deps.store.db, latest.seq, token.toString('base64'));
    deps.timestamps.failure = undefined;
    deps.metrics.timestamps.inc({ outcome: 'ok' });
  } catch (error) {
    const reason = error instanceof Error ? (error.name === 'TimeoutError' ? 'the TSA did not answer in time' : error.message) : String(error);
    deps.timestamps.failure = reason.slice(0, 200);
    deps.metrics.timestamps.inc({ outcome: 'failed' });
    deps.log.warn({ err: error }, 'receipt log: time-stamp failed; the next tick retries');
  }
}

/** Time-stamps new checkpoints every second while TSA_URL is set; returns its stop. */
export function startLogTimestamper(deps: Deps): () => Promise<void> {
  if (deps.config.tsa.url === undefined) return async () => undefined;
  return startPeriodic(deps, { name: 'receipt log time-stamps', firstDelayMs: 1000, intervalMs: 1000, run: () => timestampCheckpoint(deps) });
}

/** The latest checkpoint as served: before any receipt, the signed checkpoint of the empty tree. */
export async function currentCheckpoint(deps: Deps): Promise<{ size: number; note: string; tsr: string | null }> {
  const latest = await latestCheckpoint(deps.store.db);
  if (latest) return latest;
  return { size: 0, tsr: null, note: signNote(checkpointBody(deps.receiptLog.name, 0, EMPTY_ROOT, [auditExtension(0, AUDIT_CHAIN_START)]), deps.receiptLog) };
}

export interface TileAddress {
  /** Tile level, or 'entries' for an entry bundle. */
  level: number | 'entries';
  index: number;
  /** The partial width (1–255), or undefined for a full tile. */
  width: number | undefined;
}

/** The largest tile index a path may name: far past any log this store can hold (2^31 leaves). */
const MAX_TILE_INDEX = 2 ** 40;
const TILE_PATH = /^(entries|\d{1,2})\/((?:x\d{3}\/)*\d{3})(?:\.p\/(\d{1,3}))?$/;

/** Parses `<L>/<N>[.p/<W>]` or `entries/<N>[.p/<W>]` (tlog-tiles); undefined when malformed. */
export function parseTilePath(path: string): TileAddress | undefined {
  const match = TILE_PATH.exec(path);
  if (!match) return undefined;
  const [, level = '', digits = '', width] = match;
  const index = Number(digits.replaceAll('x', '').replaceAll('/', ''));
  // Three-digit groups without needless leading groups: x000/… is not the canonical path of a tile.
  if (digits.startsWith('x000') || !Number.isSafeInteger(index) || index > MAX_TILE_INDEX) return undefined;
  const w = width === undefined ? undefined : Number(width);
  if (w !== undefined && (w < 1 || w >= TILE_WIDTH || String(w) !== width)) return undefined;
  if (level !== 'entries' && String(Number(level)) !== level) return undefined;
  return { level: level === 'entries' ? 'entries' : Number(level), index, width: w };
}

/** A tile's bytes (hashes, or an entry bundle), or 404 when the current tree does not hold it. */
export async function readTile(deps: Deps, tile: TileAddress): Promise<{ body: Buffer; full: boolean }> {
  const { size } = await currentCheckpoint(deps);
  const treeLevel = tile.level === 'entries' ? 0 : tile.level * TILE_HEIGHT;
  // Hashes the current tree has at that level (complete subtrees only).
  const available = treeLevel > 40 ? 0 : Math.floor(size / 2 ** treeLevel);
  const width = tile.width ?? TILE_WIDTH;
  const from = tile.index * TILE_WIDTH;
  if (from + width > available) throw new AppError('not_found', 'The log does not hold this tile yet.');
  if (tile.level === 'entries') {
    const entries = await leafRange(deps.store.db, from, from + width);
    return { body: entryBundle(entries), full: tile.width === undefined };
  }
  const hashes = await nodeRange(deps.store.db, treeLevel, from, from + width);
  if (hashes.length !== width) throw new Error(`receipt log: tile ${tile.level}/${tile.index} has ${hashes.length} of ${width} hashes`);
  return { body: Buffer.concat(hashes), full: tile.width === undefined };
}

/** An entry bundle: each entry as a big-endian uint16 length followed by its bytes. */
function entryBundle(entries: string[]): Buffer {
  const parts: Buffer[] = [];
  for (const entry of entries) {
    const data = Buffer.from(entry, 'utf8');
    const length = Buffer.alloc(2);
    length.writeUInt16BE(data.length);
    parts.push(length, data);
  }
  return Buffer.concat(parts);
}

/** The C2SP tlog-proof of a task's receipt against the current checkpoint; 404 before integration. */
export async function receiptProof(deps: Deps, taskId: string): Promise<string> {
  const index = await leafIndexOfTask(deps.store.db, taskId);
  if (index === undefined) throw new AppError('not_found', 'This task has no receipt in the public log yet: a receipt is logged within seconds of delivery.');
  const checkpoint = await currentCheckpoint(deps);
  const plan = neededNodes((node) => inclusionProof(index, checkpoint.size, node));
  const nodes = await findNodes(deps.store.db, plan);
  const proof = inclusionProof(index, checkpoint.size, sourceOf(nodes));
  // The checkpoint's RFC 3161 token, when it has one, on the proof's (unauthenticated) extra line.
  const extra = checkpoint.tsr === null ? [] : [`extra ${checkpoint.tsr}`];
  return ['c2sp.org/tlog-proof@v1', ...extra, `index ${index}`, ...proof.map((hash) => hash.toString('base64')), '', checkpoint.note].join('\n');
}
