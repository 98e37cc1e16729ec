import { randomBytes } from 'node:crypto';
import { sha256Hex } from '../../domain/canonical.js';
import { AppError, validationFailed } from '../../domain/errors.js';
import { isPlainAddress } from '../../domain/network/email.js';
import { OPEN_STATUSES } from '../../domain/tasks/task.js';
import { type Actor, type Credential, OWNER, type Role, type SignedIn } from '../../domain/team/actor.js';
import {
  type KeyCreated,
  type KeyView,
  type Operator,
  type OperatorCreated,
  type OperatorInput,
  OperatorInputSchema,
  type OperatorPatch,
  OperatorPatchSchema,
  type PasskeyView,
  PERSONAL_KEY_PATTERN,
} from '../../domain/team/team-schemas.js';
import { iso } from '../../domain/time.js';
import { lockKeys, withTransaction } from '../../store/db.js';
import { countTasksByStatus } from '../../store/tasks/tasks-repo.js';
import { openAssignedCounts } from '../../store/team/assignments-repo.js';
import {
  countActiveAdmins,
  findOperator,
  findOperatorByEmail,
  insertInvite,
  insertKey,
  insertOperator,
  listKeyRows,
  listOperatorRows,
  type OperatorRow,
  operatorOfKey,
  operatorOfSessionKey,
  operatorOfSessionPasskey,
  passkeyById,
  passkeysOf,
  removePasskeyRow,
  revokeKeyRow,
  updateOperatorRow,
} from '../../store/team/operators-repo.js';
import { revokeSession } from '../../store/team/sessions-repo.js';
import type { ServiceDeps } from '../context.js';
import { schemaChecker } from '../tasks/validation.js';
import { notYours, recordAudit } from './audit.js';
import { logPasskey } from './passkeys.js';

/**
 * Operators and their personal keys (contract "A team of operators"): one service for the admin
 * API and the console. Every change commits with its audit entry.
 */

export const INVITE_HOURS = 24;

export function toOperator(row: OperatorRow): Operator {
  return {
    operator_id: row.id,
    name: row.name,
    email: row.email,
    role: row.role as Role,
    disabled: row.disabled === 1,
    on_duty: row.on_duty === 1,
    created_at: row.created_at,
  };
}

const checkInput = schemaChecker<OperatorInput>(OperatorInputSchema, { unknown: 'refuse', notAnObject: 'body must be a JSON object: {name, email, role}' });
const checkPatch = schemaChecker<OperatorPatch>(OperatorPatchSchema, { unknown: 'refuse', notAnObject: 'body must be a JSON object: {role?, disabled?}' });

function operatorNotFound(id: string): AppError {
  return new AppError('not_found', `No operator has the id "${id.slice(0, 80)}".`);
}

/** A fresh invite for `operatorId`: the link (single use, INVITE_HOURS) and what to store of it (its hash). */
async function newInvite(trx: ServiceDeps['store']['db'], deps: ServiceDeps, operatorId: string, now: Date): Promise<string> {
  const token = randomBytes(32).toString('base64url');
  await insertInvite(trx, {
    token_hash: sha256Hex(token),
    operator_id: operatorId,
    created_at: iso(now),
    expires_at: iso(new Date(now.getTime() + INVITE_HOURS * 3_600_000)),
  });
  return `${deps.config.baseUrl}/operator/invite/${token}`;
}

export async function createOperator(deps: ServiceDeps, actor: Actor, raw: unknown): Promise<OperatorCreated> {
  const { value, fieldErrors } = checkInput(raw);
  const name = value.name?.trim();
  const email = value.email?.trim().toLowerCase();
  if (!fieldErrors.some((e) => e.startsWith('name')) && !name) fieldErrors.push('name must not be blank');
  if (email !== undefined && !fieldErrors.some((e) => e.startsWith('email')) && !isPlainAddress(email))
    fieldErrors.push('email must be a valid e-mail address');
  if (fieldErrors.length > 0 || !name || !email) throw validationFailed(fieldErrors);
  const now = deps.clock.now();
  const row: OperatorRow = {
    id: `op-${randomBytes(16).toString('hex')}`,
    name,
    email,
    role: value.role,
    disabled: 0,
    on_duty: 0,
    created_at: iso(now),
    updated_at: iso(now),
  };
  const inviteUrl = await withTransaction(deps.store.db, async (trx) => {
    await lockKeys(trx, deps.store.dialect, [`operator-email:${email}`]);
    if (await findOperatorByEmail(trx, email)) throw validationFailed(['email is already the address of an operator']);
    await insertOperator(trx, row);
    await recordAudit(trx, deps, { actor, action: 'operator.created', details: { operator_id: row.id, role: row.role } });
    return newInvite(trx, deps, row.id, now);
  });
  return { ...toOperator(row), invite_url: inviteUrl };
}

