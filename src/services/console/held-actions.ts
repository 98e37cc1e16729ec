import { randomBytes } from 'node:crypto';
import { AppError, isAppError } from '../../domain/errors.js';
import { type Actor, actorName, type Role, roleAllows } from '../../domain/team/actor.js';
import { iso } from '../../domain/time.js';
import { deleteHeld, dueHeld, findHeld, type HeldActionRow, heldOnTask, insertHeld } from '../../store/console/held-actions-repo.js';
import { deleteEndedSnoozes } from '../../store/console/snoozes-repo.js';
import { type Db, withTransaction } from '../../store/db.js';
import { findMessage } from '../../store/messages/messages-repo.js';
import { enabledOperator } from '../../store/team/operators-repo.js';
import type { ServiceDeps } from '../context.js';
import { parseReply, replyToMessage } from '../messages/replies.js';
import { startPeriodic } from '../runtime/periodic.js';
import { recordAudit } from '../team/audit.js';
import { checkPatchNow, patchTask } from './transitions.js';

/**
 * Undo for the console (docs/inbox.md): an accept, reject, delivery or reply is checked
 * now (so a refusal shows at once) and HELD in the store for CONSOLE_UNDO_SECONDS; then the
 * committer applies it through the very service call the action would have made at once
 * (patchTask, replyToMessage), so the change, its audit row, mail and webhook commit together —
 * in the same transaction as the removal of the held row, so a crash commits it once or not at
 * all. Undo deletes the held row: nothing else was written, so the requester never sees it.
 * REST and MCP stay immediate: undo is a console feature.
 */

export type HeldKind = 'accept' | 'reject' | 'deliver' | 'reply';

export interface HeldAction {
  id: string;
  task_id: string;
  kind: HeldKind;
  commit_at: string;
}

function toHeld(row: HeldActionRow): HeldAction {
  return { id: row.id, task_id: row.task_id, kind: row.kind as HeldKind, commit_at: row.commit_at };
}

/**
 * Checks the action against the store as it is now and holds it; with CONSOLE_UNDO_SECONDS=0 applies
 * it at once instead (undefined). `payload` is the PATCH body, or `{message_id, message}` for a reply.
 */
export async function holdAction(
  deps: ServiceDeps,
  actor: Actor,
  action: { taskId: string; kind: HeldKind; payload: Record<string, unknown> },
): Promise<HeldAction | undefined> {
  const { taskId, kind, payload } = action;
  if (deps.config.undoSeconds === 0) {
    await apply(deps, actor, kind, taskId, payload);
    return undefined;
  }
  if (kind === 'reply') {
    parseReply({ message: payload.message });
    const messageId = String(payload.message_id ?? '');
    if (messageId.length > 200 || !(await findMessage(deps.store.db, messageId))) throw new AppError('not_found', 'No message has that id.');
  } else await checkPatchNow(deps, taskId, payload);
  const now = deps.clock.now();
  const row: HeldActionRow = {
    id: `hld-${randomBytes(12).toString('hex')}`,
    task_id: taskId,
    kind,
    payload: JSON.stringify(payload),
    actor: JSON.stringify(actor),
    created_at: iso(now),
    commit_at: iso(new Date(now.getTime() + deps.config.undoSeconds * 1000)),
  };
  // One change of status at a time: a second would be refused when the first commits. The insert
  // itself decides (a unique index), so two instances racing cannot both hold one.
  if (!(await insertHeld(deps.store.db, row)))
    throw new AppError('invalid_transition', 'An action on this task is waiting to be committed: undo it, or wait a few seconds.', {
      from: 'held',
      to: kind,
    });
  deps.log.info({ task_id: taskId, held_id: row.id, kind }, 'console action held for undo');
  return toHeld(row);
}

/**
 * Applies an action: in a transaction of its own, or inside `trx` when given (the transaction that
 * also deletes its hold, so both commit or neither).
 */
async function apply(deps: ServiceDeps, actor: Actor, kind: HeldKind, taskId: string, payload: Record<string, unknown>, trx?: Db): Promise<void> {
  if (kind === 'reply') await replyToMessage(deps, actor, String(payload.message_id ?? ''), { message: payload.message }, trx);
  else await patchTask(deps, actor, taskId, payload, trx);
}

/**
 * Undoes a held action; undefined when it is no longer held (committed, or undone already). Only
 * the one who acted, or an admin, may undo it (docs/inbox.md#undo): 403 `forbidden` for another operator.
 */
