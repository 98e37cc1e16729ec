import { randomBytes } from 'node:crypto';
import { isIP } from 'node:net';
import { domainToASCII } from 'node:url';
import { BLOCK_KINDS, normalizeEmail, normalizeRequester, type BlockKind, type BlockSource } from '../abuse/blocklist.js';
import { clientHash } from '../domain/client.js';
import { emailDomain, isHostname } from '../domain/email.js';
import { AppError, validationFailed } from '../domain/errors.js';
import { iso, parseDateTime } from '../domain/time.js';
import { deleteBlock, listActiveBlocks, replaceBlock, type BlockRow } from '../store/blocklist-repo.js';
import type { ServiceDeps } from './context.js';

export { BLOCK_KINDS, type BlockKind, type BlockSource } from '../abuse/blocklist.js';

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

export interface BlockInput {
  kind: 'ip' | 'email' | 'domain' | 'requester';
  value: string;
  reason?: string;
  expires_at?: string;
}

const REASON_MAX = 500;
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

/** An IPv4 address (optionally /32), or an IPv6 address or /64 prefix (optionally with /64). */
function parseIp(value: string): string | null {
  const m = /^([^/]+?)(?:\/(\d{1,3}))?$/.exec(value);
  if (!m) return null;
  const [, address = '', prefix] = m;
  const family = isIP(address);
  if (family === 0) return null;
  if (prefix !== undefined && Number(prefix) !== (family === 4 ? 32 : 64)) return null;
  return address;
}

/** Validates and normalizes an entry; every problem at once, each naming its field. */
function checkInput(deps: ServiceDeps, raw: unknown): { kind: BlockKind; value: string; reason: string | null; expiresAt: string | null } {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw new AppError('malformed_request', 'The request body must be a JSON object.', { details: ['body must be a JSON object with kind and value'] });
  }
  const input = raw as Record<string, unknown>;
  const details: string[] = [];
  const kind = input.kind;
  const validKind = typeof kind === 'string' && (BLOCK_KINDS as readonly string[]).includes(kind);
  if (!validKind) details.push(`kind must be one of: ${BLOCK_KINDS.join(', ')}`);

  let value = '';
  if (typeof input.value !== 'string' || input.value.trim() === '') {
    details.push('value is required (a non-empty string)');
  } else if (validKind) {
    const raw = input.value.trim();
    if (kind === 'ip') {
      const address = parseIp(raw);
      if (address === null) details.push('value must be an IPv4 address or an IPv6 address or /64 prefix when kind is ip');
      else value = clientHash(deps.secret, address);
    } else if (kind === 'email') {
      if (emailDomain(raw) === null) details.push('value must be a valid e-mail address when kind is email');
      else value = normalizeEmail(raw);
    } else if (kind === 'domain') {
      const domain = normalizeDomain(raw);
      if (!isHostname(domain)) details.push('value must be a domain name such as mail.example-agent.dev when kind is domain');
      else value = domain;
    } else {
      if (raw.length > REQUESTER_MAX) details.push(`value must be at most ${REQUESTER_MAX} characters when kind is requester`);
      else value = normalizeRequester(raw);
    }
  }

  let reason: string | null = null;
  if (input.reason !== undefined && input.reason !== null) {
    if (typeof input.reason !== 'string') details.push('reason must be a string');
    else if (input.reason.length > REASON_MAX) details.push(`reason must be at most ${REASON_MAX} characters`);
    else reason = input.reason.trim() || null;
  }

  let expiresAt: string | null = null;
  if (input.expires_at !== undefined && input.expires_at !== null) {
    const parsed = typeof input.expires_at === 'string' ? parseDateTime(input.expires_at) : null;
    if (!parsed) details.push('expires_at must be an ISO 8601 date-time, e.g. 2030-01-31T17:00:00Z');
    else if (parsed.getTime() <= deps.clock.now().getTime()) details.push('expires_at must be in the future');
    else expiresAt = iso(parsed);
  }

  if (details.length > 0) throw validationFailed(details);
  return { kind: kind as BlockKind, value, reason, expiresAt };
}

function normalizeDomain(value: string): string {
  return domainToASCII(value.replace(/^@/, '').replace(/\.$/, '')).toLowerCase();
}

/** Active entries (not expired), newest first. */
export async function listBlocks(deps: ServiceDeps): Promise<BlockEntry[]> {
  const rows = await listActiveBlocks(deps.store.db, iso(deps.clock.now()));
  return rows.map(toEntry);
}

/**
 * Adds an entry (422 `validation_failed` for bad input). An operator's entry replaces any entry of
 * the same kind and value, so adding again is how an expiry is changed or removed.
 */
export async function addBlock(deps: ServiceDeps, input: BlockInput, source: BlockSource = 'admin'): Promise<BlockEntry> {
  const checked = checkInput(deps, input);
  const row: BlockRow = {
    id: `blk-${randomBytes(12).toString('hex')}`,
    kind: checked.kind,
    value: checked.value,
    reason: checked.reason,
    source,
    created_at: iso(deps.clock.now()),
    expires_at: checked.expiresAt,
  };
  await replaceBlock(deps.store.db, row);
  deps.log.info({ block_id: row.id, kind: row.kind, source }, 'blocklist entry added');
  return toEntry(row);
}

export async function removeBlock(deps: ServiceDeps, id: string): Promise<boolean> {
  const removed = await deleteBlock(deps.store.db, id);
  if (removed) deps.log.info({ block_id: id }, 'blocklist entry removed');
  return removed;
}

