import formbody from '@fastify/formbody';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { addBlock, listBlocks, removeBlock, type BlockInput } from '../../abuse/blocklist.js';
import { AppError, isAppError } from '../../domain/errors.js';
import { TASK_ID_PATTERN } from '../../domain/ids.js';
import { iso, parseDateTime } from '../../domain/time.js';
import { adminKeyMatches } from '../../http/admin-auth.js';
import { countOutbox, listOutbox, OUTBOX_STATUSES, retryOutbox, type OutboxStatus } from '../../mail/admin.js';
import type { ServiceDeps } from '../../services/deps.js';
import { adminStats, countByStatus, listMessages, listQueue, messagesNamingAny, viewTask } from '../../services/operator.js';
import { blockTaskSender } from '../../services/block-sender.js';
import { replyToMessage } from '../../services/message-replies.js';
import { checkPatchNow, patchTask } from '../../services/operator-transitions.js';
import { html, type SafeHtml } from '../html.js';
import { CONSOLE_CSS, CONSOLE_JS } from './assets.js';
import { flash, page, type Section } from './layout.js';
import { registerLiveRoute } from './live.js';
import { registerPwaRoutes } from './pwa.js';
import { unseenTasks } from '../../services/live-console.js';
import { csrfMatches, endSession, readSession, startSession, type Session } from './session.js';
import { blocklistView, loginView, messagesView, outboxView, statsView, type BlocklistForm } from './views/lists.js';
import { queueView } from './views/queue.js';
import { deliverConfirmView } from './views/deliver-confirm.js';
import { WITHDRAWN_REASON, type BlockDraft } from './views/talk.js';
import { taskView } from './views/task.js';

/**
 * The operator console at /operator: server-rendered pages over the same services as the admin
 * API. Registered in its own encapsulated scope, so the form-body parser, the HTML error pages and
 * the strict security headers apply here and nowhere else (the JSON API keeps answering 415 to forms).
 */

type Form = Record<string, unknown>;
declare module 'fastify' {
  interface FastifyRequest {
    operatorSession?: Session;
  }
}

// connect-src 'self': the live queue's event stream and page refreshes (live.ts).
// manifest-src, worker-src: the installable console (pwa.ts).
const CSP = "default-src 'none'; style-src 'self'; script-src 'self'; connect-src 'self'; img-src 'self' data:; manifest-src 'self'; worker-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";
const DONE: Record<string, string> = {
  accepted: 'Task accepted. The requester sees the ETA.',
  delivered: 'Delivered. The receipt is signed and published with the task.',
  rejected: 'Task rejected.',
  notes: 'Draft saved. It stays editable until delivery.',
  eta: 'ETA updated.',
  added: 'Added to the blocklist.',
  removed: 'Removed from the blocklist.',
  retried: 'Queued again; the worker sends it shortly.',
  withdrawn: 'Task withdrawn: rejected with the reason “Withdrawn at the requester’s request.”',
  replied: 'Reply queued: it is mailed to the sender shortly and shown below.',
  blocked: 'Sender blocked. New tasks and messages from it are refused.',
};
// Pages for people: not part of the OpenAPI description.
const HIDDEN = { hide: true } as const;
const TASK_ACTIONS = ['accept', 'deliver', 'reject', 'notes', 'eta', 'withdraw'] as const;
type TaskAction = (typeof TASK_ACTIONS)[number];

function text(form: Form, name: string): string | undefined {
  const value = form[name];
  return typeof value === 'string' ? value : undefined;
}

/** Browsers send textarea line breaks as CRLF; the deliverable (and its hash) uses LF, as the editor shows it. */
function notes(form: Form, name: string): string | undefined {
  return text(form, name)?.replace(/\r\n?/g, '\n');
}

/** A datetime-local value plus the browser's offset (minutes, as getTimezoneOffset gives it) → ISO UTC. */
function localToIso(form: Form, name: string): string | undefined {
  const local = text(form, name)?.trim();
  if (!local) return undefined;
  const parsed = parseDateTime(local);
  if (!parsed) return local;
  const offset = Number(text(form, 'eta_offset') ?? '0');
  const minutes = Number.isInteger(offset) && Math.abs(offset) <= 24 * 60 ? offset : 0;
  return iso(new Date(parsed.getTime() + minutes * 60_000));
}

function safeNext(value: string | undefined): string {
  return value && /^\/operator(?:[/?][^\s\\]*)?$/.test(value) && !value.startsWith('//') ? value : '/operator';
}