export async function undoHeld(deps: Pick<ServiceDeps, 'store' | 'log'>, actor: Actor, id: string): Promise<HeldAction | undefined> {
  const row = id.length <= 100 ? await findHeld(deps.store.db, id) : undefined;
  if (!row) return undefined;
  if (actor.role !== 'admin' && actorName(actor) !== actorName(JSON.parse(row.actor) as Actor))
    throw new AppError('forbidden', 'Only the operator who took this action, or an admin, may undo it.');
  if (!(await deleteHeld(deps.store.db, id))) return undefined;
  deps.log.info({ task_id: row.task_id, held_id: id, kind: row.kind }, 'held console action undone');
  return toHeld(row);
}

/** One held action, while it is held (the console's page of a reply held from the messages list). */
export async function findHeldAction(deps: Pick<ServiceDeps, 'store'>, id: string): Promise<HeldAction | undefined> {
  const row = id.length <= 100 ? await findHeld(deps.store.db, id) : undefined;
  return row ? toHeld(row) : undefined;
}

/** The actions held on a task now (the task page shows each with its Undo button). */
export async function heldActionsOf(deps: Pick<ServiceDeps, 'store'>, taskId: string): Promise<HeldAction[]> {
  return (await heldOnTask(deps.store.db, taskId)).map(toHeld);
}

/**
 * Commits every held action whose window has passed, in batches. A refusal at commit time (the task
 * changed meanwhile) drops the action with a warning; a store fault leaves it for the next run.
 */
export async function commitDueHeld(deps: ServiceDeps, stopping: () => boolean = () => false): Promise<number> {
  let committed = 0;
  for (;;) {
    const due = await dueHeld(deps.store.db, iso(deps.clock.now()), 20);
    for (const row of due) {
      if (stopping()) return committed;
      if (await commitOne(deps, row)) committed += 1;
    }
    if (due.length < 20) return committed;
  }
}

/** Every held kind is a console action of the operator role (FOR_OPERATOR in src/web/operator). */
const HELD_ROLE: Role = 'operator';

/**
 * The actor as they are now: a held action commits in the name of someone who may still take it.
 * Undefined when the operator was disabled (or no longer has the role) during the undo window.
 */
async function actorNow(db: Db, held: Actor): Promise<Actor | undefined> {
  if (held.kind === 'owner') return held;
  const found = await enabledOperator(db, held.operatorId);
  if (!found || !roleAllows(found.role as Role, HELD_ROLE)) return undefined;
  return { kind: 'operator', operatorId: found.id, role: found.role as Role };
}

async function commitOne(deps: ServiceDeps, row: HeldActionRow): Promise<boolean> {
  const held = JSON.parse(row.actor) as Actor;
  const payload = JSON.parse(row.payload) as Record<string, unknown>;
  try {
    return await withTransaction(deps.store.db, async (trx) => {
      // Undone, or committed by another instance, since it was read.
      if (!(await deleteHeld(trx, row.id))) return false;
      const actor = await actorNow(trx, held);
      if (!actor) {
        // Dropped, and the record says so, in the same transaction as the removal.
        await recordAudit(trx, deps, {
          actor: held,
          action: 'held.dropped',
          taskId: row.task_id || null,
          details: { held_id: row.id, kind: row.kind, reason: 'actor_disabled' },
        });
        deps.log.warn({ task_id: row.task_id, held_id: row.id, kind: row.kind }, 'held console action dropped: its operator may no longer act');
        return false;
      }
      await apply(deps, actor, row.kind as HeldKind, row.task_id, payload, trx);
      return true;
    });
  } catch (error) {
    if (!isAppError(error)) throw error;
    await deleteHeld(deps.store.db, row.id);
    deps.log.warn({ task_id: row.task_id, held_id: row.id, kind: row.kind, code: error.code }, 'held console action refused at commit; dropped');
    return false;
  }
}

/** The committer: started with the background work, so held actions survive a restart in the store. It also forgets ended snoozes. */
export function startHeldCommitter(deps: ServiceDeps): () => Promise<void> {
  return startPeriodic(deps, {
    name: 'held-action commit',
    firstDelayMs: 0,
    intervalMs: deps.config.undoPollMs,
    run: async (stopping) => {
      await commitDueHeld(deps, stopping);
      // Ended snoozes are forgotten on the same timer, so task_snoozes holds only running ones.
      await deleteEndedSnoozes(deps.store.db, iso(deps.clock.now()), 100);
    },
  });
}
