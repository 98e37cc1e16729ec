import { CompiledQuery, sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { runRetention } from '../src/services/retention.js';
import { postForm, signIn } from './console.support.js';
import { ADMIN, adminGet, submit, taskIn } from './operator.support.js';
import { postJson, STORES, TestClock, useTestApp } from './support/app.js';

/**
 * Issue 28: no console page, admin read, metrics scrape, discovery document or retention batch may
 * cost more as history grows. Every statement those run (captured through the store's query hook)
 * is explained: on SQLite with EXPLAIN QUERY PLAN, on PostgreSQL with EXPLAIN and sequential scans
 * disabled (so a missing index shows as a Seq Scan whatever the table's size).
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
function sqliteProblems(statement: string, plan: string[]): string[] {
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

for (const store of STORES) {
  describe(`query plans of pages and endpoints (${store})`, () => {
    const clock = new TestClock('2030-03-10T10:00:00.000Z');
    const seen = new Map<string, readonly unknown[]>();
    let capturing = false;
    const t = useTestApp({
      store,
      clock,
      onQuery: (query) => {
        if (capturing) seen.set(query.sql, query.parameters);
      },
    });

    it('every statement the console, the admin API, metrics, discovery and retention run uses an index', async () => {
      // A little of everything: each status, test tasks, messages naming tasks, an old final task.
      clock.set('2029-10-01T10:00:00.000Z');
      await taskIn(t, 'delivered');
      await taskIn(t, 'rejected');
      clock.set('2030-03-10T10:00:00.000Z');
      const open = await taskIn(t, 'submitted');
      await taskIn(t, 'accepted');
      await taskIn(t, 'delivered', { description: 'A test task for the integration, please ignore it.' });
      await submit(t, { requester: 'test-bot' });
      for (const message of [`Please withdraw ${open}, it is no longer needed.`, 'A question about your services, in general.']) {
        const sent = await postJson(`${t.url}/api/v1/messages`, { message, reply_to: 'agent@mail.dev' });
        expect(sent.status).toBe(201);
      }
      const { cookie, csrf } = await signIn(t);
      const console = (path: string) => fetch(`${t.url}${path}`, { headers: { cookie } });
      const snoozed = await taskIn(t, 'submitted');
      expect((await postForm(t, `/operator/tasks/${snoozed}/snooze`, { _csrf: csrf, hours: '3' }, cookie)).status).toBe(303);

      capturing = true;
      const pages: string[] = [];
      for (const status of ['open', 'all', 'submitted', 'accepted', 'delivered', 'rejected', 'under_review', 'in_progress']) {
        for (const order of ['oldest', 'newest', 'due']) {
          for (const test of ['', 'only', 'exclude']) pages.push(`/operator?status=${status}&order=${order}${test ? `&test=${test}` : ''}`);
        }
      }
      pages.push(
        '/operator/messages',
        '/operator/messages?show=all',
        `/operator/tasks/${open}`,
        '/operator/stats',
        '/operator/stats?days=365',
        '/operator/outbox',
        '/operator/blocklist',
      );
      // Issue 31: search by key (task id, message id, e-mail) and words, each filter and sort, snoozes.
      const messageId = ((await (await adminGet(t, '/api/v1/admin/messages?limit=1')).json()) as { messages: { message_id: string }[] }).messages[0]
        ?.message_id;
      for (const status of ['open', 'all', 'delivered']) {
        for (const filter of [
          `q=${open}`,
          `q=${messageId}`,
          'q=agent%40mail.example-agent.dev',
          'q=bakery',
          'type=real_world_verification',
          'location=onsite',
          'location=remote',
          'requester=agent%40mail.example-agent.dev',
          'deadline_before=2030-12-31',
          'overdue=1',
          'sort=deadline',
          'sort=eta',
          'select=1&order=newest',
        ])
          pages.push(`/operator?status=${status}&${filter}`);
      }
      pages.push('/operator?status=snoozed');
      for (const status of ['pending', 'sent', 'failed']) pages.push(`/operator/outbox?status=${status}`);
      for (const path of pages) expect((await console(path)).status, path).toBe(200);
      // The inbox's "Mark done" (issue 31): a key lookup, the kept count and the audit entry.
      const latest = (await (await adminGet(t, '/api/v1/admin/messages?limit=1')).json()) as { messages: { message_id: string }[] };
      const done = await postForm(t, `/operator/messages/${latest.messages[0]?.message_id}/done`, { _csrf: csrf }, cookie);
      expect(done.status).toBe(303);
      // A second page of the queue and of the messages: the keyset cursor's query.
      for (const [path, list] of [
        ['/api/v1/admin/tasks?limit=1', 'tasks'],
        ['/api/v1/admin/tasks?limit=1&status=open&order=oldest', 'tasks'],
        ['/api/v1/admin/tasks?limit=1&status=open&test=exclude', 'tasks'],
        ['/api/v1/admin/messages?limit=1', 'messages'],
      ] as const) {
        const first = (await (await adminGet(t, path)).json()) as { next_cursor: string | null };
        expect(first.next_cursor, path).not.toBeNull();
        expect((await adminGet(t, `${path}&cursor=${encodeURIComponent(first.next_cursor ?? '')}`)).status, list).toBe(200);
      }
      for (const status of ['', 'open', 'submitted', 'delivered']) {
        for (const test of ['', 'only', 'exclude']) {
          const query = new URLSearchParams({ ...(status ? { status } : {}), ...(test ? { test } : {}) });
          expect((await adminGet(t, `/api/v1/admin/tasks?${query}`)).status).toBe(200);
        }
      }
      expect((await adminGet(t, '/api/v1/admin/stats')).status).toBe(200);
      expect((await adminGet(t, `/api/v1/admin/tasks/${open}`)).status).toBe(200);
      expect((await fetch(`${t.url}/metrics`, { headers: ADMIN })).status).toBe(200);
      for (const doc of ['/.well-known/human.json', '/.well-known/capabilities.json']) {
        clock.advance(60_000); // past the figures' cache: the cold path
        expect((await fetch(`${t.url}${doc}`)).status, doc).toBe(200);
      }
      clock.set('2030-06-01T10:00:00.000Z'); // the 2029 tasks are now past retention
      const run = await runRetention(t.deps);
      expect(run?.erased_tasks).toBeGreaterThan(0);
      capturing = false;

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
      expect(seen.size).toBeGreaterThan(20);
      expect(problems, problems.join('\n')).toEqual([]);
    });
  });
}
