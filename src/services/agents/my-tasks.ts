import { AppError } from '../../domain/errors.js';
import { MY_TASKS_DEFAULT, type MyTasksPage, type MyTasksQuery, MyTasksQuerySchema } from '../../domain/tasks/schemas.js';
import { listAgentTasks, toPublicTask } from '../../store/tasks/tasks-repo.js';
import type { Caller, ServiceDeps } from '../context.js';
import { openToken, signToken } from '../runtime/signed-token.js';
import { queryChecker } from '../tasks/validation.js';

/**
 * "My tasks" without an account (docs/verified-agents.md): a verified agent's own tasks, the
 * public view, newest update first, a page at a time. The cursor is the position of the last
 * task served, signed for this agent and filter: another agent's cursor, or one edited, is
 * `invalid_cursor`. Unsigned: 400 `signature_required`. REST and MCP `list_my_tasks` call this.
 */

const checkQuery = queryChecker<MyTasksQuery>(MyTasksQuerySchema);

export async function listMyTasks(deps: ServiceDeps, caller: Caller, raw: unknown): Promise<MyTasksPage> {
  if (caller.agent === undefined) {
    throw new AppError(
      'signature_required',
      'Listing your own tasks needs a verified Web Bot Auth signature: sign the request with your key (Web Bot Auth; see /api.md, Verified agents).',
    );
  }
  const query = checkQuery(raw);
  const limit = query.limit ?? MY_TASKS_DEFAULT;
  const scope = `cursor:agent:${caller.agent.keyId}:${query.status ?? ''}`;
  let after: { updated_at: string; id: string } | undefined;
  if (query.cursor !== undefined && query.cursor !== '') {
    const text = openToken(deps.secret, scope, query.cursor);
    const parsed = text === null ? null : (JSON.parse(text) as unknown);
    if (!Array.isArray(parsed) || typeof parsed[0] !== 'string' || typeof parsed[1] !== 'string') {
      throw new AppError('invalid_cursor', 'The cursor was not issued for this list (or was changed). Start again without a cursor.');
    }
    after = { updated_at: parsed[0], id: parsed[1] };
  }
  // One row more than the page tells whether another page follows.
  const rows = await listAgentTasks(deps.store.db, caller.agent.keyId, { after, status: query.status, limit: limit + 1 });
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  return {
    tasks: page.map(toPublicTask),
    next_cursor: rows.length > limit && last ? signToken(deps.secret, scope, JSON.stringify([last.updated_at, last.id])) : null,
  };
}