export async function listOperators(deps: ServiceDeps): Promise<Operator[]> {
  return (await listOperatorRows(deps.store.db)).map(toOperator);
}

/**
 * Changes an operator's role or disables them. A change that would leave no enabled admin
 * operator is refused (409), so a team cannot lock itself out of managing itself.
 */
export async function updateOperator(deps: ServiceDeps, actor: Actor, operatorId: string, raw: unknown): Promise<Operator> {
  const { value: patch, fieldErrors } = checkPatch(raw);
  if (fieldErrors.length === 0 && patch.role === undefined && patch.disabled === undefined) fieldErrors.push('send at least one of role, disabled');
  if (fieldErrors.length > 0) throw validationFailed(fieldErrors);
  const now = iso(deps.clock.now());
  return withTransaction(deps.store.db, async (trx) => {
    // One change of the admins at a time on every instance: two demotions cannot both pass the check.
    await lockKeys(trx, deps.store.dialect, ['operators:admins']);
    const current = await findOperator(trx, operatorId);
    if (!current) throw operatorNotFound(operatorId);
    const next = {
      role: patch.role ?? current.role,
      disabled: patch.disabled === undefined ? current.disabled : patch.disabled ? 1 : 0,
    };
    const wasAdmin = current.role === 'admin' && current.disabled === 0;
    const staysAdmin = next.role === 'admin' && next.disabled === 0;
    if (wasAdmin && !staysAdmin && (await countActiveAdmins(trx)) <= 1) {
      throw new AppError('invalid_transition', 'This operator is the last admin: make another operator admin first.', {
        from: 'admin',
        to: next.disabled ? 'disabled' : next.role,
      });
    }
    await updateOperatorRow(trx, operatorId, { ...next, updated_at: now });
    await recordAudit(trx, deps, { actor, action: 'operator.updated', details: { operator_id: operatorId, ...patch } });
    return toOperator({ ...current, ...next, updated_at: now });
  });
}

/** Keys are the operator's own business, or an admin's. */
function assertMayManageKeys(actor: Actor, operatorId: string): void {
  if (actor.role !== 'admin' && !(actor.kind === 'operator' && actor.operatorId === operatorId)) throw notYours("another operator's keys");
}

export async function createKey(deps: ServiceDeps, actor: Actor, operatorId: string): Promise<KeyCreated> {
  assertMayManageKeys(actor, operatorId);
  const key = `hto_${randomBytes(32).toString('base64url')}`;
  const now = iso(deps.clock.now());
  const keyId = `key-${randomBytes(16).toString('hex')}`;
  await withTransaction(deps.store.db, async (trx) => {
    const operator = await findOperator(trx, operatorId);
    if (!operator) throw operatorNotFound(operatorId);
    if (operator.disabled === 1)
      throw new AppError('invalid_transition', 'This operator is disabled: enable them before creating keys.', { from: 'disabled', to: 'key' });
    await insertKey(trx, { id: keyId, operator_id: operatorId, key_hash: sha256Hex(key), created_at: now, revoked_at: null });
    await recordAudit(trx, deps, { actor, action: 'key.created', details: { operator_id: operatorId, key_id: keyId } });
  });
  return { key_id: keyId, key, created_at: now };
}

export async function listKeys(deps: ServiceDeps, actor: Actor, operatorId: string): Promise<KeyView[]> {
  assertMayManageKeys(actor, operatorId);
  if (!(await findOperator(deps.store.db, operatorId))) throw operatorNotFound(operatorId);
  return (await listKeyRows(deps.store.db, operatorId)).map((row) => ({ key_id: row.id, created_at: row.created_at, revoked_at: row.revoked_at }));
}

/** Revokes a key at once on every instance: each request looks its key up in the store. */
export async function revokeKey(deps: ServiceDeps, actor: Actor, operatorId: string, keyId: string): Promise<void> {
  assertMayManageKeys(actor, operatorId);
  await withTransaction(deps.store.db, async (trx) => {
    if (!(await revokeKeyRow(trx, operatorId, keyId, iso(deps.clock.now())))) {
      throw new AppError('not_found', `Operator "${operatorId.slice(0, 80)}" has no live key "${keyId.slice(0, 80)}".`);
    }
    await recordAudit(trx, deps, { actor, action: 'key.revoked', details: { operator_id: operatorId, key_id: keyId } });
  });
}

/** The operator a personal key belongs to, if the key is live and its operator enabled. */
export async function actorOfPersonalKey(deps: ServiceDeps, token: string): Promise<Actor | undefined> {
  return (await signInWithKey(deps, token))?.actor;
}

