import { html, type SafeHtml } from '../../../domain/html.js';
import { TASK_TYPES } from '../../../domain/task.js';
import { humanType } from '../layout.js';

/**
 * The queue's toolbar (issue 31): search, filters and sort as one GET form, so it works without
 * JavaScript and a search is a link. One row (the search box, a collapsed "Filters" sheet, the
 * button) whatever the width: on a phone the filters open as a sheet under it. The keyboard
 * shortcuts' script (`/` focuses the search) is loaded here, on the pages that use it.
 */

/** The queue's current query, as its URL carries it: every field optional but the status tab. */
export interface QueueToolbarQuery {
  status: string;
  order?: string | undefined;
  test?: string | undefined;
  view?: string | undefined;
  q?: string | undefined;
  type?: string | undefined;
  location?: string | undefined;
  requester?: string | undefined;
  deadline_before?: string | undefined;
  overdue?: string | undefined;
  sort?: string | undefined;
  /** `1`: the bulk-selection list instead of the cards. */
  select?: string | undefined;
  /** A line under the toolbar (e.g. that more tasks match than are shown). */
  note?: string | undefined;
}

/** The filter fields (besides q), in the order the sheet shows them. */
export const FILTER_FIELDS = ['type', 'location', 'requester', 'deadline_before', 'overdue', 'sort'] as const;

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

export function queueToolbar(query: QueueToolbarQuery): SafeHtml {
  const active = FILTER_FIELDS.filter((f) => (query[f] ?? '') !== '').length;
  const searching = active > 0 || (query.q ?? '') !== '';
  const location = query.location ?? '';
  const placeWords = location !== 'onsite' && location !== 'remote' ? location : '';
  return html`<link rel="stylesheet" href="/operator/assets/inbox.css"><form class="queue-toolbar" method="get" action="/operator" role="search" aria-label="Search and filter the queue">
    ${hidden('status', query.status === 'snoozed' ? 'open' : query.status)}${hidden('order', query.order)}${hidden('test', query.test)}${hidden('view', query.view)}${hidden('select', query.select)}
    <div class="toolbar-row">
      <label class="visually-hidden" for="queue-q">Search</label>
      <input id="queue-q" type="search" name="q" value="${query.q ?? ''}" placeholder="Words, task id, message id, e-mail" autocomplete="off" data-key-search>
      <button class="btn" type="submit">Search</button>
    </div>
    ${query.note ? html`<p class="sub" role="status">${query.note}</p>` : ''}
    <details class="toolbar-sheet" ${active > 0 ? html`open` : ''}>
      <summary>Filters and sort${active > 0 ? ` (${active})` : ''}</summary>
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
    </details>
    <nav class="toolbar-links" aria-label="Queue tools">
      ${searching ? html`<a href="${queueHref({ status: query.status, order: query.order, test: query.test, view: query.view })}">Clear search</a>` : ''}
      <a href="${queueHref(query, { select: query.select === '1' ? undefined : '1' })}">${query.select === '1' ? 'Done selecting' : 'Select several'}</a>
      <a href="/operator?status=snoozed" ${query.status === 'snoozed' ? html`aria-current="page"` : ''}>Snoozed</a>
      <a href="/operator/templates">Templates</a>
      <button class="btn ghost small" type="button" data-key-help hidden>Shortcuts (?)</button>
    </nav>
  </form>
  <script src="/operator/assets/keys.js" defer></script>`;
}
