import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import Type from 'typebox';
import { isAppError } from '../../../domain/errors.js';
import type { SafeHtml } from '../../../domain/html.js';
import { actorOf } from '../../../http/admin-auth.js';
import { patchTask } from '../../../services/console/transitions.js';
import type { ServiceDeps } from '../../../services/context.js';
import { createKey, createOperator, listKeys, listOperators, revokeKey, setOnDuty, updateOperator } from '../../../services/team/operators.js';
import { type ConsoleKit, FOR_ADMIN, FOR_OPERATOR, type Form, HIDDEN, PARAM, text } from '../console-kit.js';
import { flash } from '../layout.js';
import { showTaskPage } from '../task/task-routes.js';
import { managesTeam, teamView } from './team-view.js';

/**
 * The console's team page (contract "A team of operators"): everyone's own duty toggle and personal
 * keys; for admins, the operators (role, disable) and invites. Over services/team/operators.ts, as the
 * API; every form carries the session's CSRF token (the guard checks it).
 */
export function registerTeamRoutes(plain: FastifyInstance, deps: ServiceDeps, kit: ConsoleKit): void {
  const { render, session, guarded } = kit;
  const scope = plain.withTypeProvider<TypeBoxTypeProvider>();

  const show = async (
    request: FastifyRequest,
    reply: FastifyReply,
    extras: { notice?: SafeHtml; secret?: { label: string; value: string } } = {},
    status = 200,
  ) => {
    const actor = actorOf(request);
    const operators = await listOperators(deps);
    const me = actor.kind === 'operator' ? operators.find((op) => op.operator_id === actor.operatorId) : undefined;
    const keys = me ? await listKeys(deps, actor, me.operator_id) : [];
    const body = teamView({ session: session(request), now: deps.clock.now(), me, keys, operators: managesTeam(actor) ? operators : undefined, ...extras });
    return render(reply, session(request), 'team', 'Team', body, status);
  };
  /** A refused form shows the page again with why (422, 409, 404), never a bare error. */
  const orShow = async (request: FastifyRequest, reply: FastifyReply, action: () => Promise<FastifyReply>) => {
    try {
      return await action();
    } catch (error) {
      if (!isAppError(error) || error.status >= 500 || error.code === 'forbidden') throw error;
      return show(request, reply, { notice: flash('error', error.message, (error.extras.details as string[] | undefined) ?? []) }, error.status);
    }
  };

  scope.get('/operator/team', { ...guarded, config: FOR_OPERATOR }, async (request, reply) =>
    show(request, reply, { ...(kit.doneNotice(request) ? { notice: kit.doneNotice(request) as SafeHtml } : {}) }),
  );

  scope.post('/operator/team/invite', { ...guarded, config: FOR_ADMIN }, async (request, reply) =>
    orShow(request, reply, async () => {
      const form = (request.body ?? {}) as Form;
      const created = await createOperator(deps, actorOf(request), {
        name: text(form, 'name') ?? '',
        email: text(form, 'email') ?? '',
        role: text(form, 'role') ?? '',
      });
      return show(request, reply, { secret: { label: `Invite link for ${created.name} (single use, 24 hours):`, value: created.invite_url } });
    }),
  );

  const withOperator = { ...guarded, config: FOR_ADMIN, schema: { ...HIDDEN, params: Type.Object({ operator_id: PARAM }) } };
  scope.post('/operator/team/:operator_id', withOperator, async (request, reply) =>
    orShow(request, reply, async () => {
      const form = (request.body ?? {}) as Form;
      const role = text(form, 'role');
      const disabled = text(form, 'disabled');
      await updateOperator(deps, actorOf(request), request.params.operator_id, {
        ...(role !== undefined ? { role } : {}),
        ...(disabled !== undefined ? { disabled: disabled === 'true' } : {}),
      });
      return reply.redirect('/operator/team?done=team', 303);
    }),
  );

  scope.post('/operator/keys', { ...guarded, config: FOR_OPERATOR }, async (request, reply) =>
    orShow(request, reply, async () => {
      const actor = actorOf(request);
      if (actor.kind !== 'operator')
        return show(request, reply, { notice: flash('error', 'The owner has ADMIN_KEY; personal keys belong to operators.') }, 409);
      const created = await createKey(deps, actor, actor.operatorId);
      return show(request, reply, { secret: { label: 'Your new personal key:', value: created.key } });
    }),
  );

  const withKey = { ...guarded, config: FOR_OPERATOR, schema: { ...HIDDEN, params: Type.Object({ key_id: PARAM }) } };
  scope.post('/operator/keys/:key_id/revoke', withKey, async (request, reply) =>
    orShow(request, reply, async () => {
      const actor = actorOf(request);
      if (actor.kind !== 'operator') return reply.redirect('/operator/team', 303);
      await revokeKey(deps, actor, actor.operatorId, request.params.key_id);
      return reply.redirect('/operator/team?done=key_revoked', 303);
    }),
  );

  // "Take it" and "Give to…" on the task page: the same PATCH as the API's `assignee`.
  const withTask = { ...guarded, config: FOR_OPERATOR, schema: { ...HIDDEN, params: Type.Object({ task_id: PARAM }) } };
  scope.post('/operator/tasks/:task_id/assign', withTask, async (request, reply) => {
    const { task_id } = request.params;
    const chosen = text((request.body ?? {}) as Form, 'assignee') ?? '';
    try {
      await patchTask(deps, actorOf(request), task_id, { assignee: chosen === '' ? null : chosen });
    } catch (error) {
      if (!isAppError(error) || error.code === 'task_not_found') throw error;
      return showTaskPage(deps, kit, request, reply, task_id, {
        notice: flash('error', error.message, (error.extras.details as string[] | undefined) ?? []),
        status: error.status,
      });
    }
    return reply.redirect(`/operator/tasks/${encodeURIComponent(task_id)}?done=assigned`, 303);
  });

  scope.post('/operator/duty', { ...guarded, config: FOR_OPERATOR }, async (request, reply) =>
    orShow(request, reply, async () => {
      const actor = actorOf(request);
      if (actor.kind !== 'operator') return show(request, reply, { notice: flash('error', 'Duty belongs to operators; the owner is not one.') }, 409);
      await setOnDuty(deps, actor, text((request.body ?? {}) as Form, 'on_duty') === '1');
      return reply.redirect('/operator/team?done=duty', 303);
    }),
  );
}
