import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import Type from 'typebox';
import { AppError, isAppError } from '../../../domain/errors.js';
import { html, type SafeHtml } from '../../../domain/html.js';
import { statusPagePath } from '../../../domain/network/urls.js';
import { actorOf } from '../../../http/admin-auth.js';
import { operatorAttachments } from '../../../services/attachments/attachments.js';
import { proposalChallenge } from '../../../services/console/approvals.js';
import { heldActionsOf, holdAction } from '../../../services/console/held-actions.js';
import { QUEUE_FILTERS } from '../../../services/console/queue-search.js';
import { countByStatus, messagesNamingAny, viewTask } from '../../../services/console/reads.js';
import { getTemplate } from '../../../services/console/templates.js';
import { checkPatchNow, patchTask } from '../../../services/console/transitions.js';
import type { ServiceDeps } from '../../../services/context.js';
import { listWebhooks, retryWebhook } from '../../../services/delivery/webhooks.js';
import { doneStates, markDone, namedTasks, waitingMessages } from '../../../services/messages/states.js';
import { coverage } from '../../../services/tasks/coverage.js';
import { taskAudit } from '../../../services/team/audit.js';
import { assignmentCounts, listOperators } from '../../../services/team/operators.js';
import {
  type ConsoleKit,
  FOR_ADMIN,
  FOR_OPERATOR,
  type Form,
  HIDDEN,
  isForm,
  localToIso,
  notes,
  OPEN_QUERY,
  PARAM,
  QUERY_FIELD,
  TASK_ACTIONS,
  type TaskAction,
  text,
} from '../console-kit.js';
import { flash, taskTitle } from '../layout.js';
import { assignmentCard, assignmentTabs } from '../queue/assignment-view.js';
import { inboxList, inboxQueue, toolbarQuery } from '../queue/inbox-queue.js';
import { queueView } from '../queue/queue-view.js';
import { serviceLevelSlot, serviceLevelView } from '../queue/service-level-view.js';
import { queueToolbar } from '../queue/toolbar-view.js';
import { type BlockDraft, WITHDRAWN_REASON } from '../talk/talk-view.js';
import { registerConsoleAttachmentRoutes } from './attachment-routes.js';
import { deliverConfirmView } from './deliver-confirm-view.js';
import { heldChange, taskInboxTools } from './inbox-task.js';
import type { ResultDraft } from './result-form-view.js';
import { taskView } from './task-view.js';

export interface TaskPageExtras {
  notice?: SafeHtml | undefined;
  draft?: { notes?: string | undefined; reason?: string | undefined };
  status?: number;
  /** What the operator chose before a refused block (talk-routes.ts). */
  block?: BlockDraft;
  /** The result form of a task with a response schema, as last posted (result-routes.ts). */
  result?: ResultDraft;
  /** A question refused (question-routes.ts), kept in the ask form. */
  questionDraft?: string;
  /** A template chosen with "Use" (docs/inbox.md): a delivery template fills the deliverable, a canned reply the reply form. */
  template?: string | undefined;
}

/** The task page, with everything its blocks need; also used by talk-routes.ts to show a refusal. */
export async function showTaskPage(
  deps: ServiceDeps,
  kit: ConsoleKit,
  request: FastifyRequest,
  reply: FastifyReply,
  taskId: string,
  extras: TaskPageExtras = {},
): Promise<FastifyReply> {
  const task = await viewTask(deps, taskId);
  const files = await operatorAttachments(deps, task.task_id);
  const limits = { maxPerTask: deps.config.attachments.maxPerTask, maxBytes: deps.config.attachments.maxBytes };
  const webhooks = await listWebhooks(deps, { taskId: task.task_id });
  const audit = await taskAudit(deps, task.task_id);
  const messageDone = await doneStates(
    deps,
    task.messages.map((m) => m.message_id),
  );
  const session = kit.session(request);
  const assignment = assignmentCard({ taskId: task.task_id, assignee: task.assignee, operators: await listOperators(deps), actor: session.actor, session });
  const { status = 200, block, result, questionDraft } = extras;
  const template = extras.template ? await getTemplate(deps, extras.template) : undefined;
  const draft = template?.kind === 'result' && extras.draft?.notes === undefined ? { ...extras.draft, notes: template.body } : (extras.draft ?? {});
  const held = await heldActionsOf(deps, task.task_id);
  const notice = html`${extras.notice ?? ''}${await taskInboxTools(deps, session, task, held, template)}`;
  const body = taskView({
    task,
    session,
    now: deps.clock.now(),
    notice,
    draft,
    statusPageUrl: statusPagePath(task.task_id),
    files,
    limits,
    webhooks,
    audit,
    assignment,
    ...(block ? { block } : {}),
    ...(result ? { result } : {}),
    questionDraft,
    messageDone,
    held: heldChange(held),
  });
  return kit.render(reply, session, 'queue', taskTitle(task, 40), body, status);
}

