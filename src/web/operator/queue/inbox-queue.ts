import type { SafeHtml } from '../../../domain/html.js';
import type { Queue } from '../../../domain/tasks/admin-schemas.js';
import { ALL_STATUSES, OPEN_STATUSES } from '../../../domain/tasks/task.js';
import { isSearching, QUEUE_FILTERS, type QueueSearch, SEARCH_WINDOW, searchQueue } from '../../../services/console/queue-search.js';
import { listQueue, type QueueOptions } from '../../../services/console/reads.js';
import { listSnoozed } from '../../../services/console/snoozes.js';
import type { ServiceDeps } from '../../../services/context.js';
import type { Session } from '../auth/session.js';
import { type Form, text } from '../console-kit.js';
import { bulkView, snoozedView } from './inbox-lists-view.js';
import { type QueueToolbarQuery, queueHref } from './toolbar-view.js';

/**
 * Which list the queue page shows (docs/inbox.md): the snoozed tasks (`status=snoozed`), a search or
 * filtered list (services/console/queue-search.ts), or the plain queue without the snoozed tasks in its
 * open tab; `select=1` shows the same tasks as a bulk-selection form.
 */

export interface InboxQueue {
  queue: Queue;
  snoozed?: Awaited<ReturnType<typeof listSnoozed>>;
}

/** The toolbar's view of the query string: the queue's own fields plus search, filters and sort. */
export function toolbarQuery(query: Form, base: { status: string; order: string | undefined; test: string | undefined; view: string }): QueueToolbarQuery {
  const out: QueueToolbarQuery = { status: base.status, order: base.order, test: base.test, view: base.view === 'all' ? undefined : base.view };
  for (const field of ['q', ...QUEUE_FILTERS, 'select'] as const) {
    const value = text(query, field);
    if (value !== undefined && value.trim() !== '') out[field] = value.slice(0, 200);
  }
  return out;
}

export async function inboxQueue(deps: ServiceDeps, search: QueueToolbarQuery, options: QueueOptions): Promise<InboxQueue> {
  if (search.status === 'snoozed') {
    const snoozed = await listSnoozed(deps);
    return { queue: { tasks: snoozed.map((s) => s.task), next_cursor: null }, snoozed };
  }
  const filters: QueueSearch = { q: search.q };
  for (const field of QUEUE_FILTERS) filters[field] = search[field];
  if (!isSearching(filters)) return { queue: await listQueue(deps, { ...options, hideSnoozed: search.status === 'open' }) };
  const statuses = statusesOf(options.status);
  const order = options.order === 'oldest' || options.order === 'newest' ? options.order : 'due';
  const isTest = options.test === 'only' ? true : options.test === 'exclude' ? false : undefined;
  const found = await searchQueue(deps, filters, { statuses, order, isTest, limit: 50 });
  if (found.truncated)
    search.note = `Showing the first ${found.tasks.length} matches; more may match. Words are looked for in the ${SEARCH_WINDOW} most recent open tasks: add a filter to narrow.`;
  else search.note = `${found.tasks.length} match${found.tasks.length === 1 ? '' : 'es'}.`;
  return { queue: { tasks: found.tasks, next_cursor: null } };
}

/** The statuses a status tab covers (an unknown one: the open queue). */
function statusesOf(status: string | undefined): string[] {
  if (status === undefined) return [...ALL_STATUSES];
  if (status === 'open') return [...OPEN_STATUSES];
  return (ALL_STATUSES as readonly string[]).includes(status) ? [status] : [...OPEN_STATUSES];
}

/** The snoozed list or the bulk selection, when the query asks for one; undefined for the cards. */
export function inboxList(inbox: InboxQueue, search: QueueToolbarQuery, session: Session, now: Date): SafeHtml | undefined {
  if (inbox.snoozed) return snoozedView(inbox.snoozed, session, now);
  if (search.select === '1') return bulkView(inbox.queue.tasks, session, now, queueHref(search, { select: undefined }));
  return undefined;
}
