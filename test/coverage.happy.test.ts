import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COVERAGE_RELATIVE_ERROR, type Coverage, windowFirstDay } from '../src/domain/tasks/coverage.js';
import { TASK_TYPES } from '../src/domain/tasks/task.js';
import { buildTaskRow } from '../src/services/tasks/tasks.js';
import { backfillCoverage } from '../src/store/tasks/coverage-repo.js';
import { insertTasks, type TaskRow } from '../src/store/tasks/tasks-repo.js';
import { STORES, startTestApp, TEST_ADMIN_KEY, type TestApp, TestClock } from './support/app.js';

/**
 * Coverage (docs/coverage.md): 2,000 tasks with known timings, seeded through the store; the
 * published figures against an independent computation, within the sketch's stated error; a
 * transition on one instance moves them at once on the other.
 */

const NOW = '2030-03-10T10:00:00.000Z';
const DAY = 86_400_000;

/** A small deterministic generator, so a failure can be reproduced. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state * 1_664_525 + 1_013_904_223) >>> 0;
    return state / 2 ** 32;
  };
}

function seedRows(count: number): TaskRow[] {
  const next = random(57);
  const now = Date.parse(NOW);
  const rows: TaskRow[] = [];
  for (let i = 0; i < count; i++) {
    const taskType = TASK_TYPES[i % 4] ?? 'real_world_verification';
    // Created within the last 45 days, so some events fall outside the 30-day window.
    const created = now - Math.floor(next() * 45 * DAY);
    const base = buildTaskRow(
      { task_type: taskType, description: `Seeded task ${i}`, delivery: 'status_poll' } as never,
      { clientHash: 'seed', networks: [], source: 'api' } as never,
      { emailUnverified: false },
      new Date(created),
      12,
    );
    const at = (ms: number) => new Date(Math.min(now - 1000, created + ms)).toISOString();
    // Seen after 10 s to 2 days (log-uniform), accepted or rejected after that, delivered later.
    const seenMs = 10_000 * Math.exp(next() * Math.log((2 * DAY) / 10_000));
    const row: TaskRow = { ...base, id: `task-2030-${i.toString(16).padStart(32, '0')}` };
    const fate = next();
    if (fate < 0.1) {
      rows.push(row); // never seen
      continue;
    }
    row.seen_by_operator_at = at(seenMs);
    if (fate < 0.25) {
      row.status = 'rejected';
      row.rejected_at = at(seenMs + next() * 3_600_000);
    } else {
      row.status = 'accepted';
      row.accepted_at = at(seenMs + next() * 3_600_000);
      if (fate < 0.8) {
        row.status = 'delivered';
        row.delivered_at = at(seenMs + 3_600_000 + next() * 3 * DAY);
      }
    }
    // A test task counts nowhere.
    if (i % 97 === 0) row.is_test = 1;
    rows.push(row);
  }
  return rows;
}

/** The figures computed from the rows themselves: nearest-rank percentiles of exact durations. */
function expected(rows: TaskRow[], now: Date) {
  const firstDay = new Date(now.getTime() - 29 * DAY).toISOString().slice(0, 10);
  const inWindow = (at: string | null): at is string => at !== null && at.slice(0, 10) >= firstDay;
  const seconds = (row: TaskRow, at: string) => (Date.parse(at) - Date.parse(row.created_at)) / 1000;
  const pct = (values: number[], q: number) => [...values].sort((a, b) => a - b)[Math.max(1, Math.ceil(q * values.length)) - 1] ?? 0;
  return TASK_TYPES.map((taskType) => {
    const mine = rows.filter((r) => r.task_type === taskType && r.is_test === 0);
    const times = (pick: (r: TaskRow) => string | null) => mine.flatMap((r) => (inWindow(pick(r)) ? [seconds(r, pick(r) as string)] : []));
    const seen = times((r) => r.seen_by_operator_at);
    const accept = times((r) => r.accepted_at);
    const deliver = times((r) => r.delivered_at);
    const rejected = mine.filter((r) => r.accepted_at === null && inWindow(r.rejected_at)).length;
    const time = (values: number[]) => (values.length < 5 ? null : { p50: pct(values, 0.5), p90: pct(values, 0.9) });
    return {
      taskType,
      delivered: deliver.length,
      rate: accept.length + rejected === 0 ? null : accept.length / (accept.length + rejected),
      seen: time(seen),
      accept: time(accept),
      deliver: time(deliver),
    };
  });
}

function expectWithin(actual: { p50_seconds: number; p90_seconds: number } | null, wanted: { p50: number; p90: number } | null): void {
  if (wanted === null) {
    expect(actual).toBeNull();
    return;
  }
  expect(actual).not.toBeNull();
  // The sketch's stated error, plus half a second of rounding and the first bucket's second.
  for (const [got, want] of [
    [actual?.p50_seconds ?? -1, wanted.p50],
    [actual?.p90_seconds ?? -1, wanted.p90],
  ] as const) {
    expect(Math.abs(got - want)).toBeLessThanOrEqual(want * COVERAGE_RELATIVE_ERROR + 1);
  }
}

