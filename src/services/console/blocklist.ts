import { randomBytes } from 'node:crypto';
import { domainToASCII } from 'node:url';
import { type BlockSource, normalizeEmail, normalizeRequester } from '../../abuse/blocklist.js';
import { directoryHost } from '../../domain/agents/directory.js';
import { validationFailed } from '../../domain/errors.js';
import { blockPrefix, keyHash, MIN_PREFIX, networkKey } from '../../domain/network/client.js';
import { emailDomain, isHostname } from '../../domain/network/email.js';
import { ADMIN_PAGE_DEFAULT, type BlockInput, BlockInputSchema, type BlockKind, type PageQuery, PageQuerySchema } from '../../domain/tasks/admin-schemas.js';
import type { Actor } from '../../domain/team/actor.js';
import { iso, parseDateTime } from '../../domain/time.js';
import { type BlockRow, deleteBlock, listActiveBlocks, replaceBlock } from '../../store/abuse-control/blocklist-repo.js';
import { withTransaction } from '../../store/db.js';
import type { ServiceDeps } from '../context.js';
import { DATE_TIME_RULE, queryChecker, schemaChecker } from '../tasks/validation.js';
import { recordAudit } from '../team/audit.js';
import { decodeCursor, nextCursor } from './cursor.js';

export type { BlockSource } from '../../abuse/blocklist.js';
export { BLOCK_KINDS, type BlockInput, type BlockKind } from '../../domain/tasks/admin-schemas.js';

/**
 * The operator's administration of the blocklist (admin API and console): list, add (an entry
 * replaces any of the same kind and value) and remove. Matching submissions against it is
 * abuse/blocklist.ts.
 */

export interface BlockEntry {
  id: string;
  kind: BlockKind;
  value: string;
  reason: string | null;
  source: string;
  created_at: string;
  expires_at: string | null;
}

const REQUESTER_MAX = 200;

function toEntry(row: BlockRow): BlockEntry {
  return {
    id: row.id,
    kind: row.kind as BlockKind,
    value: row.value,
    reason: row.reason,
    source: row.source,
    created_at: row.created_at,
    expires_at: row.expires_at,
  };
}

const checkBlock = schemaChecker<BlockInput>(BlockInputSchema, {
  unknown: 'ignore',
  messages: { value: 'value is required (a non-empty string)', expires_at: `expires_at ${DATE_TIME_RULE}` },
  notAnObject: 'body must be a JSON object with kind and value',
});

/** The stored form of a value of each kind (ip: the client hash; the address is never stored), or the problem. */
function normalizeValue(deps: ServiceDeps, kind: BlockKind, value: string): { value: string; prefixBits?: number | null } | { problem: string } {
  if (kind === 'ip') {
    // Stored as the keyed hash of the canonical key (domain/network/client.ts), whatever the spelling, with
    // the prefix a network names (a client's networks are hashed only at prefixes entries name).
    const key = networkKey(value);
    return key === null
      ? {
          problem: `value must be an IPv4 address or network (/${MIN_PREFIX[4]} to /32) or an IPv6 address or network (/${MIN_PREFIX[6]} to /128) when kind is ip`,
        }
      : { value: keyHash(deps.secret, key), prefixBits: blockPrefix(key) };
  }
  if (kind === 'email')
    return emailDomain(value) === null ? { problem: 'value must be a valid e-mail address when kind is email' } : { value: normalizeEmail(value) };
  if (kind === 'domain') {
    const domain = normalizeDomain(value);
    return isHostname(domain) ? { value: domain } : { problem: 'value must be a domain name such as mail.example-agent.dev when kind is domain' };
  }
  if (kind === 'agent_key') {
    // An RFC 7638 SHA-256 thumbprint: 43 base64url characters.
    return /^[A-Za-z0-9_-]{43}$/.test(value)
      ? { value }
      : { problem: 'value must be a key id (the RFC 7638 SHA-256 thumbprint, 43 base64url characters) when kind is agent_key' };
  }
  if (kind === 'agent_directory') {
    const host = directoryHost(value);
    return host === null
      ? { problem: 'value must be a host, with :port when not the default (or a directory URL), when kind is agent_directory' }
      : { value: host };
  }
  return value.length > REQUESTER_MAX
    ? { problem: `value must be at most ${REQUESTER_MAX} characters when kind is requester` }
    : { value: normalizeRequester(value) };
}

