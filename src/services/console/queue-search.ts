import { validationFailed } from '../../domain/errors.js';
import { ANY_TASK_ID_PATTERN } from '../../domain/ids.js';
import type { AdminTask } from '../../domain/tasks/admin-schemas.js';
import { OPEN_STATUSES } from '../../domain/tasks/task.js';
import { iso } from '../../domain/time.js';
import { findMessage } from '../../store/messages/messages-repo.js';
import { filteredTasks, findTasks, listTasks, type TaskRow } from '../../store/tasks/tasks-repo.js';
import { assigneesOf } from '../../store/team/assignments-repo.js';
import type { ServiceDeps } from '../context.js';
import { toAdminTask } from './reads.js';

/**
 * Search, filters and the deadline/ETA sorts of the console queue (docs/inbox.md). Every
 * read is bounded whatever the history:
 * - a task id or message id is one primary-key lookup; an e-mail address is a walk of
 *   tasks_contact_queue_idx per status;
 * - other words are matched in the most recent SEARCH_WINDOW open tasks per status (the live queue
 *   the operator and deadlines keep short), read through the queue index;
 * - each filter drives one index walk per status that stops after `limit + 1` rows; the other filters
 *   narrow those rows here, so a page never reads more than the statuses × (limit + 1).
 */

/**
 * The filters besides the search words, in the order the console's toolbar shows them: `type` a
 * task type (e.g. real_world_verification); `location` `onsite`, `remote` or words of the place;
 * `requester` an e-mail address (the contact) or words of the requester's name; `deadline_before`
 * YYYY-MM-DD, a deadline on or before that day (UTC); `overdue` `1`, past its ETA, deadline or
 * response target; `sort` `deadline` or `eta`, soonest first (otherwise the queue's order).
 */
export const QUEUE_FILTERS = ['type', 'location', 'requester', 'deadline_before', 'overdue', 'sort'] as const;
export type QueueFilter = (typeof QUEUE_FILTERS)[number];

/** The console's search and filters, as the queue's query string carries them (all optional); `q` is words, a task id, a message id or an e-mail address. */
export type QueueSearch = { q?: string | undefined } & { [F in QueueFilter]?: string | undefined };

/** How many of the most recent open tasks (per status) a search for words reads. */
export const SEARCH_WINDOW = 500;
const SORTS = ['deadline', 'eta'] as const;
const EMAIL_LIKE = /^[^\s@]+@[^\s@]+$/;
const DAY = /^\d{4}-\d{2}-\d{2}$/;
const MESSAGE_ID = /^msg-\d{4}-[0-9a-f]{8,64}$/;

export interface SearchResult {
  tasks: AdminTask[];
  /** More tasks may match than are shown: narrow the search. */
  truncated: boolean;
}

/** Is any search, filter or new sort given (else the plain queue applies)? */
export function isSearching(search: QueueSearch): boolean {
  return Object.values(search).some((v) => typeof v === 'string' && v.trim() !== '');
}

interface Checked {
  q?: string;
  type?: string;
  onSite?: boolean;
  placeWords?: string;
  email?: string;
  requesterWords?: string;
  deadlineBefore?: string;
  overdue: boolean;
  sort?: (typeof SORTS)[number];
}