/** A sign-in with a personal key: its operator, and the key's id (a console session ends with the key). */
export async function signInWithKey(deps: ServiceDeps, token: string): Promise<SignedIn | undefined> {
  if (!PERSONAL_KEY_PATTERN.test(token)) return undefined;
  const found = await operatorOfKey(deps.store.db, sha256Hex(token));
  return found ? { actor: { kind: 'operator', operatorId: found.id, role: found.role as Role }, credential: { kind: 'key', id: found.key_id } } : undefined;
}

export async function listPasskeys(deps: ServiceDeps, actor: Actor, operatorId: string): Promise<PasskeyView[]> {
  assertMayManageKeys(actor, operatorId);
  if (!(await findOperator(deps.store.db, operatorId))) throw operatorNotFound(operatorId);
  return (await passkeysOf(deps.store.db, operatorId)).map((row) => ({
    passkey_id: row.credential_id,
    created_at: row.created_at,
    removed_at: row.removed_at,
  }));
}

/**
 * Removes a passkey at once on every instance: it no longer signs in, and every console session it
 * opened ends (each request reads the session's credential in the store).
 */
export async function removePasskey(deps: ServiceDeps, actor: Actor, operatorId: string, passkeyId: string): Promise<void> {
  assertMayManageKeys(actor, operatorId);
  await withTransaction(deps.store.db, async (trx) => {
    if (!(await removePasskeyRow(trx, operatorId, passkeyId, iso(deps.clock.now())))) {
      throw new AppError('not_found', `Operator "${operatorId.slice(0, 80)}" has no passkey "${passkeyId.slice(0, 80)}".`);
    }
    await recordAudit(trx, deps, { actor, action: 'passkey.removed', details: { operator_id: operatorId, credential_id: passkeyId } });
    const removed = await passkeyById(trx, passkeyId);
    if (removed) await logPasskey(trx, deps, removed);
  });
}

/**
 * The actor of a console session: the owner, or an operator who is still enabled (with their role
 * of now) and whose key or passkey the session was opened with is still live.
 */
export async function actorOfSession(deps: ServiceDeps, operatorId: string | undefined, credential: Credential): Promise<Actor | undefined> {
  // The owner signs in with ADMIN_KEY only (a new ADMIN_KEY signs every session out: session.ts).
  if (operatorId === undefined) return credential.kind === 'admin' ? OWNER : undefined;
  if (credential.kind === 'admin') return undefined;
  const db = deps.store.db;
  const found =
    credential.kind === 'key' ? await operatorOfSessionKey(db, operatorId, credential.id) : await operatorOfSessionPasskey(db, operatorId, credential.id);
  return found ? { kind: 'operator', operatorId: found.id, role: found.role as Role } : undefined;
}

/**
 * Signs a console session out on every instance (its id is revoked until the cookie would have
 * expired anyway), with its audit entry in the same transaction.
 */
export async function signOut(deps: ServiceDeps, actor: Actor, sessionId: string, expiresAt: string): Promise<void> {
  await withTransaction(deps.store.db, async (trx) => {
    await revokeSession(trx, sessionId, expiresAt);
    await recordAudit(trx, deps, { actor, action: 'signout.succeeded', details: { via: 'console' } });
  });
}

/** An operator goes on or off duty (alerts and human.json availability follow). */
export async function setOnDuty(deps: ServiceDeps, actor: Actor & { kind: 'operator' }, onDuty: boolean): Promise<void> {
  await withTransaction(deps.store.db, async (trx) => {
    await updateOperatorRow(trx, actor.operatorId, { on_duty: onDuty ? 1 : 0, updated_at: iso(deps.clock.now()) });
    await recordAudit(trx, deps, { actor, action: onDuty ? 'duty.started' : 'duty.ended' });
  });
}

/** The console's Mine / Unassigned counts of open tasks. */
export async function assignmentCounts(deps: ServiceDeps, actor: Actor): Promise<{ mine: number; unassigned: number }> {
  // Two kept counts, never a count of the queue: open tasks per status (task_counts) and open
  // tasks per assignee (assignment_counts); whatever is open and held by nobody is unassigned.
  const [byStatus, byOperator] = await Promise.all([countTasksByStatus(deps.store.db), openAssignedCounts(deps.store.db)]);
  const open = OPEN_STATUSES.reduce((sum, status) => sum + (byStatus[status] ?? 0), 0);
  const assigned = [...byOperator.values()].reduce((sum, n) => sum + n, 0);
  return { mine: actor.kind === 'operator' ? (byOperator.get(actor.operatorId) ?? 0) : 0, unassigned: Math.max(0, open - assigned) };
}

/** Who is on duty, for human.json: null when the deployment has no operators (the owner works alone). */
export async function onDutyCount(deps: ServiceDeps): Promise<number | null> {
  const operators = await listOperatorRows(deps.store.db);
  if (operators.length === 0) return null;
  return operators.filter((op) => op.on_duty === 1 && op.disabled === 0).length;
}