/** Validates and normalizes an entry from its schema; every problem at once, each naming its field. */
function checkInput(
  deps: ServiceDeps,
  raw: unknown,
): { kind: BlockKind; value: string; prefixBits: number | null; reason: string | null; expiresAt: string | null } {
  const { value: input, fieldErrors } = checkBlock(raw);
  const failed = (field: string) => fieldErrors.some((e) => e.startsWith(`${field} `));
  let value = '';
  let prefixBits: number | null = null;
  if (!failed('value')) {
    const trimmed = input.value.trim();
    if (trimmed === '') fieldErrors.push('value is required (a non-empty string)');
    else if (!failed('kind')) {
      const normalized = normalizeValue(deps, input.kind, trimmed);
      if ('problem' in normalized) fieldErrors.push(normalized.problem);
      else {
        value = normalized.value;
        prefixBits = normalized.prefixBits ?? null;
      }
    }
  }
  let expiresAt: string | null = null;
  if (input.expires_at !== undefined && !failed('expires_at')) {
    const parsed = parseDateTime(input.expires_at);
    if (!parsed) fieldErrors.push(`expires_at ${DATE_TIME_RULE}`);
    else if (parsed.getTime() <= deps.clock.now().getTime()) fieldErrors.push('expires_at must be in the future');
    else expiresAt = iso(parsed);
  }
  if (fieldErrors.length > 0) throw validationFailed(fieldErrors);
  return { kind: input.kind, value, prefixBits, reason: input.reason?.trim() || null, expiresAt };
}

function normalizeDomain(value: string): string {
  return domainToASCII(value.replace(/^@/, '').replace(/\.$/, '')).toLowerCase();
}

export interface BlockPage {
  blocklist: BlockEntry[];
  /** The next page's cursor, null on the last page. */
  next_cursor: string | null;
}

const checkQuery = queryChecker<PageQuery>(PageQuerySchema);

/**
 * Active entries (not expired), newest first, a page at a time (`limit`, default 50, and `cursor`):
 * automatic blocks pile up under abuse, and a list of them all would cost more with every one.
 */
export async function listBlocks(deps: ServiceDeps, raw: unknown = {}): Promise<BlockPage> {
  const query = checkQuery(raw);
  const limit = query.limit ?? ADMIN_PAGE_DEFAULT;
  const after = query.cursor ? decodeCursor(deps.secret, 'blocklist', query.cursor) : undefined;
  const rows = await listActiveBlocks(deps.store.db, iso(deps.clock.now()), { after, limit: limit + 1 });
  const page = rows.slice(0, limit);
  const last = rows.length > limit ? page.at(-1) : undefined;
  return { blocklist: page.map(toEntry), next_cursor: nextCursor(deps.secret, 'blocklist', last) };
}

/**
 * Adds an entry (422 `validation_failed` for bad input). An operator's entry replaces any entry of
 * the same kind and value, so adding again is how an expiry is changed or removed.
 */
export async function addBlock(deps: ServiceDeps, actor: Actor, raw: unknown, options: { source?: BlockSource; taskId?: string } = {}): Promise<BlockEntry> {
  const checked = checkInput(deps, raw);
  const row: BlockRow = {
    id: `blk-${randomBytes(12).toString('hex')}`,
    kind: checked.kind,
    value: checked.value,
    reason: checked.reason,
    source: options.source ?? 'admin',
    created_at: iso(deps.clock.now()),
    expires_at: checked.expiresAt,
    prefix_bits: checked.prefixBits,
  };
  await replaceWithAudit(deps, actor, row, options.taskId ?? null);
  return toEntry(row);
}

/**
 * The operator blocks a known client by its hash (the sender of a task: only the hash is stored,
 * so there is no address to type). Replaces an entry for the same hash, like addBlock.
 */
export async function addClientHashBlock(deps: ServiceDeps, actor: Actor, hash: string, reason: string | null, taskId: string | null): Promise<BlockEntry> {
  const row: BlockRow = {
    id: `blk-${randomBytes(12).toString('hex')}`,
    kind: 'ip',
    value: hash,
    reason,
    source: 'admin',
    created_at: iso(deps.clock.now()),
    expires_at: null,
    prefix_bits: null,
  };
  await replaceWithAudit(deps, actor, row, taskId);
  return toEntry(row);
}

/** An operator's entry and its audit entry, in one transaction (the value itself stays out of the log: it may be an address). */
async function replaceWithAudit(deps: ServiceDeps, actor: Actor, row: BlockRow, taskId: string | null): Promise<void> {
  await withTransaction(deps.store.db, async (trx) => {
    await replaceBlock(trx, row);
    await recordAudit(trx, deps, { actor, action: 'blocklist.added', taskId, details: { block_id: row.id, kind: row.kind } });
  });
  deps.log.info({ block_id: row.id, kind: row.kind, source: row.source }, 'blocklist entry added');
}

export async function removeBlock(deps: ServiceDeps, actor: Actor, id: string): Promise<boolean> {
  const removed = await withTransaction(deps.store.db, async (trx) => {
    if (!(await deleteBlock(trx, id))) return false;
    await recordAudit(trx, deps, { actor, action: 'blocklist.removed', details: { block_id: id } });
    return true;
  });
  if (removed) deps.log.info({ block_id: id }, 'blocklist entry removed');
  return removed;
}