function check(search: QueueSearch): Checked {
  const problems: string[] = [];
  const trimmed = (v: string | undefined) => (v === undefined || v.trim() === '' ? undefined : v.trim().slice(0, 200));
  const out: Checked = { overdue: trimmed(search.overdue) === '1' };
  const q = trimmed(search.q);
  if (q) out.q = q;
  const type = trimmed(search.type);
  if (type) {
    if (!/^[a-z_]{1,64}$/.test(type)) problems.push('type must be a task type such as real_world_verification');
    else out.type = type;
  }
  const location = trimmed(search.location);
  if (location === 'onsite' || location === 'remote') out.onSite = location === 'onsite';
  else if (location) out.placeWords = location.toLowerCase();
  const requester = trimmed(search.requester);
  if (requester && EMAIL_LIKE.test(requester)) out.email = requester;
  else if (requester) out.requesterWords = requester.toLowerCase();
  const before = trimmed(search.deadline_before);
  if (before) {
    const day = DAY.test(before) ? new Date(`${before}T00:00:00.000Z`) : undefined;
    if (!day || Number.isNaN(day.getTime())) problems.push('deadline_before must be a date (YYYY-MM-DD)');
    else out.deadlineBefore = iso(new Date(day.getTime() + 86_400_000));
  }
  const sort = trimmed(search.sort);
  if (sort) {
    if (!(SORTS as readonly string[]).includes(sort)) problems.push('sort must be deadline or eta');
    else out.sort = sort as Checked['sort'];
  }
  if (problems.length > 0) throw validationFailed(problems, 'The search has invalid filters; see details.');
  return out;
}

/** The tasks the driving index reads: one walk per status (or a key lookup). */
async function candidates(deps: ServiceDeps, c: Checked, statuses: string[], limit: number, now: Date): Promise<{ rows: TaskRow[]; full: boolean }> {
  const db = deps.store.db;
  const walks = async (read: (status: string) => Promise<TaskRow[]>) => {
    const parts = await Promise.all(statuses.map(read));
    return { rows: parts.flat(), full: parts.some((p) => p.length > limit) };
  };
  const byCreated = (extra: { taskType?: string; contactEmail?: string; onSite?: boolean }) =>
    walks((status) => filteredTasks(db, { status, by: 'created', limit: limit + 1, ...extra }));
  // A message id first: task ids of imported tasks may have any prefix, msg- included.
  if (c.q && MESSAGE_ID.test(c.q)) {
    const message = await findMessage(db, c.q);
    const ids = message ? (JSON.parse(message.task_ids) as unknown[]).filter((id): id is string => typeof id === 'string').slice(0, 50) : [];
    if (message) return { rows: await findTasks(db, ids), full: false };
  }
  if (c.q && ANY_TASK_ID_PATTERN.test(c.q)) return { rows: await findTasks(db, [c.q]), full: false };
  if (c.q && EMAIL_LIKE.test(c.q)) return byCreated({ contactEmail: c.q });
  if (c.q) {
    // Words: the recent open queue only (see the module comment and docs/inbox.md).
    const open = statuses.filter((s) => (OPEN_STATUSES as readonly string[]).includes(s));
    const rows = await listTasks(db, { statuses: open, limit: SEARCH_WINDOW + 1, order: 'newest' });
    return { rows, full: rows.length > SEARCH_WINDOW };
  }
  if (c.email) return byCreated({ contactEmail: c.email });
  if (c.type) return byCreated({ taskType: c.type });
  if (c.onSite !== undefined) return byCreated({ onSite: c.onSite });
  if (c.deadlineBefore) return walks((status) => filteredTasks(db, { status, by: 'deadline', before: c.deadlineBefore, limit: limit + 1 }));
  if (c.overdue) {
    const at = iso(now);
    const due = await walks((status) => filteredTasks(db, { status, by: 'due', before: at, limit: limit + 1 }));
    const late = statuses.includes('accepted') ? await filteredTasks(db, { status: 'accepted', by: 'eta', before: at, limit: limit + 1 }) : [];
    return { rows: [...due.rows, ...late], full: due.full || late.length > limit };
  }
  if (c.sort) return walks((status) => filteredTasks(db, { status, by: c.sort ?? 'deadline', limit: limit + 1 }));
  // Words of a place or a requester's name alone: the recent open queue, as for words.
  const open = statuses.filter((s) => (OPEN_STATUSES as readonly string[]).includes(s));
  const rows = await listTasks(db, { statuses: open, limit: SEARCH_WINDOW + 1, order: 'newest' });
  return { rows, full: rows.length > SEARCH_WINDOW };
}

function contains(value: string | null, words: string): boolean {
  return value !== null && value.toLowerCase().includes(words);
}

