import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import Type from 'typebox';
import { isAppError } from '../../../domain/errors.js';
import type { SafeHtml } from '../../../domain/html.js';
import { actorOf } from '../../../http/admin-auth.js';
import { addBlock, type BlockInput, listBlocks, removeBlock } from '../../../services/console/blocklist.js';
import { adminStats, listMessages } from '../../../services/console/reads.js';
import type { ServiceDeps } from '../../../services/context.js';
import { countOutbox, listOutbox, OUTBOX_STATUSES, type OutboxStatus, retryOutbox } from '../../../services/delivery/outbox-admin.js';
import { repliesByMessage } from '../../../services/messages/replies.js';
import { doneStates, namedTasks, waitingMessages } from '../../../services/messages/states.js';
import { type ConsoleKit, FOR_ADMIN, FOR_OPERATOR, type Form, HIDDEN, isForm, localToIso, OPEN_QUERY, PARAM, QUERY_FIELD, text } from '../console-kit.js';
import { flash } from '../layout.js';
import { type BlocklistForm, blocklistView, outboxView, statsView } from './lists-view.js';
import { messagesView } from './messages-view.js';

/** The most waiting messages one page shows (newest first); the count says how many wait in all. */
const WAITING_PAGE = 50;

/** The console's lists: messages, blocklist, outbox and stats. */
export function registerListRoutes(plain: FastifyInstance, deps: ServiceDeps, kit: ConsoleKit): void {
  const { render, session, guarded } = kit;
  // Typed from the route schemas: handlers read query and params without casts.
  const scope = plain.withTypeProvider<TypeBoxTypeProvider>();
  const asAdmin = { ...guarded, config: FOR_ADMIN };
  const withId = { ...guarded, config: FOR_ADMIN, schema: { ...HIDDEN, params: Type.Object({ id: PARAM }) } };
  const messagesQuery = {
    ...guarded,
    config: FOR_OPERATOR,
    schema: { ...HIDDEN, querystring: Type.Object({ cursor: QUERY_FIELD, show: QUERY_FIELD, reply: QUERY_FIELD }, OPEN_QUERY) },
  };
  // The inbox of messages (docs/inbox.md): the waiting ones by default, all of them a tab away.
  scope.get('/operator/messages', messagesQuery, async (request, reply) => {
    const show = text(request.query, 'show') === 'all' ? 'all' : 'waiting';
    // The header's counts hold the waiting total: read once, beside the list.
    const [list, { waiting: waitingTotal }] = await Promise.all([
      show === 'all'
        ? listMessages(deps, { cursor: text(request.query, 'cursor'), limit: 25 })
        : waitingMessages(deps, WAITING_PAGE).then((messages) => ({ messages, next_cursor: null })),
      kit.headerCounts(request),
    ]);
    const ids = list.messages.map((m) => m.message_id);
    const [tasks, replies, done] = await Promise.all([
      namedTasks(
        deps,
        list.messages.flatMap((m) => m.task_ids.slice(0, 1)),
      ),
      repliesByMessage(deps, ids),
      doneStates(deps, ids),
    ]);
    const next = list.next_cursor ? `/operator/messages?show=all&cursor=${encodeURIComponent(list.next_cursor)}` : null;
    return render(
      reply,
      session(request),
      'messages',
      'Messages',
      messagesView({
        messages: list.messages,
        show,
        waitingTotal,
        session: session(request),
        replies,
        done,
        tasks,
        now: deps.clock.now(),
        replyTo: text(request.query, 'reply'),
        notice: kit.doneNotice(request),
        next,
      }),
    );
  });

  const showBlocklist = async (request: FastifyRequest, reply: FastifyReply, notice?: SafeHtml, form: BlocklistForm = {}, status = 200) => {
    const cursor = isForm(request.query) ? text(request.query, 'cursor') : undefined;
    const page = await listBlocks(deps, cursor === undefined ? {} : { cursor });
    return render(reply, session(request), 'blocklist', 'Blocklist', blocklistView(page, session(request), deps.clock.now(), form, notice), status);
  };
  const blocklistQuery = { ...asAdmin, schema: { ...HIDDEN, querystring: Type.Object({ cursor: QUERY_FIELD, done: QUERY_FIELD }, OPEN_QUERY) } };
  scope.get('/operator/blocklist', blocklistQuery, async (request, reply) => {
    return showBlocklist(request, reply, kit.doneNotice(request));
  });
  scope.post('/operator/blocklist', asAdmin, async (request, reply) => {
    const form = (request.body ?? {}) as Form;
    const input: BlockInput = { kind: (text(form, 'kind') ?? '') as BlockInput['kind'], value: text(form, 'value') ?? '' };
    const reason = text(form, 'reason')?.trim();
    if (reason) input.reason = reason;
    const expires = localToIso(form, 'expires_local');
    if (expires) input.expires_at = expires;
    try {
      await addBlock(deps, actorOf(request), input);
    } catch (error) {
      if (!isAppError(error)) throw error;
      const details = (error.extras.details as string[] | undefined) ?? [];
      return showBlocklist(
        request,
        reply,
        flash('error', error.message, details),
        { kind: input.kind, value: input.value, reason: reason ?? '' },
        error.status,
      );
    }
    return reply.redirect('/operator/blocklist?done=added', 303);
  });
  scope.post('/operator/blocklist/:id/remove', withId, async (request, reply) => {
    const removed = await removeBlock(deps, actorOf(request), request.params.id);
    if (!removed) return showBlocklist(request, reply, flash('error', 'That entry is no longer on the blocklist.'), {}, 404);
    return reply.redirect('/operator/blocklist?done=removed', 303);
  });

  const showOutbox = async (request: FastifyRequest, reply: FastifyReply, notice?: SafeHtml, status = 200) => {
    const raw = (isForm(request.query) ? text(request.query, 'status') : undefined) ?? 'all';
    const filter = (OUTBOX_STATUSES as readonly string[]).includes(raw) ? (raw as OutboxStatus) : undefined;
    const [entries, counts] = await Promise.all([listOutbox(deps, filter ? { status: filter, limit: 100 } : { limit: 100 }), countOutbox(deps)]);
    return render(
      reply,
      session(request),
      'outbox',
      'Outbox',
      outboxView(entries, counts, filter ?? 'all', session(request), deps.clock.now(), notice),
      status,
    );
  };
  scope.get('/operator/outbox', asAdmin, async (request, reply) => {
    return showOutbox(request, reply, kit.doneNotice(request));
  });
  scope.post('/operator/outbox/:id/retry', withId, async (request, reply) => {
    const retried = await retryOutbox(deps, actorOf(request), request.params.id);
    if (!retried) return showOutbox(request, reply, flash('error', 'Only a failed mail can be retried; this one is pending, sent or gone.'), 409);
    return reply.redirect('/operator/outbox?status=pending&done=retried', 303);
  });

  const statsQuery = { ...guarded, config: FOR_OPERATOR, schema: { ...HIDDEN, querystring: Type.Object({ days: QUERY_FIELD }, OPEN_QUERY) } };
  scope.get('/operator/stats', statsQuery, async (request, reply) => {
    const stats = await adminStats(deps, { days: text(request.query, 'days') });
    return render(reply, session(request), 'stats', 'Stats', statsView(stats, deps.clock.now()));
  });
}
