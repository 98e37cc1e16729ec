import { randomBytes } from 'node:crypto';
import type { NetworkHashes, VerifiedAgent } from '../domain/caller.js';
import { AppError } from '../domain/errors.js';
import { emailDomain } from '../domain/network/email.js';
import { BLOCK_KINDS, type BlockKind } from '../domain/tasks/admin-schemas.js';
import { comparisonKey } from '../domain/text.js';
import { iso } from '../domain/time.js';
import { type ActiveBlock, activeBlocksMatching, type BlockMatch, hasActiveBlock, insertBlock } from '../store/abuse-control/blocklist-repo.js';
import type { AbuseDeps } from './context.js';

/**
 * The blocklist: ip (stored as the client hash, never the address), email, domain (the domain and
 * every subdomain) and requester (a task's `requester`, a message's `from`). Entries may expire.
 * Checked on submissions and messages; a match is 403 `client_blocked` naming only the kind. The
 * operator's administration of entries is services/console/blocklist.ts.
 */

export { BLOCK_KINDS, type BlockKind } from '../domain/tasks/admin-schemas.js';
export type BlockSource = 'admin' | 'auto';

/** Requesters compare in the comparison form of agent text (NFKC, invisible characters removed, …). */
export function normalizeRequester(value: string): string {
  return comparisonKey(value);
}

/** Providers whose mailboxes ignore dots in the local part (`b.a.d@gmail.com` is `bad@gmail.com`). */
const DOTLESS_DOMAINS = new Set(['gmail.com', 'googlemail.com']);

/**
 * Addresses compare by mailbox: the domain in ASCII, everything lower-cased, a sub-address
 * (`bad+tag@`, RFC 5233) dropped, and dots ignored where the provider ignores them (Gmail). So a
 * block of `bad@mailbox.org` also matches `bad+tag@mailbox.org`, and a block of `bad@gmail.com`
 * matches `b.a.d@gmail.com`; elsewhere dots name other mailboxes (use a domain block for those).
 */
export function normalizeEmail(address: string): string {
  const at = address.lastIndexOf('@');
  const domain = emailDomain(address) ?? address.slice(at + 1).toLowerCase();
  let local = address.slice(0, at).toLowerCase();
  const plus = local.indexOf('+');
  if (plus > 0) local = local.slice(0, plus);
  if (DOTLESS_DOMAINS.has(domain)) local = local.replace(/\./g, '');
  return `${local}@${domain}`;
}

/**
 * Auto-block: the client hash itself (no address to hash), or a verified agent's key id (the
 * operator sees which agent), unless an active entry exists.
 */
export async function blockClient(
  deps: AbuseDeps,
  client: { clientHash: string; agent?: VerifiedAgent | undefined },
  reason: string,
  expiresAt: Date,
): Promise<void> {
  const now = iso(deps.clock.now());
  const [kind, hash] = client.agent === undefined ? (['ip', client.clientHash] as const) : (['agent_key', client.agent.keyId] as const);
  if (await hasActiveBlock(deps.store.db, kind, hash, now)) return;
  await insertBlock(deps.store.db, {
    id: `blk-${randomBytes(12).toString('hex')}`,
    kind,
    value: hash,
    reason,
    source: 'auto',
    created_at: now,
    expires_at: iso(expiresAt),
    prefix_bits: null,
  });
  deps.log.warn({ client_hash: hash, expires_at: iso(expiresAt) }, 'client auto-blocked');
}

/** What a submission or message is checked against. */
export interface BlockSubject {
  clientHash: string;
  networks?: NetworkHashes | undefined;
  /** A verified agent: its key and directory may be blocked; its address is not its identity. */
  agent?: VerifiedAgent | undefined;
  email?: string | undefined;
  requester?: string | undefined;
}

/** A subject as entries are stored (the store's BlockMatch), with its networks for network entries. */
export interface SubjectMatch extends BlockMatch {
  networks?: NetworkHashes | undefined;
}

/** The subject normalized as entries are stored: e-mail, its domain and each parent, requester. */
export function blockMatchOf(subject: BlockSubject): SubjectMatch {
  const email = subject.email !== undefined ? normalizeEmail(subject.email) : undefined;
  const domain = subject.email !== undefined ? emailDomain(subject.email) : null;
  // The domain and each parent: a block on spam.dev also covers mail.spam.dev.
  const domains: string[] = [];
  if (domain) {
    const labels = domain.split('.');
    for (let i = 0; i < labels.length - 1; i++) domains.push(labels.slice(i).join('.'));
  }
  const normalized = subject.requester === undefined ? '' : normalizeRequester(subject.requester);
  const requester = normalized !== '' ? normalized : undefined;
  // A verified agent is its key: the networks of the address it came from do not name it.
  const networks = subject.agent === undefined ? subject.networks : undefined;
  return { clientHash: subject.clientHash, networks, email, domains, requester, agentKey: subject.agent?.keyId, agentDirectory: subject.agent?.directory };
}

/** Does an ip entry name this client: its own hash, or the hash of its network at the entry's prefix? */
function ipHit(match: SubjectMatch, row: ActiveBlock): boolean {
  if (row.value === match.clientHash) return true;
  if (row.prefix_bits === null || match.networks === undefined) return false;
  // Stored before its prefix was (migration 240): any network the client is in.
  if (row.prefix_bits < 0) return match.networks.all().includes(row.value);
  return match.networks.at(row.prefix_bits) === row.value;
}

/** The kind of the first entry among `active` that matches, in BLOCK_KINDS order, or null. */
export function blockKindFor(match: SubjectMatch, active: ActiveBlock[]): BlockKind | null {
  if (active.length === 0) return null;
  const hits = (kind: BlockKind, value: string | undefined) => value !== undefined && active.some((row) => row.kind === kind && row.value === value);
  const matches: Record<BlockKind, boolean> = {
    ip: active.some((row) => row.kind === 'ip' && ipHit(match, row)),
    email: hits('email', match.email),
    domain: match.domains.some((domain) => hits('domain', domain)),
    requester: hits('requester', match.requester),
    agent_key: hits('agent_key', match.agentKey),
    agent_directory: hits('agent_directory', match.agentDirectory),
  };
  return BLOCK_KINDS.find((kind) => matches[kind]) ?? null;
}

/** The kind of the first active entry matching the subject, or null. */
export async function matchBlock(deps: AbuseDeps, subject: BlockSubject): Promise<BlockKind | null> {
  const match = blockMatchOf(subject);
  return blockKindFor(match, await activeBlocksMatching(deps.store.db, [match], iso(deps.clock.now())));
}

const BLOCKED_TEXT: Record<BlockKind, string> = {
  ip: "Submissions from this client are blocked (repeated abuse or the operator's decision).",
  email: 'This e-mail address is blocked.',
  domain: 'This e-mail domain is blocked.',
  requester: 'This requester is blocked.',
  agent_key: "This agent's signing key is blocked.",
  agent_directory: "This agent's key directory is blocked.",
};

export function clientBlocked(kind: BlockKind): AppError {
  return new AppError('client_blocked', BLOCKED_TEXT[kind]);
}