/** Every filter, applied to one row (the driving index applied one of them already). */
function matches(row: TaskRow, c: Checked, now: Date): boolean {
  if (c.q && !ANY_TASK_ID_PATTERN.test(c.q) && !MESSAGE_ID.test(c.q)) {
    const words = c.q.toLowerCase();
    const hit = EMAIL_LIKE.test(c.q)
      ? row.contact_email?.toLowerCase() === words
      : [row.description, row.requester, row.location_detail, row.contact_email, row.task_type, row.id].some((v) => contains(v, words));
    if (!hit) return false;
  }
  if (c.type && row.task_type !== c.type) return false;
  if (c.onSite !== undefined && (row.location_required === 1) !== c.onSite) return false;
  if (c.placeWords && !contains(row.location_detail, c.placeWords)) return false;
  if (c.email && row.contact_email?.toLowerCase() !== c.email.toLowerCase()) return false;
  if (c.requesterWords && !contains(row.requester, c.requesterWords) && !contains(row.contact_email, c.requesterWords)) return false;
  if (c.deadlineBefore && !(row.deadline_at !== null && row.deadline_at < c.deadlineBefore)) return false;
  // A sort by deadline or ETA lists the tasks that have one, as its index walk does.
  if (c.sort === 'deadline' && row.deadline_at === null) return false;
  if (c.sort === 'eta' && row.eta === null) return false;
  if (c.overdue) {
    const at = iso(now);
    const late = (row.due_at !== null && row.due_at < at) || (row.status === 'accepted' && row.eta !== null && row.eta < at);
    if (!late) return false;
  }
  return true;
}

/** Soonest first by `column`, tasks without it last; ties by id. */
function soonest(column: 'deadline_at' | 'eta' | 'due_at') {
  return (a: TaskRow, b: TaskRow) => {
    const x = a[column] ?? '\uffff';
    const y = b[column] ?? '\uffff';
    return x < y ? -1 : x > y ? 1 : a.id < b.id ? -1 : 1;
  };
}

/**
 * The queue narrowed by a search: at most `limit` tasks of `statuses`, sorted by `sort` (deadline,
 * ETA) or else by the queue's order. Refuses bad filter values with validation_failed (422).
 */
export async function searchQueue(
  deps: ServiceDeps,
  search: QueueSearch,
  options: { statuses: string[]; order: 'newest' | 'oldest' | 'due'; isTest?: boolean | undefined; limit?: number },
): Promise<SearchResult> {
  const c = check(search);
  const limit = options.limit ?? 50;
  const now = deps.clock.now();
  const { rows, full } = await candidates(deps, c, options.statuses, limit, now);
  const seen = new Set<string>();
  // A task or message id finds its tasks whatever the status tab: the operator typed it to get there.
  const byKey = c.q !== undefined && (MESSAGE_ID.test(c.q) || ANY_TASK_ID_PATTERN.test(c.q));
  const kept = rows.filter((row) => {
    if (seen.has(row.id) || (!byKey && !options.statuses.includes(row.status))) return false;
    seen.add(row.id);
    if (options.isTest !== undefined && (row.is_test === 1) !== options.isTest) return false;
    return matches(row, c, now);
  });
  const by = c.sort === 'eta' ? 'eta' : c.sort === 'deadline' || c.deadlineBefore ? 'deadline_at' : c.overdue || options.order === 'due' ? 'due_at' : undefined;
  if (by) kept.sort(soonest(by));
  else {
    const sign = options.order === 'oldest' ? 1 : -1;
    kept.sort((a, b) => (a.created_at < b.created_at ? -sign : a.created_at > b.created_at ? sign : a.id < b.id ? -sign : sign));
  }
  const page = kept.slice(0, limit);
  const assignees = await assigneesOf(
    deps.store.db,
    page.map((row) => row.id),
  );
  return { tasks: page.map((row) => toAdminTask(row, assignees.get(row.id) ?? null)), truncated: full || kept.length > limit };
}
