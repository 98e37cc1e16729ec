import { html, type SafeHtml } from '../../../domain/html.js';
import { OPEN_STATUSES } from '../../../domain/task.js';

/**
 * The queue's toolbar: which tasks (status, test tasks, assignment) in which order. One row on
 * every screen: a summary of what is shown that opens a sheet of choices (a <details>, so it works
 * without script). Search, more filters and sorts come here (issue 31, item 3).
 */

export interface QueueToolbarOptions {
  filter: string;
  order: 'oldest' | 'newest' | 'due';
  /** The test-task filter (issue 19): only, exclude, or absent. */
  test?: 'only' | 'exclude' | undefined;
  counts: Record<string, number>;
  /** The assignment views (Mine, Unassigned, All), rendered by assignment.ts. */
  assignment?: SafeHtml | undefined;
}

const FILTERS: [string, string][] = [
  ['open', 'Open'],
  ['submitted', 'Submitted'],
  ['accepted', 'Accepted'],
  ['delivered', 'Delivered'],
  ['rejected', 'Rejected'],
  ['all', 'All'],
];
const ORDERS: [QueueToolbarOptions['order'], string][] = [
  ['due', 'Due first'],
  ['oldest', 'Oldest first'],
  ['newest', 'Newest first'],
];
const TESTS: [string | undefined, string][] = [
  [undefined, 'All tasks'],
  ['only', 'Test tasks only'],
  ['exclude', 'Without test tasks'],
];

export function queueToolbar(options: QueueToolbarOptions): SafeHtml {
  const { filter, order, test, counts } = options;
  const count = (key: string): number => {
    if (key === 'all') return Object.values(counts).reduce((a, b) => a + b, 0);
    if (key === 'open') return OPEN_STATUSES.reduce((sum, status) => sum + (counts[status] ?? 0), 0);
    return counts[key] ?? 0;
  };
  const testPart = test ? `&test=${test}` : '';
  const shown = [
    FILTERS.find(([key]) => key === filter)?.[1] ?? filter,
    ORDERS.find(([key]) => key === order)?.[1] ?? '',
    test === 'only' ? 'test tasks' : test === 'exclude' ? 'no test tasks' : '',
  ]
    .filter(Boolean)
    .join(' · ');
  return html`<details class="toolbar">
    <summary><span class="sub">Showing</span> ${shown}</summary>
    <div class="sheet">
      ${options.assignment ?? ''}
      <nav class="tabs" aria-label="Filter by status">
        ${FILTERS.map(([key, label]) => html`<a href="/operator?status=${key}&amp;order=${order}${testPart}" ${filter === key ? html`aria-current="page"` : ''}>${label}<span class="n">${count(key)}</span></a>`)}
      </nav>
      <nav class="tabs" aria-label="Order">
        ${ORDERS.map(([key, label]) => html`<a href="/operator?status=${filter}&amp;order=${key}${testPart}" ${order === key ? html`aria-current="page"` : ''}>${label}</a>`)}
      </nav>
      <nav class="tabs test-filter" aria-label="Filter test tasks">
        ${TESTS.map(([key, label]) => html`<a href="/operator?status=${filter}&amp;order=${order}${key ? `&test=${key}` : ''}" ${test === key ? html`aria-current="page"` : ''}>${label}</a>`)}
      </nav>
    </div>
  </details>`;
}
