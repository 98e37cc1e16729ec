import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import Type from 'typebox';
import { isAppError } from '../../../domain/errors.js';
import type { SafeHtml } from '../../../domain/html.js';
import { actorOf } from '../../../http/admin-auth.js';
import { decideApproval, waitingApprovals } from '../../../services/console/approvals.js';
import type { ServiceDeps } from '../../../services/context.js';
import { type ConsoleKit, FOR_OPERATOR, type Form, HIDDEN, PARAM, text } from '../console-kit.js';
import { flash } from '../layout.js';
import { approveView } from './approve-view.js';

/**
 * The "Approve" view's routes (docs/approvals.md): the list, and one form post per decision, over
 * services/console/approvals.ts as the admin API. A session opened with a passkey must send its
 * device's assertion with an approval (the view's script gets it); a refusal shows the page again with why.
 */
export function registerApproveRoutes(plain: FastifyInstance, deps: ServiceDeps, kit: ConsoleKit): void {
  const { render, session, guarded } = kit;
  const scope = plain.withTypeProvider<TypeBoxTypeProvider>();

  const show = async (request: FastifyRequest, reply: FastifyReply, notice?: SafeHtml, status = 200) => {
    const { waiting, operators, names } = await waitingApprovals(deps, actorOf(request));
    const body = approveView({ session: session(request), now: deps.clock.now(), waiting, operators, names, notice });
    return render(reply, session(request), 'approve', 'Approve', body, status);
  };

  scope.get('/operator/approve', { ...guarded, config: FOR_OPERATOR }, async (request, reply) => show(request, reply, kit.doneNotice(request)));

  scope.post(
    '/operator/approve/:task_id',
    { ...guarded, config: FOR_OPERATOR, schema: { ...HIDDEN, params: Type.Object({ task_id: PARAM }) } },
    async (request, reply) => {
      const form = (request.body ?? {}) as Form;
      const decision = text(form, 'decision');
      const reason = text(form, 'reason');
      const assertion = text(form, 'assertion');
      try {
        let signed: unknown;
        if (assertion) {
          try {
            signed = JSON.parse(assertion);
          } catch {
            signed = assertion;
          }
        }
        await decideApproval(
          deps,
          actorOf(request),
          request.params.task_id,
          { decision, ...(reason ? { reason } : {}), ...(signed !== undefined ? { assertion: signed } : {}) },
          { passkeySession: session(request).credential.kind === 'passkey' },
        );
      } catch (error) {
        if (!isAppError(error) || error.status >= 500 || error.code === 'forbidden' || error.code === 'task_not_found') throw error;
        return show(request, reply, flash('error', error.message, (error.extras.details as string[] | undefined) ?? []), error.status);
      }
      return reply.redirect(`/operator/approve?done=${decision === 'send_back' ? 'sent_back' : 'approved'}`, 303);
    },
  );
}
