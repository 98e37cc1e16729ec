import { html, type SafeHtml } from '../../../domain/html.js';
import { OPEN_STATUSES, TASK_TYPES } from '../../../domain/tasks/task.js';
import { QUEUE_FILTERS, type QueueSearch } from '../../../services/console/queue-search.js';
import { INBOX_CSS, KEYS_JS } from '../inbox-assets.js';
import { humanType } from '../layout.js';

/**
 * The queue's toolbar (docs/inbox.md): two rows on every screen. The first is the search box; the second
 * a summary of what is shown ("Showing Open · Due first") that opens a sheet with the assignment
 * views, the status tabs, the order, the test-task filter, the filters and sort, and the tools
 * (select several, snoozed, templates). One GET form, so it works without JavaScript and a search
 * is a link; on a phone the first card stays within 200 px. The keyboard shortcuts' script (`/`
 * focuses the search) is loaded here, on the pages that use it.
 */

/** The queue's current query, as its URL carries it: every field optional but the status tab. */
export interface QueueToolbarQuery extends QueueSearch {
  status: string;
  order?: string | undefined;
  test?: string | undefined;
  view?: string | undefined;
  /** `1`: the bulk-selection list instead of the cards. */
  select?: string | undefined;
  /** A line under the toolbar (e.g. that more tasks match than are shown). */
  note?: string | undefined;
}

/** The queue URL for `query` with `changes` applied (empty values dropped). */
export function queueHref(query: QueueToolbarQuery, changes: Partial<QueueToolbarQuery> = {}): string {
  const merged: Record<string, string | undefined> = { ...query, note: undefined, ...changes };
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(merged)) if (value) params.set(key, value);
  return `/operator?${params.toString()}`;
}

function hidden(name: string, value: string | undefined): SafeHtml | '' {
  return value ? html`<input type="hidden" name="${name}" value="${value}">` : '';
}

function option(value: string, label: string, current: string | undefined): SafeHtml {
  return html`<option value="${value}" ${current === value ? html`selected` : ''}>${label}</option>`;
}

const FILTERS: [string, string][] = [
  ['open', 'Open'],
  ['submitted', 'Submitted'],
  ['accepted', 'Accepted'],
  ['delivered', 'Delivered'],
  ['rejected', 'Rejected'],
  ['all', 'All'],
];
const ORDERS: [string, string][] = [
  ['due', 'Due first'],
  ['oldest', 'Oldest first'],
  ['newest', 'Newest first'],
];
const TESTS: [string | undefined, string][] = [
  [undefined, 'All tasks'],
  ['only', 'Test tasks only'],
  ['exclude', 'Without test tasks'],
];

/** What the sheet shows besides the query: the status counts and the assignment views. */
export interface QueueToolbarContext {
  counts?: Record<string, number>;
  /** The assignment views (Mine, Unassigned, All), rendered by assignment.ts. */
  assignment?: SafeHtml | undefined;
}