/** Waiting messages at the top of the inbox; the rest are a link away on the messages page. */
const INBOX_MESSAGES = 5;

/** The console's queue, task page and task actions (accept, deliver, reject, notes, eta, withdraw, webhook retry). */
export function registerTaskRoutes(plain: FastifyInstance, deps: ServiceDeps, kit: ConsoleKit): void {
  const { render, session, guarded } = kit;
  registerConsoleAttachmentRoutes(plain, deps, { preHandler: guarded.preHandler });
  // Typed from the route schemas: handlers read query and params without casts.
  const scope = plain.withTypeProvider<TypeBoxTypeProvider>();
  const queueQuery = Type.Object({ status: QUERY_FIELD, order: QUERY_FIELD, test: QUERY_FIELD, view: QUERY_FIELD, cursor: QUERY_FIELD }, OPEN_QUERY);
  scope.get('/operator', { ...guarded, config: FOR_OPERATOR, schema: { ...HIDDEN, querystring: queueQuery } }, async (request, reply) => {
    const query = request.query;
    const filter = text(query, 'status') ?? 'open';
    // The longest wait on top by default: the response target is about the oldest task.
    // Due first by default (docs/questions.md): the earlier of deadline and response target on top.
    const asked = text(query, 'order');
    const order = asked === 'newest' || asked === 'oldest' ? asked : 'due';
    // Test tasks (docs/import.md): ?test=only|exclude narrows any status tab.
    const test = text(query, 'test');
    // Mine / Unassigned / All (docs/team.md): the assignment view narrows every status tab.
    const actor = session(request).actor;
    const view = text(query, 'view') === 'mine' && actor.kind === 'operator' ? 'mine' : text(query, 'view') === 'unassigned' ? 'unassigned' : 'all';
    const assignee = view === 'mine' && actor.kind === 'operator' ? actor.operatorId : view === 'unassigned' ? 'none' : undefined;
    // Search, filters, sorts, snoozes and bulk selection (docs/inbox.md): inbox-queue.ts.
    const search = toolbarQuery(query, { status: filter, order: asked, test, view });
    // The inbox (docs/inbox.md): on the first page of open work, the waiting messages come first
    // (not while searching, filtering or selecting: then only the tasks that match).
    const plain = !search.q && !search.select && QUEUE_FILTERS.every((field) => !search[field]);
    const streamFirst = filter === 'open' && !text(query, 'cursor') && plain;
    // Every read that does not need another's answer goes out at once, the header's counts
    // included: each wait for the store is a turn of a loop that may be busy (docs/performance.md).
    const [inbox, counts, byAssignment, operators, waiting, header] = await Promise.all([
      inboxQueue(deps, search, { status: filter === 'all' ? undefined : filter, order, test, assignee, cursor: text(query, 'cursor'), limit: 25 }),
      countByStatus(deps),
      assignmentCounts(deps, actor),
      listOperators(deps),
      streamFirst ? waitingMessages(deps, INBOX_MESSAGES) : [],
      kit.headerCounts(request),
    ]);
    const { queue } = inbox;
    const waitingTotal = streamFirst ? header.waiting : 0;
    const [mail, named] = await Promise.all([
      messagesNamingAny(deps, queue.tasks),
      namedTasks(
        deps,
        waiting.flatMap((m) => m.task_ids.slice(0, 1)),
      ),
    ]);
    const options = {
      order,
      targetHours: deps.profile.response_target_hours,
      pushKey: deps.vapid.publicKey,
      mailFallback: deps.config.operatorEmail !== undefined,
      test,
      session: session(request),
      assignment: assignmentTabs(view, byAssignment, actor),
      operatorNames: new Map(operators.map((op) => [op.operator_id, op.name])),
      me: actor.kind === 'operator' ? actor.operatorId : undefined,
      waiting,
      waitingTotal,
      named,
      search,
    } as const;
    const list = inboxList(inbox, search, session(request), deps.clock.now());
    const body = html`${kit.doneNotice(request) ?? ''}${
      list
        ? html`${queueToolbar(search, { counts, assignment: options.assignment })}${list}`
        : queueView(queue, filter, counts, mail, deps.clock.now(), options)
    }${serviceLevelSlot('aside')}`;
    return render(reply, session(request), 'queue', 'Queue', body, 200, serviceLevelSlot('sheet'));
  });

  // The service level (docs/coverage.md, For operators): its own page, which also fills the queue's
  // places for it (serviceLevelSlot), so the queue's render never waits for coverage.
  scope.get('/operator/service-level', { ...guarded, config: FOR_OPERATOR, schema: HIDDEN }, async (request, reply) => {
    const level = await coverage(deps);
    const body = html`<div class="page-head"><h1>Service level</h1></div>${serviceLevelView(level)}<div><a class="back" href="/operator">← Back to the queue</a></div>`;
    return render(reply, session(request), 'queue', 'Service level', body);
  });

  const showTask = (
    request: FastifyRequest,
    reply: FastifyReply,
    taskId: string,
    notice?: SafeHtml,
    draft: { notes?: string | undefined; reason?: string | undefined } = {},
    status = 200,
  ) => showTaskPage(deps, kit, request, reply, taskId, { notice, draft, status });

  scope.get(
    '/operator/tasks/:task_id',
    { ...guarded, config: FOR_OPERATOR, schema: { ...HIDDEN, params: Type.Object({ task_id: PARAM }) } },
    async (request, reply) => {
      const { task_id } = request.params;
      const template = isForm(request.query) ? text(request.query, 'template') : undefined;
      return showTaskPage(deps, kit, request, reply, task_id, { notice: kit.doneNotice(request), template });
    },
  );

  const actionParams = Type.Object({ task_id: PARAM, action: PARAM });
  scope.post('/operator/tasks/:task_id/:action', { ...guarded, config: FOR_OPERATOR, schema: { ...HIDDEN, params: actionParams } }, async (request, reply) => {
    const { task_id, action } = request.params;
    if (!(TASK_ACTIONS as readonly string[]).includes(action)) throw new AppError('not_found', 'No such action.');
    const form = (request.body ?? {}) as Form;
    const patch = patchFor(action as TaskAction, form, deps.clock.now());
    const credential = session(request).credential;
    // A passkey session proposes a deliverable needing several approvals signed (docs/approvals.md).
    const assertion = action === 'deliver' && credential.kind === 'passkey' ? text(form, 'assertion') : undefined;
    if (assertion) patch.assertion = parsedAssertion(assertion);
    else if (action === 'deliver' && credential.kind === 'passkey' && text(form, 'confirmed') === '1') {
      const notes = String(patch.operator_notes ?? '');
      const challenge = await proposalChallenge(deps, task_id, notes);
      if (challenge !== null) {
        const sign = { challenge, credential: credential.id };
        return render(reply, session(request), 'queue', 'Sign the proposal', deliverConfirmView(task_id, notes, session(request), sign));
      }
    }
    // A delivery is final: it asks once. With the script, the browser's confirm() sets confirmed=1;
    // without it, this step shows the server-computed hash and asks here.
    if (action === 'deliver' && text(form, 'confirmed') !== '1') {
      try {
        await checkPatchNow(deps, task_id, patch);
      } catch (error) {
        if (!isAppError(error) || error.code === 'task_not_found') throw error;
        const details = (error.extras.details as string[] | undefined) ?? [];
        return showTask(request, reply, task_id, flash('error', error.message, details), { notes: notes(form, 'operator_notes') }, error.status);
      }
      return render(reply, session(request), 'queue', 'Confirm delivery', deliverConfirmView(task_id, String(patch.operator_notes ?? ''), session(request)));
    }
    try {
      // Accept, reject and deliver are held for undo (docs/inbox.md); the other actions apply at once.
      if (action === 'accept' || action === 'reject' || action === 'deliver') {
        const held = await holdAction(deps, actorOf(request), { taskId: task_id, kind: action, payload: patch });
        if (held) return reply.redirect(`/operator/tasks/${encodeURIComponent(task_id)}`, 303);
      } else await patchTask(deps, actorOf(request), task_id, patch);
    } catch (error) {
      if (!isAppError(error) || error.code === 'task_not_found') throw error;
      const details = (error.extras.details as string[] | undefined) ?? [];
      const draft = action === 'reject' ? { reason: notes(form, 'operator_notes') } : { notes: notes(form, 'operator_notes') };
      return showTask(request, reply, task_id, flash('error', error.message, details), draft, error.status);
    }
    // A delivery of a task needing several approvals proposed it: still accepted, waiting (docs/approvals.md).
    const proposed = action === 'deliver' && (await proposalChallenge(deps, task_id, '')) !== null;
    const done =
      action === 'accept'
        ? 'accepted'
        : proposed
          ? 'proposed'
          : action === 'deliver'
            ? 'delivered'
            : action === 'reject'
              ? 'rejected'
              : action === 'withdraw'
                ? 'withdrawn'
                : action;
    // Withdrawn from the messages page: the withdrawal message is dealt with too.
    const messageId = text(form, 'message_id');
    if (action === 'withdraw' && messageId) {
      await markDone(deps, actorOf(request), messageId).catch((error: unknown) => {
        if (!isAppError(error)) throw error;
      });
    }
    // Accepted from the queue's card: back to the queue, where the next card waits.
    if (action === 'accept' && text(form, 'back') === 'queue') return reply.redirect(`/operator?done=${done}`, 303);
    return reply.redirect(`/operator/tasks/${encodeURIComponent(task_id)}?done=${done}`, 303);
  });

  // An undelivered webhook event of the task becomes due now (same use case as the admin API's retry).
  scope.post(
    '/operator/webhooks/:id/retry',
    { ...guarded, config: FOR_ADMIN, schema: { ...HIDDEN, params: Type.Object({ id: PARAM }) } },
    async (request, reply) => {
      const event = await retryWebhook(deps, actorOf(request), request.params.id);
      return reply.redirect(`/operator/tasks/${encodeURIComponent(event.task_id)}?done=webhook`, 303);
    },
  );
}