export async function registerConsoleRoutes(app: FastifyInstance, deps: ServiceDeps): Promise<void> {
  await app.register(async (scope) => {
    await scope.register(formbody);

    scope.addHook('onRequest', async (_request, reply) => {
      reply.header('Content-Security-Policy', CSP);
      reply.header('X-Frame-Options', 'DENY');
      reply.header('X-Content-Type-Options', 'nosniff');
      // Task ids are access tokens: never leak them in a Referer.
      reply.header('Referrer-Policy', 'no-referrer');
      reply.header('Cache-Control', 'no-store');
    });

    const render = async (reply: FastifyReply, session: Session | null, section: Section, title: string, body: SafeHtml, status = 200) => {
      const [openCount, unseen] = session
        ? await Promise.all([countByStatus(deps).then((c) => (c.submitted ?? 0) + (c.accepted ?? 0)), unseenTasks(deps)])
        : [undefined, undefined];
      return reply
        .code(status)
        .type('text/html; charset=utf-8')
        .send(page({ title, section, session, body, ...(openCount !== undefined ? { openCount } : {}), ...(unseen !== undefined ? { unseen } : {}) }));
    };

    scope.setErrorHandler(async (error: Error & { statusCode?: number }, request, reply) => {
      const known = isAppError(error) ? error : undefined;
      const status = known?.status ?? (typeof error.statusCode === 'number' && error.statusCode < 500 ? error.statusCode : 500);
      if (status >= 500) request.log.error({ err: error }, 'console error');
      if (known) for (const [name, value] of Object.entries(known.headers)) reply.header(name, value);
      const message = status >= 500 ? `Something went wrong on our side. Request id: ${request.id}.` : known?.message ?? 'The request could not be handled.';
      const details = (known?.extras.details as string[] | undefined) ?? [];
      const body = html`${flash('error', message, details)}<p><a href="/operator">← Back to the queue</a></p>`;
      return render(reply, request.operatorSession ?? null, 'none', status === 404 ? 'Not found' : 'Error', body, status);
    });

    /** Signed-in operators only; POSTs must also carry the session's CSRF token. */
    const requireSession = async (request: FastifyRequest, reply: FastifyReply) => {
      const session = await readSession(deps, request);
      if (!session) {
        const next = request.method === 'GET' ? request.url : '/operator';
        return reply.redirect(`/operator/login?next=${encodeURIComponent(safeNext(next))}`, 303);
      }
      if (request.method === 'POST' && !csrfMatches(session, text((request.body ?? {}) as Form, '_csrf'))) {
        request.log.warn('console: POST without a valid CSRF token');
        request.operatorSession = session;
        return render(reply, session, 'none', 'Form expired', html`${flash('error', 'This form has expired or did not come from the console. Reload the page and try again.')}<p><a href="/operator">← Back to the queue</a></p>`, 403);
      }
      request.operatorSession = session;
      return undefined;
    };
    const session = (request: FastifyRequest): Session => {
      if (!request.operatorSession) throw new AppError('unauthorized', 'Sign in first.');
      return request.operatorSession;
    };
    const guarded = { preHandler: requireSession, config: { kind: 'admin' as const }, schema: HIDDEN };

    scope.get('/operator/assets/console.css', { config: { kind: 'none' }, schema: HIDDEN }, async (_request, reply) =>
      reply.header('Cache-Control', 'no-cache').type('text/css; charset=utf-8').send(CONSOLE_CSS),
    );
    scope.get('/operator/assets/console.js', { config: { kind: 'none' }, schema: HIDDEN }, async (_request, reply) =>
      reply.header('Cache-Control', 'no-cache').type('text/javascript; charset=utf-8').send(CONSOLE_JS),
    );

    registerLiveRoute(scope, deps, guarded);
    registerPwaRoutes(scope, deps, guarded);

    scope.get('/operator/login', { config: { kind: 'admin' }, schema: HIDDEN }, async (request, reply) => {
      const next = safeNext(text(request.query as Form, 'next'));
      if (await readSession(deps, request)) return reply.redirect(next, 303);
      return render(reply, null, 'none', 'Sign in', loginView(null, next));
    });

    // Counted as a read so that guessing keys runs into the per-client read limit.
    scope.post('/operator/login', { config: { kind: 'read' }, schema: HIDDEN }, async (request, reply) => {
      const form = (request.body ?? {}) as Form;
      const next = safeNext(text(form, 'next'));
      if (!adminKeyMatches(deps.adminKeyHash, text(form, 'key')?.trim())) {
        request.log.warn('console: sign-in with a wrong key');
        return render(reply, null, 'none', 'Sign in', loginView('That is not the operator key.', next), 401);
      }
      startSession(deps, reply);
      request.log.info('console: operator signed in');
      return reply.redirect(next, 303);
    });

    scope.post('/operator/logout', guarded, async (request, reply) => {
      await endSession(deps, reply, session(request));
      return reply.redirect('/operator/login', 303);
    });

    scope.get('/operator', guarded, async (request, reply) => {
      const query = request.query as Form;
      const filter = text(query, 'status') ?? 'open';
      // The longest wait on top by default: the response target is about the oldest task.
      const order = text(query, 'order') === 'newest' ? 'newest' : 'oldest';
      const [queue, counts] = await Promise.all([
        listQueue(deps, { status: filter === 'all' ? undefined : filter, order, cursor: text(query, 'cursor'), limit: 25 }),
        countByStatus(deps),
      ]);
      const mail = await messagesNamingAny(deps, queue.tasks);
      const view = { order, targetHours: deps.profile.response_target_hours, pushKey: deps.vapid.publicKey, mailFallback: deps.config.operatorEmail !== undefined } as const;
      return render(reply, session(request), 'queue', 'Queue', queueView(queue, filter, counts, mail, deps.clock.now(), view));
    });

    const showTask = async (request: FastifyRequest, reply: FastifyReply, taskId: string, notice?: SafeHtml, draft: { notes?: string | undefined; reason?: string | undefined } = {}, status = 200, block?: BlockDraft) => {
      const task = await viewTask(deps, taskId);
      const body = taskView({ task, session: session(request), now: deps.clock.now(), notice, draft, statusPageUrl: `/tasks?id=${encodeURIComponent(task.task_id)}`, ...(block ? { block } : {}) });
      return render(reply, session(request), 'queue', `Task ${task.task_id.slice(0, 18)}…`, body, status);
    };

    scope.get('/operator/tasks/:task_id', guarded, async (request, reply) => {
      const { task_id } = request.params as { task_id: string };
      const done = text(request.query as Form, 'done');
      return showTask(request, reply, task_id, done && DONE[done] ? flash('ok', DONE[done]) : undefined);
    });

    scope.post('/operator/tasks/:task_id/:action', guarded, async (request, reply) => {
      const { task_id, action } = request.params as { task_id: string; action: string };
      if (!(TASK_ACTIONS as readonly string[]).includes(action)) throw new AppError('not_found', 'No such action.');
      const form = (request.body ?? {}) as Form;
      const patch = patchFor(action as TaskAction, form);
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
        await patchTask(deps, task_id, patch);
      } catch (error) {
        if (!isAppError(error) || error.code === 'task_not_found') throw error;
        const details = (error.extras.details as string[] | undefined) ?? [];
        const draft = action === 'reject' ? { reason: notes(form, 'operator_notes') } : { notes: notes(form, 'operator_notes') };
        return showTask(request, reply, task_id, flash('error', error.message, details), draft, error.status);
      }
      const done = action === 'accept' ? 'accepted' : action === 'deliver' ? 'delivered' : action === 'reject' ? 'rejected' : action === 'withdraw' ? 'withdrawn' : action;
      return reply.redirect(`/operator/tasks/${encodeURIComponent(task_id)}?done=${done}`, 303);
    });

    // Talking with the operator: a reply to a message, and blocking a task's sender, from the task page.
    scope.post('/operator/messages/:message_id/reply', guarded, async (request, reply) => {
      const { message_id } = request.params as { message_id: string };
      const form = (request.body ?? {}) as Form;
      const taskId = text(form, 'task_id') ?? '';
      const back = TASK_ID_PATTERN.test(taskId) ? `/operator/tasks/${taskId}` : '/operator/messages';
      try {
        await replyToMessage(deps, message_id, { message: notes(form, 'message') ?? '' });
      } catch (error) {
        if (!isAppError(error) || !TASK_ID_PATTERN.test(taskId) || error.code === 'not_found') throw error;
        return showTask(request, reply, taskId, flash('error', `The reply was not sent: ${error.message}`, (error.extras.details as string[] | undefined) ?? []), {}, error.status);
      }
      return reply.redirect(`${back}?done=replied`, 303);
    });

    scope.post('/operator/tasks/:task_id/block', guarded, async (request, reply) => {
      const { task_id } = request.params as { task_id: string };
      const form = (request.body ?? {}) as Form;
      const kind = text(form, 'kind') ?? '';
      const reason = text(form, 'reason');
      try {
        await blockTaskSender(deps, task_id, kind, reason);
      } catch (error) {
        if (!isAppError(error) || error.code === 'task_not_found') throw error;
        return showTask(request, reply, task_id, flash('error', error.message, (error.extras.details as string[] | undefined) ?? []), {}, error.status, { kind, reason });
      }
      return reply.redirect(`/operator/tasks/${encodeURIComponent(task_id)}?done=blocked`, 303);
    });

    scope.get('/operator/messages', guarded, async (request, reply) => {
      const list = await listMessages(deps, { cursor: text(request.query as Form, 'cursor'), limit: 25 });
      const ids = [...new Set(list.messages.flatMap((m) => m.task_ids))];
      const rows = ids.length > 0 ? await deps.store.db.selectFrom('tasks').select(['id', 'status']).where('id', 'in', ids).execute() : [];
      const statuses = new Map(rows.map((r) => [r.id, r.status]));
      return render(reply, session(request), 'messages', 'Messages', messagesView(list, statuses, deps.clock.now()));
    });

    const showBlocklist = async (request: FastifyRequest, reply: FastifyReply, notice?: SafeHtml, form: BlocklistForm = {}, status = 200) => {
      const entries = await listBlocks(deps);
      return render(reply, session(request), 'blocklist', 'Blocklist', blocklistView(entries, session(request), deps.clock.now(), form, notice), status);
    };
    scope.get('/operator/blocklist', guarded, async (request, reply) => {
      const done = text(request.query as Form, 'done');
      return showBlocklist(request, reply, done && DONE[done] ? flash('ok', DONE[done]) : undefined);
    });
    scope.post('/operator/blocklist', guarded, async (request, reply) => {
      const form = (request.body ?? {}) as Form;
      const input: BlockInput = { kind: (text(form, 'kind') ?? '') as BlockInput['kind'], value: text(form, 'value') ?? '' };
      const reason = text(form, 'reason')?.trim();
      if (reason) input.reason = reason;
      const expires = localToIso(form, 'expires_local');
      if (expires) input.expires_at = expires;
      try {
        await addBlock(deps, input);
      } catch (error) {
        if (!isAppError(error)) throw error;
        const details = (error.extras.details as string[] | undefined) ?? [];
        return showBlocklist(request, reply, flash('error', error.message, details), { kind: input.kind, value: input.value, reason: reason ?? '' }, error.status);
      }
      return reply.redirect('/operator/blocklist?done=added', 303);
    });
    scope.post('/operator/blocklist/:id/remove', guarded, async (request, reply) => {
      const removed = await removeBlock(deps, (request.params as { id: string }).id);
      if (!removed) return showBlocklist(request, reply, flash('error', 'That entry is no longer on the blocklist.'), {}, 404);
      return reply.redirect('/operator/blocklist?done=removed', 303);
    });

    const showOutbox = async (request: FastifyRequest, reply: FastifyReply, notice?: SafeHtml, status = 200) => {
      const raw = text(request.query as Form, 'status') ?? 'all';
      const filter = (OUTBOX_STATUSES as readonly string[]).includes(raw) ? (raw as OutboxStatus) : undefined;
      const [entries, counts] = await Promise.all([listOutbox(deps, filter ? { status: filter, limit: 100 } : { limit: 100 }), countOutbox(deps)]);
      return render(reply, session(request), 'outbox', 'Outbox', outboxView(entries, counts, filter ?? 'all', session(request), deps.clock.now(), notice), status);
    };
    scope.get('/operator/outbox', guarded, async (request, reply) => {
      const done = text(request.query as Form, 'done');
      return showOutbox(request, reply, done && DONE[done] ? flash('ok', DONE[done]) : undefined);
    });
    scope.post('/operator/outbox/:id/retry', guarded, async (request, reply) => {
      const retried = await retryOutbox(deps, (request.params as { id: string }).id);
      if (!retried) return showOutbox(request, reply, flash('error', 'Only a failed mail can be retried; this one is pending, sent or gone.'), 409);
      return reply.redirect('/operator/outbox?status=pending&done=retried', 303);
    });

    scope.get('/operator/stats', guarded, async (request, reply) => {
      const stats = await adminStats(deps, { days: text(request.query as Form, 'days') });
      return render(reply, session(request), 'stats', 'Stats', statsView(stats, deps.clock.now()));
    });
  });
}

/** The PATCH body each console action sends to the one transition service. */
function patchFor(action: TaskAction, form: Form): Record<string, unknown> {
  switch (action) {
    case 'accept': {
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
