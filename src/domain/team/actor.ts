import { AppError } from '../errors.js';

/**
 * Who acts on the operator's side (contract "A team of operators"): the owner (ADMIN_KEY, role
 * admin) or one operator, through a personal key or a console session. Each admin route and
 * console action declares the role it needs (route config `role`); `roleAllows` is the one rule.
 */

export type Role = 'operator' | 'admin';
export const ROLES: readonly Role[] = ['operator', 'admin'];

export type Actor = { kind: 'owner'; role: 'admin' } | { kind: 'operator'; operatorId: string; role: Role };

export const OWNER: Actor = { kind: 'owner', role: 'admin' };

/**
 * What a console session was opened with: ADMIN_KEY, one personal key, or one passkey (by id).
 * The session lives only as long as it: revoking the key or removing the passkey ends it.
 */
export type Credential = { kind: 'admin' } | { kind: 'key'; id: string } | { kind: 'passkey'; id: string };

export const ADMIN_CREDENTIAL: Credential = { kind: 'admin' };

/** A sign-in's outcome: who, and with what (a console session keeps both). */
export interface SignedIn {
  actor: Actor;
  credential: Credential;
}

/** The actor as the audit log and the API name it: an operator_id, or "owner" for ADMIN_KEY. */
export function actorName(actor: Actor): string {
  return actor.kind === 'owner' ? 'owner' : actor.operatorId;
}

/** An admin may do everything an operator may; an operator only what needs the operator role. */
export function roleAllows(has: Role, needs: Role): boolean {
  return has === 'admin' || needs === 'operator';
}

/** 403 `forbidden` unless `actor` has the role a route declares. Undeclared is read as admin (fail closed). */
export function assertRole(actor: Actor, needs: Role | undefined): void {
  const role = needs ?? 'admin';
  if (!roleAllows(actor.role, role)) throw new AppError('forbidden', `This action needs the ${role} role; yours is ${actor.role}.`);
}
