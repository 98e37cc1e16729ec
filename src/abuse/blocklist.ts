import { randomBytes } from 'node:crypto';
import { isIP } from 'node:net';
import { domainToASCII } from 'node:url';
import type { Selectable } from 'kysely';
import { AppError, validationFailed } from '../domain/errors.js';
import { iso, parseDateTime } from '../domain/time.js';
import { clientHash } from '../http/client.js';
import type { ServiceDeps } from '../services/deps.js';
import type { Db } from '../store/db.js';
import type { BlocklistTable } from '../store/schema.js';
import { emailDomain, isHostname } from './email.js';

/**
 * The blocklist: ip (stored as the client hash, never the address), email, domain (the domain and
 * every subdomain) and requester (a task's `requester`, a message's `from`). Entries may expire.
 * Checked on submissions and messages; a match is 403 `client_blocked` naming only the kind.
 */

export const BLOCK_KINDS = ['ip', 'email', 'domain', 'requester'] as const;
export type BlockKind = (typeof BLOCK_KINDS)[number];
export type BlockSource = 'admin' | 'auto';

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

function toEntry(row: Selectable<BlocklistTable>): BlockEntry {
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

/** Requesters compare trimmed, whitespace collapsed and case folded. */
export function normalizeRequester(value: string): string {
  return value.trim().replace(/\s+/g, ' ').toLowerCase();
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

export function normalizeEmail(address: string): string {
  const at = address.lastIndexOf('@');
  return `${address.slice(0, at)}@${emailDomain(address) ?? address.slice(at + 1).toLowerCase()}`.toLowerCase();
}

function normalizeDomain(value: string): string {
  return domainToASCII(value.replace(/^@/, '').replace(/\.$/, '')).toLowerCase();
}

async function insertEntry(db: Db, row: Selectable<BlocklistTable>): Promise<void> {
  await db.insertInto('blocklist').values(row).execute();
}

/** Active entries (not expired), newest first. */
export async function listBlocks(deps: ServiceDeps): Promise<BlockEntry[]> {
  const now = iso(deps.clock.now());
  const rows = await deps.store.db
    .selectFrom('blocklist')
    .selectAll()
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .execute();
  return rows.map(toEntry);
}

/**
 * Adds an entry (422 `validation_failed` for bad input). An operator's entry replaces any entry of
 * the same kind and value, so adding again is how an expiry is changed or removed.
 */
export async function addBlock(deps: ServiceDeps, input: BlockInput, source: BlockSource = 'admin'): Promise<BlockEntry> {
  const checked = checkInput(deps, input);
  const row: Selectable<BlocklistTable> = {
    id: `blk-${randomBytes(12).toString('hex')}`,
    kind: checked.kind,
    value: checked.value,
    reason: checked.reason,
    source,
    created_at: iso(deps.clock.now()),
    expires_at: checked.expiresAt,
  };
  await deps.store.db.transaction().execute(async (trx) => {
    await trx.deleteFrom('blocklist').where('kind', '=', row.kind).where('value', '=', row.value).execute();
    await insertEntry(trx, row);
  });
  deps.log.info({ block_id: row.id, kind: row.kind, source }, 'blocklist entry added');
  return toEntry(row);
}

/**
 * The operator blocks a known client by its hash (the sender of a task: only the hash is stored,
 * so there is no address to type). Replaces an entry for the same hash, like addBlock.
 */
export async function addClientHashBlock(deps: ServiceDeps, hash: string, reason: string | null): Promise<BlockEntry> {
  const row: Selectable<BlocklistTable> = {
    id: `blk-${randomBytes(12).toString('hex')}`,
    kind: 'ip',
    value: hash,
    reason: reason === null ? null : reason.slice(0, REASON_MAX),
    source: 'admin',
    created_at: iso(deps.clock.now()),
    expires_at: null,
  };
  await deps.store.db.transaction().execute(async (trx) => {
    await trx.deleteFrom('blocklist').where('kind', '=', 'ip').where('value', '=', hash).execute();
    await insertEntry(trx, row);
  });
  deps.log.info({ block_id: row.id, kind: 'ip', source: 'admin' }, 'blocklist entry added');
  return toEntry(row);
}

export async function removeBlock(deps: ServiceDeps, id: string): Promise<boolean> {
  const result = await deps.store.db.deleteFrom('blocklist').where('id', '=', id).executeTakeFirst();
  const removed = Number(result.numDeletedRows) > 0;
  if (removed) deps.log.info({ block_id: id }, 'blocklist entry removed');
  return removed;
}

/** Auto-block: the client hash itself (no address to hash), unless an active entry exists. */
export async function blockClient(deps: ServiceDeps, hash: string, reason: string, expiresAt: Date): Promise<void> {
  const now = iso(deps.clock.now());
  const active = await deps.store.db
    .selectFrom('blocklist')
    .select('id')
    .where('kind', '=', 'ip')
    .where('value', '=', hash)
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
    .executeTakeFirst();
  if (active) return;
  await insertEntry(deps.store.db, {
    id: `blk-${randomBytes(12).toString('hex')}`,
    kind: 'ip',
    value: hash,
    reason,
    source: 'auto',
    created_at: now,
    expires_at: iso(expiresAt),
  });
  deps.log.warn({ client_hash: hash, expires_at: iso(expiresAt) }, 'client auto-blocked');
}

/** What a submission or message is checked against. */
export interface BlockSubject {
  clientHash: string;
  email?: string | undefined;
  requester?: string | undefined;
}

/** The kind of the first active entry matching the subject, or null. */
export async function matchBlock(deps: ServiceDeps, subject: BlockSubject): Promise<BlockKind | null> {
  const now = iso(deps.clock.now());
  const email = subject.email !== undefined ? normalizeEmail(subject.email) : undefined;
  const domain = subject.email !== undefined ? emailDomain(subject.email) : null;
  // The domain and each parent: a block on spam.dev also covers mail.spam.dev.
  const domains: string[] = [];
  if (domain) {
    const labels = domain.split('.');
    for (let i = 0; i < labels.length - 1; i++) domains.push(labels.slice(i).join('.'));
  }
  const requester = subject.requester !== undefined && subject.requester.trim() !== '' ? normalizeRequester(subject.requester) : undefined;
  const rows = await deps.store.db
    .selectFrom('blocklist')
    .select('kind')
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
    .where((eb) => {
      const matches = [eb.and([eb('kind', '=', 'ip'), eb('value', '=', subject.clientHash)])];
      if (email !== undefined) matches.push(eb.and([eb('kind', '=', 'email'), eb('value', '=', email)]));
      if (domains.length > 0) matches.push(eb.and([eb('kind', '=', 'domain'), eb('value', 'in', domains)]));
      if (requester !== undefined) matches.push(eb.and([eb('kind', '=', 'requester'), eb('value', '=', requester)]));
      return eb.or(matches);
    })
    .execute();
  const kinds = new Set(rows.map((r) => r.kind));
  return BLOCK_KINDS.find((k) => kinds.has(k)) ?? null;
}

const BLOCKED_TEXT: Record<BlockKind, string> = {
  ip: 'Submissions from this client are blocked (repeated abuse or the operator\'s decision).',
  email: 'This e-mail address is blocked.',
  domain: 'This e-mail domain is blocked.',
  requester: 'This requester is blocked.',
};

export function clientBlocked(kind: BlockKind): AppError {
  return new AppError('client_blocked', BLOCKED_TEXT[kind]);
}