/** The PATCH body each console action sends to the one transition service. */
function patchFor(action: TaskAction, form: Form, now: Date): Record<string, unknown> {
  switch (action) {
    case 'accept': {
      // The queue's ETA chips send hours from now (the moment of the press, not of the page).
      const hours = Number(text(form, 'eta_hours'));
      if (Number.isInteger(hours) && hours > 0 && hours <= 24 * 365)
        return { status: 'accepted', eta: new Date(now.getTime() + hours * 3_600_000).toISOString() };
      const eta = localToIso(form, 'eta_local');
      return eta ? { status: 'accepted', eta } : { status: 'accepted' };
    }
    case 'deliver':
      return { status: 'delivered', operator_notes: notes(form, 'operator_notes') ?? '' };
    case 'notes':
      return { operator_notes: notes(form, 'operator_notes') ?? '' };
    case 'reject': {
      // An empty reason clears the notes: a saved draft deliverable must not reach the requester as the reason.
      const reason = notes(form, 'operator_notes')?.trim();
      return { status: 'rejected', operator_notes: reason ? reason : null };
    }
    case 'eta':
      return { eta: localToIso(form, 'eta_local') ?? '' };
    case 'withdraw':
      return { status: 'rejected', operator_notes: WITHDRAWN_REASON };
  }
}

/** The assertion field of a signed proposal: the JSON the page's script put there (anything else is refused by the service). */
export function parsedAssertion(value: string): unknown {
  try {
    return JSON.parse(value);
  } catch {
    return value;
  }
}
