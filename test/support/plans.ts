import { CompiledQuery, sql } from 'kysely';
import type { TestApp } from './app.js';

/**
 * Issue 28: the query-plan check behind scale.plans and mail.plans. Every statement a test
 * captured (through the store's query hook) is explained: on SQLite with EXPLAIN QUERY PLAN, on
 * PostgreSQL with EXPLAIN and sequential scans disabled (so a missing index shows as a Seq Scan
 * whatever the table's size).
 */

/** Tables that grow with history; the others hold a handful of rows (settings, keys, operators…). */
const HISTORY = [
  'tasks',
  'messages',
  'message_tasks',
  'outbox',
  'webhook_outbox',
  'webhook_attempts',
  'attachments',
  'message_replies',
  'idempotency_keys',
  'task_snoozes',
  'held_actions',
  // Not history, but they grow with the crowd: a row per client and window, an automatic block per abuser.
  'counters',
  'blocklist',
];

/** An aggregate over a history table: counts the table (or a range of it) on every call. */
const AGGREGATE = new RegExp(`\\b(count|sum|min|max|avg)\\s*\\([^)]*\\)[\\s\\S]*\\bfrom\\s+"?(${HISTORY.join('|')})"?\\b`, 'i');

/**
 * Statements allowed to aggregate or sort a bounded range, and why. Each is bounded by something
 * other than the number of tasks.
 */
const ALLOWED: { pattern: RegExp; why: string }[] = [
  // The stats window's first, partial day: one day of submissions, read through the created_at index.
  { pattern: /count\(\*\)[\s\S]*from "tasks" where "created_at" >= \S+ and "created_at" < /i, why: 'one day of tasks' },
  // Pending mail and webhooks (metrics): the outbox's backlog, not its history (status index).
  { pattern: /as "depth"[\s\S]*from "(outbox|webhook_outbox)" where "status" = /i, why: 'the pending backlog' },
  // The outbox page's counts by state and its list of one state: sent rows are deleted after
  // SENT_MAIL_RETENTION_DAYS, pending and failed ones are the backlog. An index for this page
  // would cost every mail a write more on the submission path.
  { pattern: /from "outbox" group by "status"/i, why: 'bounded by the sent-mail retention' },
  { pattern: /from "outbox" where "status" = \S+ order by "created_at" desc, "id" desc limit/i, why: 'bounded by the sent-mail retention' },
  // The blocklist's network entries (migration 240): only operators add them (automatic blocks name
  // one client), so they are a handful whatever the traffic; a submission matches its networks to them.
  { pattern: /from "blocklist" where [^]*"kind" = \S+ and "prefix_bits" is not null$/i, why: "the operators' network entries" },
  // The blocklist page (migration 240): newest first down (created_at, id), a page at a time;
  // expired entries are passed over until retention deletes them.
  {
    pattern: /^select \* from "blocklist" where \("expires_at" is null or "expires_at" > \S+\)( and \([^]*\))? order by "created_at" desc, "id" desc limit/i,
    why: 'a page, expired entries swept by retention',
  },
  // A submission's duplicate check: the tasks of one dedupe key within the duplicate window.
  { pattern: /from "tasks" where "dedupe_key" in \([^)]*\) and "created_at" > /i, why: "one key's duplicates in the window" },
];

function allowed(statement: string): boolean {
  return ALLOWED.some((a) => a.pattern.test(statement));
}

/** Columns a partial index selects on by its own condition (migration 150), as if they were keys. */
const PARTIAL: Record<string, string[]> = {
  tasks_erase_due_idx: ['erased_at', 'status', 'delivered_at', 'rejected_at', 'updated_at'],
  // The inbox's waiting messages (migration 200): the index holds only those with done_at null.
  messages_waiting_idx: ['done_at'],
};

/** Columns with a few values each: equality on them alone still selects a share of all history. */
const FEW_VALUES = ['status', 'is_test', 'erased_at', 'kind'];

/** The quoted columns a single-table statement filters on. */
function whereColumns(statement: string): string[] {
  const where = /\bwhere\b([\s\S]*?)(\border by\b|\bgroup by\b|\blimit\b|\breturning\b|$)/i.exec(statement)?.[1] ?? '';
  return [...where.matchAll(/"(\w+)"/g)].map((m) => m[1] ?? '');
}