export function queueToolbar(query: QueueToolbarQuery, context: QueueToolbarContext = {}): SafeHtml {
  const counts = context.counts ?? {};
  const count = (key: string): number => {
    if (key === 'all') return Object.values(counts).reduce((a, b) => a + b, 0);
    if (key === 'open') return OPEN_STATUSES.reduce((sum, status) => sum + (counts[status] ?? 0), 0);
    return counts[key] ?? 0;
  };
  const filter = query.status;
  const order = query.order ?? 'due';
  const test = query.test === 'only' || query.test === 'exclude' ? query.test : undefined;
  const active = QUEUE_FILTERS.filter((f) => (query[f] ?? '') !== '').length;
  const searching = active > 0 || (query.q ?? '') !== '';
  const location = query.location ?? '';
  const placeWords = location !== 'onsite' && location !== 'remote' ? location : '';
  // The tabs keep the view; a new tab starts a new search.
  const tab = (changes: Partial<QueueToolbarQuery>) => queueHref({ status: filter, order, test, view: query.view }, changes);
  const shown = [
    filter === 'snoozed' ? 'Snoozed' : (FILTERS.find(([key]) => key === filter)?.[1] ?? filter),
    ORDERS.find(([key]) => key === order)?.[1] ?? '',
    test === 'only' ? 'test tasks' : test === 'exclude' ? 'no test tasks' : '',
    active > 0 ? `${active} filter${active > 1 ? 's' : ''}` : '',
  ]
    .filter(Boolean)
    .join(' · ');
  return html`<link rel="stylesheet" href="${INBOX_CSS.url}"><form class="queue-toolbar" method="get" action="/operator" role="search" aria-label="Search and filter the queue">
    ${hidden('status', query.status === 'snoozed' ? 'open' : query.status)}${hidden('order', query.order)}${hidden('test', query.test)}${hidden('view', query.view)}${hidden('select', query.select)}
    <div class="toolbar-row">
      <label class="visually-hidden" for="queue-q">Search</label>
      <input id="queue-q" type="search" name="q" value="${query.q ?? ''}" placeholder="Words, task id, message id, e-mail" autocomplete="off" data-key-search>
      <button class="btn" type="submit">Search</button>
    </div>
    ${query.note ? html`<p class="sub" role="status">${query.note}</p>` : ''}
    <details class="toolbar toolbar-sheet" ${active > 0 ? html`open` : ''}>
      <summary><span class="sub">Showing</span> ${shown}</summary>
      <div class="sheet">
        ${context.assignment ?? ''}
        <nav class="tabs" aria-label="Filter by status">
          ${FILTERS.map(([key, label]) => html`<a href="${tab({ status: key })}" ${filter === key ? html`aria-current="page"` : ''}>${label}<span class="n">${count(key)}</span></a>`)}
        </nav>
        <nav class="tabs" aria-label="Order">
          ${ORDERS.map(([key, label]) => html`<a href="${tab({ order: key })}" ${order === key ? html`aria-current="page"` : ''}>${label}</a>`)}
        </nav>
        <nav class="tabs test-filter" aria-label="Filter test tasks">
          ${TESTS.map(([key, label]) => html`<a href="${tab({ test: key })}" ${test === key ? html`aria-current="page"` : ''}>${label}</a>`)}
        </nav>
        <div class="toolbar-fields">
          <label>Type <select name="type">${option('', 'Any type', query.type)}${TASK_TYPES.map((t) => option(t, humanType(t), query.type))}</select></label>
          <label>Place <select name="location">${option('', 'Anywhere', location)}${option('onsite', 'On site', location)}${option('remote', 'Remote', location)}${
            placeWords ? option(placeWords, `“${placeWords}”`, location) : ''
          }</select></label>
          <label>Requester <input type="text" name="requester" value="${query.requester ?? ''}" placeholder="e-mail or name"></label>
          <label>Deadline by <input type="date" name="deadline_before" value="${query.deadline_before ?? ''}"></label>
          <label class="check"><input type="checkbox" name="overdue" value="1" ${query.overdue === '1' ? html`checked` : ''}> Overdue only</label>
          <label>Sort <select name="sort">${option('', 'Queue order', query.sort)}${option('deadline', 'Deadline, soonest', query.sort)}${option('eta', 'ETA, soonest', query.sort)}</select></label>
          <button class="btn secondary" type="submit">Apply</button>
        </div>
      <nav class="toolbar-links" aria-label="Queue tools">
        ${searching ? html`<a href="${queueHref({ status: query.status, order: query.order, test: query.test, view: query.view })}">Clear search</a>` : ''}
        <a href="${queueHref(query, { select: query.select === '1' ? undefined : '1' })}">${query.select === '1' ? 'Done selecting' : 'Select several'}</a>
        <a href="/operator?status=snoozed" ${query.status === 'snoozed' ? html`aria-current="page"` : ''}>Snoozed</a>
        <a href="/operator/templates">Templates</a>
        <button class="btn ghost small" type="button" data-key-help hidden>Shortcuts (?)</button>
      </nav>
      </div>
    </details>
  </form>
  <script src="${KEYS_JS.url}" defer></script>`;
}