describe.each(STORES)('coverage (%s)', (store) => {
  let a: TestApp;
  let b: TestApp;
  let rows: TaskRow[];
  const clock = new TestClock(NOW);

  beforeAll(async () => {
    a = await startTestApp({ store, clock });
    b = store === 'postgres' ? await startTestApp({ store, clock, shareDatabaseWith: a }) : a;
    rows = seedRows(2000);
    for (let i = 0; i < rows.length; i += 200) await insertTasks(a.store.db, rows.slice(i, i + 200));
  }, 60_000);
  afterAll(async () => {
    if (b !== a) await b?.close();
    await a?.close();
  });

  async function read(app: TestApp, query = ''): Promise<Coverage> {
    const response = await fetch(`${app.url}/api/v1/coverage${query}`);
    expect(response.status).toBe(200);
    expect(response.headers.get('ratelimit-limit')).not.toBeNull();
    return (await response.json()) as Coverage;
  }

  it('publishes per type what the tasks measure, within the stated error', async () => {
    const coverage = await read(a);
    expect(Object.keys(coverage).sort()).toEqual(['accepting', 'by_type', 'open_tasks', 'operators_on_duty', 'response_target_hours', 'updated_at']);
    expect(coverage.accepting).toBe(true);
    expect(coverage.operators_on_duty).toBeNull();
    expect(coverage.response_target_hours).toBe(12);
    expect(coverage.open_tasks).toBe(rows.filter((r) => r.status === 'submitted' || r.status === 'accepted').length);
    expect(coverage.by_type.map((t) => t.task_type)).toEqual([...TASK_TYPES]);
    for (const wanted of expected(rows, clock.now())) {
      const got = coverage.by_type.find((t) => t.task_type === wanted.taskType);
      expect(got?.delivered_30d).toBe(wanted.delivered);
      if (wanted.rate === null) expect(got?.acceptance_rate_30d).toBeNull();
      else expect(Math.abs((got?.acceptance_rate_30d ?? -1) - wanted.rate)).toBeLessThanOrEqual(0.0005);
      expectWithin(got?.time_to_seen ?? null, wanted.seen);
      expectWithin(got?.time_to_accept ?? null, wanted.accept);
      expectWithin(got?.time_to_deliver ?? null, wanted.deliver);
    }
    // Types with no task: nothing measured.
    expect(coverage.by_type.find((t) => t.task_type === 'custom_human_in_the_loop')).toMatchObject({
      delivered_30d: 0,
      acceptance_rate_30d: null,
      time_to_seen: null,
      time_to_accept: null,
      time_to_deliver: null,
    });
  });

  it('ignores unknown query parameters', async () => {
    const plain = await read(a);
    const odd = await read(a, '?task_type=data_collection&days=7');
    expect({ ...odd, updated_at: '' }).toEqual({ ...plain, updated_at: '' });
  });

  it('moves the day the window moves, and the backfill finds what was kept', async () => {
    const kept = await read(a);
    await sql`delete from coverage_days`.execute(a.store.db);
    await sql`delete from coverage_window`.execute(a.store.db);
    await backfillCoverage(a.store.db, windowFirstDay(clock.now()));
    const fromBackfill = await read(a);
    expect({ ...fromBackfill, updated_at: '' }).toEqual({ ...kept, updated_at: '' });

    // Ten days on, what happened more than 30 days before is out of every figure.
    clock.advance(10 * DAY);
    const later = await read(a);
    for (const wanted of expected(rows, clock.now())) {
      const got = later.by_type.find((t) => t.task_type === wanted.taskType);
      expect(got?.delivered_30d).toBe(wanted.delivered);
      expectWithin(got?.time_to_deliver ?? null, wanted.deliver);
      expectWithin(got?.time_to_seen ?? null, wanted.seen);
    }
    const rows30 = await a.store.db.selectFrom('coverage_days').select('day').orderBy('day').executeTakeFirst();
    expect(rows30?.day && rows30.day >= new Date(clock.now().getTime() - 29 * DAY).toISOString().slice(0, 10)).toBe(true);
  });

  it('a transition on one instance moves the figures on the other at once', async () => {
    const before = await read(b);
    const taskType = 'data_collection';
    const submitted = await fetch(`${a.url}/api/v1/tasks`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ task_type: taskType, description: 'Count the benches in the park on Elm Street.', delivery: 'status_poll' }),
    });
    expect(submitted.status).toBe(202);
    const { task_id } = (await submitted.json()) as { task_id: string };
    const admin = { authorization: `Bearer ${TEST_ADMIN_KEY}`, 'content-type': 'application/json' };
    const patch = (body: unknown) => fetch(`${a.url}/api/v1/admin/tasks/${task_id}`, { method: 'PATCH', headers: admin, body: JSON.stringify(body) });
    expect((await patch({ status: 'accepted' })).status).toBe(200);
    expect((await patch({ status: 'delivered', operator_notes: 'Eleven benches.' })).status).toBe(200);
    const after = await read(b);
    const was = before.by_type.find((t) => t.task_type === taskType);
    const now = after.by_type.find((t) => t.task_type === taskType);
    expect(now?.delivered_30d).toBe((was?.delivered_30d ?? 0) + 1);
    expect(after.open_tasks).toBe(before.open_tasks);
  });
});