/**
 * What is wrong with one SQLite plan, if anything. A history table may be read only by keys
 * (equality), or by a range or a whole-index walk that a LIMIT stops: in index order (no sort of
 * the matches) and with nothing filtered out beyond what the index selects (else the walk goes on
 * past every row it drops).
 */
export function sqliteProblems(statement: string, plan: string[]): string[] {
  const problems: string[] = [];
  if (allowed(statement)) return problems;
  const limited = /\blimit\b/i.test(statement);
  const sorts = plan.some((d) => d.includes('TEMP B-TREE'));
  const single = !/\bjoin\b/i.test(statement) && plan.filter((d) => /^(SCAN|SEARCH) /.test(d)).length === 1;
  for (const detail of plan) {
    const access = /^(SCAN|SEARCH) (\w+)(?: USING (?:COVERING )?INDEX (\w+))?(?: \((.*)\))?/.exec(detail);
    if (!access || !HISTORY.includes(access[2] ?? '')) continue;
    const [, kind, , index = '', keys = ''] = access;
    const equalities = [...keys.matchAll(/(\w+)=\?/g)].map((m) => m[1] ?? '');
    const ranged = kind === 'SCAN' || /[<>]/.test(keys) || equalities.every((c) => FEW_VALUES.includes(c));
    if (!ranged) continue;
    if (!limited) problems.push(`reads a range without a limit: ${detail}`);
    if (sorts) problems.push(`sorts every row of a range: ${detail}`);
    if (single) {
      const selected = new Set([...keys.matchAll(/\w+/g)].map((m) => m[0]).concat(PARTIAL[index] ?? []));
      const residual = whereColumns(statement).filter((c) => !selected.has(c));
      if (residual.length > 0) problems.push(`filters ${residual.join(', ')} outside the index while walking a range: ${detail}`);
    }
  }
  if (AGGREGATE.test(statement)) problems.push('aggregates a history table');
  return problems;
}

/** What is wrong with the plans of the captured statements (statement → parameters), one entry each. */
export async function planProblems(t: TestApp, seen: Map<string, readonly unknown[]>): Promise<string[]> {
  const problems: string[] = [];
  for (const [statement, parameters] of seen) {
    // Reads, and writes that look rows up; not plain inserts, transaction control or locks.
    if (!/^\s*(select|with|update|delete)\b/i.test(statement) && !/^\s*insert\b[\s\S]*\bselect\b/i.test(statement)) continue;
    if (/pg_advisory|pg_notify|pg_try_advisory/i.test(statement)) continue;
    if (t.store.dialect === 'sqlite') {
      const { rows } = await t.store.db.executeQuery<{ detail: string }>(CompiledQuery.raw(`EXPLAIN QUERY PLAN ${statement}`, [...parameters]));
      const plan = rows.map((r) => r.detail);
      if (process.env.PLANS_DEBUG) process.stderr.write(`${statement}\n    ${plan.join(' | ')}\n`);
      for (const p of sqliteProblems(statement, plan)) problems.push(`${p}\n    ${statement}\n    ${plan.join(' | ')}`);
    } else {
      const plan = await t.store.db.transaction().execute(async (trx) => {
        await sql`set local enable_seqscan = off`.execute(trx);
        const { rows } = await trx.executeQuery<{ 'QUERY PLAN': string }>(CompiledQuery.raw(`EXPLAIN ${statement}`, [...parameters]));
        return rows.map((r) => r['QUERY PLAN']);
      });
      if (process.env.PLANS_DEBUG) process.stderr.write(`${statement}\n    ${plan.join(' | ')}\n`);
      const scans = plan.filter((line) => new RegExp(`Seq Scan on (${HISTORY.join('|')})\\b`).test(line));
      if (scans.length > 0 && !allowed(statement)) problems.push(`sequential scan\n    ${statement}\n    ${scans.join(' | ')}`);
      if (AGGREGATE.test(statement) && !allowed(statement)) problems.push(`aggregates a history table\n    ${statement}`);
    }
  }
  return problems;
}
