/**
 * `npm run bench:scale` (docs/performance.md#history-costs-that-do-not-grow-with-it-issue-28): what pages and endpoints cost when history is large. Seeds
 * BENCH_TASKS tasks (default 1,000,000: about three years of a busy deployment) and BENCH_MESSAGES
 * messages (default a fifth of the tasks) through the store layer in batches, then starts the
 * service on that store exactly as `npm start` does (bench/service.ts) and times, one request at a
 * time over loopback, every console page (the queue with every filter, messages, stats, a task
 * page, outbox, blocklist), the admin API (stats, the queue with every filter and a cursor,
 * messages), `/metrics`, `human.json` and `capabilities.json` with their cache cold, and the
 * service's start-up; then one retention run over BENCH_ERASABLE tasks due for erasure, per batch;
 * GET /api/v1/coverage and a dry run (docs/coverage.md), after the migration's backfill of the
 * coverage window over the seeded history (its time is printed).
 * Targets: each ≤ 50 ms (the median of BENCH_SAMPLES requests after one warm-up), start-up ≤ 2 s,
 * coverage ≤ 5 ms, a dry run ≤ a status read + 2 ms (the MX check of a known domain is a lookup in
 * memory; an unknown one is a DNS round trip, the resolver's time, not the service's);
 * exit 1 when one is missed. SQLite always, PostgreSQL when DATABASE_URL or TEST_POSTGRES_URL
 * names one.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import pg from 'pg';
import { loadConfig } from '../src/config.js';
import { windowFirstDay } from '../src/domain/tasks/coverage.js';
import { TASK_TYPES } from '../src/domain/tasks/task.js';
import { createLogger } from '../src/logger.js';
import { runRetention } from '../src/services/runtime/retention.js';
import { migrate, openStore, type Store, withTransaction } from '../src/store/db.js';
import { insertMessage } from '../src/store/messages/messages-repo.js';
import { backfillCoverage } from '../src/store/tasks/coverage-repo.js';
import { insertTasks, type TaskRow } from '../src/store/tasks/tasks-repo.js';
import { ADMIN_KEY, createDatabase, POSTGRES_URL, signIn, startSetup } from './service.js';

const TASKS = Number(process.env.BENCH_TASKS ?? 1_000_000);
const MESSAGES = Number(process.env.BENCH_MESSAGES ?? Math.round(TASKS / 5));
const ERASABLE = Number(process.env.BENCH_ERASABLE ?? Math.min(5_000, Math.round(TASKS / 10)));
const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 5);
/**
 * BENCH_KEEP_DB=<name>: the PostgreSQL database (on TEST_POSTGRES_URL's server) or SQLite file seeded
 * once and kept between runs; a run that finds it seeded skips the seed, the backfill and retention.
 */
const KEEP_DB = process.env.BENCH_KEEP_DB;
/** BENCH_PARTS=queue,coverage,dryrun,…: time only these parts (default every part). */
const PARTS = process.env.BENCH_PARTS?.split(',');
const part = (name: string) => PARTS === undefined || PARTS.includes(name);
/** Cold reads of each discovery document (each waits out the figures' cache first). */
const COLD_SAMPLES = Number(process.env.BENCH_COLD_SAMPLES ?? 2);
const PAGE_TARGET_MS = 50;
/** GET /api/v1/coverage at any size of history (docs/coverage.md). */
const COVERAGE_TARGET_MS = 5;
/** A dry run over a status read: the checks' few indexed reads (the MX check of a known domain is in memory). */
const DRY_RUN_OVER_READ_MS = 2;
const STARTUP_TARGET_MS = 2_000;
/** The service's live-figures cache (src/docs/live.ts LIVE_CACHE_MS): waited out for a cold read. */
const LIVE_CACHE_MS = 5_000;
const DAY = 86_400_000;
/** History spans three years, ending now; the newest tasks are still open. */
const SPAN_MS = 3 * 365 * DAY;
const RETENTION_DAYS = 90;

const now = Date.now();
const iso = (ms: number) => new Date(ms).toISOString();
const hex = () => randomBytes(16).toString('hex');

/** The i-th task of the history, oldest first: final and erased if old, open if among the newest. */
function taskRow(i: number, erasable: boolean): TaskRow {
  const created = now - SPAN_MS + Math.floor((i / TASKS) * SPAN_MS);
  const newest = TASKS - i;
  const status = newest <= 300 ? 'submitted' : newest <= 600 ? 'accepted' : i % 3 === 0 ? 'rejected' : 'delivered';
  const final = status === 'delivered' || status === 'rejected';
  // Human timings spread from a minute to three days (log-uniform, by the task's number), so the
  // coverage histograms are as wide as they get (docs/coverage.md).
  const spread = (k: number) => Math.round(60_000 * Math.exp((((i * k) % 1_000) / 1_000) * Math.log(4_320)));
  const seenAt = created + spread(7_919);
  const acceptedAt = seenAt + spread(104_729) / 4;
  const finalAt = iso(acceptedAt + spread(1_299_709));
  const id = `task-${new Date(created).getUTCFullYear()}-${hex()}`;
  const seen = newest <= 150 ? null : iso(seenAt);
  const old = Date.parse(finalAt) < now - RETENTION_DAYS * DAY;
  const description = `Check whether the shop number ${i} on Main Street opens at 8 on Sundays${i % 50 === 0 ? ' (test)' : ''}.`;
  return {
    id,
    status,
    task_type: TASK_TYPES[i % TASK_TYPES.length] ?? 'real_world_verification',
    description,
    dedupe_key: hex() + hex(),
    location_required: 0,
    location_detail: null,
    deadline: null,
    output_format: 'text_report',
    budget_usd: null,
    requester: 'bench-agent',
    source: 'api',
    delivery: 'email',
    contact_email: old && !erasable ? null : 'agent@mail.bench-agent.dev',
    email_unverified: 0,
    client_hash: `c${i % 5_000}`,
    created_at: iso(created),
    updated_at: final ? finalAt : iso(created),
    status_history: JSON.stringify([{ status: 'submitted', at: iso(created) }, ...(status === 'submitted' ? [] : [{ status, at: finalAt }])]),
    operator_notes: status === 'delivered' ? 'It opens at 8.' : null,
    seen_by_operator_at: seen,
    eta: null,
    accepted_at: status === 'submitted' || status === 'rejected' ? null : iso(acceptedAt),
    delivered_at: status === 'delivered' ? finalAt : null,
    rejected_at: status === 'rejected' ? finalAt : null,
    receipt: null,
    deliverable_sha256: null,
    receipt_issued_at: null,
    request_sha256: hex() + hex(),
    request_json: '{}',
    callback_url: null,
    attachments: null,
    erased_at: final && old && !erasable ? finalAt : null,
    is_test: i % 50 === 0 ? 1 : 0,
    response_schema: null,
    questions: null,
    deadline_at: null,
    deadline_passed_at: null,
    due_at: null,
    agent_key_id: null,
    agent_directory: null,
    receipt_log_index: null,
    context_id: `ctx-${id.slice(5)}`,
    approvals_required: 1,
    approvals_given: 0,
    approval_round: 0,
    proposal: null,
    approval_returned: null,
  };
}

async function seed(store: Store, log: (line: string) => void): Promise<string[]> {
  const started = Date.now();
  // The erasable ones: final, old, not erased yet, spread over the history's first year.
  const erasableEvery = ERASABLE > 0 ? Math.max(1, Math.floor(TASKS / 3 / ERASABLE)) : 0;
  const batch = store.dialect === 'postgres' ? 1_000 : 2_000;
  const recent: string[] = [];
  let erasable = 0;
  for (let from = 0; from < TASKS; from += batch) {
    const rows: TaskRow[] = [];
    for (let i = from; i < Math.min(TASKS, from + batch); i++) {
      const wanted = erasableEvery > 0 && erasable < ERASABLE && i % erasableEvery === 0 && i < TASKS / 3;
      const row = taskRow(i, wanted);
      if (wanted && (row.status === 'delivered' || row.status === 'rejected')) erasable += 1;
      rows.push(row);
      if (TASKS - i <= 1_000) recent.push(row.id);
    }
    await withTransaction(store.db, (trx) => insertTasks(trx, rows));
    if ((from / batch) % 100 === 99) log(`  seeded ${from + batch} tasks (${Math.round((Date.now() - started) / 1000)} s)`);
  }
  for (let from = 0; from < MESSAGES; from += 1_000) {
    await withTransaction(store.db, async (trx) => {
      for (let i = from; i < Math.min(MESSAGES, from + 1_000); i++) {
        const created = now - SPAN_MS + Math.floor((i / MESSAGES) * SPAN_MS);
        const names = i % 4 === 0 && MESSAGES - i < 2_000 ? [recent[i % recent.length] ?? ''] : [];
        await insertMessage(trx, {
          id: `msg-${new Date(created).getUTCFullYear()}-${hex()}`,
          message: names.length > 0 ? `About ${names[0]}: please withdraw it.` : `A question about your services, number ${i}.`,
          reply_to: 'agent@mail.bench-agent.dev',
          sender: null,
          subject: null,
          client_hash: `c${i % 5_000}`,
          task_ids: JSON.stringify(names),
          email_unverified: 0,
          created_at: iso(created),
          erased_at: null,
        });
      }
    });
  }
  log(`  seeded ${TASKS} tasks (${erasable} due for erasure) and ${MESSAGES} messages in ${Math.round((Date.now() - started) / 1000)} s`);
  return recent;
}

interface Timing {
  name: string;
  ms: number;
  max: number;
  target: number;
  /** CPU time per request (the service and its PostgreSQL backends), where /proc tells it. */
  cpu?: number;
  /** Set when a request was not answered 200 (e.g. a 503 past STORE_TIMEOUT_MS): a miss. */
  failed?: string;
}

async function timed(url: string, headers: Record<string, string>): Promise<number> {
  const started = performance.now();
  const res = await fetch(url, { headers });
  await res.arrayBuffer();
  if (res.status !== 200) throw new Error(`${url}: ${res.status}`);
  return performance.now() - started;
}

/** Median and max of SAMPLES requests after one warm-up; a failed request is reported, and missed. */
async function sampled(name: string, once: () => Promise<number>): Promise<Timing> {
  const samples: number[] = [];
  let cpu: number | undefined;
  try {
    await once();
    const cpuBefore = await cpuTime();
    for (let i = 0; i < SAMPLES; i++) samples.push(await once());
    const cpuAfter = await cpuTime();
    if (cpuBefore !== undefined && cpuAfter !== undefined) cpu = (cpuAfter - cpuBefore) / SAMPLES;
  } catch (error) {
    return { name, ms: Number.NaN, max: Number.NaN, target: PAGE_TARGET_MS, failed: error instanceof Error ? error.message : String(error) };
  }
  samples.sort((a, b) => a - b);
  return { name, ms: samples[Math.floor(samples.length / 2)] ?? 0, max: samples.at(-1) ?? 0, target: PAGE_TARGET_MS, ...(cpu === undefined ? {} : { cpu }) };
}

/**
 * CPU time (ms) the service and its PostgreSQL backends have used so far, from /proc (Linux, the
 * database on this machine); undefined elsewhere. A loaded machine stretches wall time more than
 * CPU time, so both are printed.
 */
let cpuTime: () => Promise<number | undefined> = async () => undefined;

function procCpuMs(pid: number): number {
  // utime and stime, fields 14 and 15 of /proc/<pid>/stat, in clock ticks (100 a second).
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

async function watchCpu(servicePid: number | undefined, databaseUrl: string): Promise<() => Promise<void>> {
  if (servicePid === undefined || !existsSync(`/proc/${servicePid}/stat`)) return async () => {};
  const client = databaseUrl.startsWith('postgres') ? new pg.Client({ connectionString: databaseUrl }) : undefined;
  await client?.connect();
  cpuTime = async () => {
    let ms = procCpuMs(servicePid);
    if (client) {
      const { rows } = await client.query<{ pid: number }>('select pid from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()');
      for (const { pid } of rows) {
        try {
          ms += procCpuMs(pid);
        } catch {
          // A backend that ended meanwhile.
        }
      }
    }
    return ms;
  };
  return async () => {
    cpuTime = async () => undefined;
    await client?.end();
  };
}

async function measure(name: string, url: string, headers: Record<string, string>): Promise<Timing> {
  return sampled(name, () => timed(url, headers));
}

/** As measure, for a POST of a JSON body answered 200 (a dry run). */
async function measurePost(name: string, url: string, body: unknown): Promise<Timing> {
  return sampled(name, async () => {
    const started = performance.now();
    const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`${url}: ${res.status}`);
    return performance.now() - started;
  });
}

/** Whether a timing misses its target (a failed request always does). */
function missed(t: Timing): boolean {
  return t.failed !== undefined || t.ms > t.target;
}

/** One retention run over the tasks due for erasure, per batch (in this process, on the same store). */
async function retention(databaseUrl: string, dataDir: string): Promise<Timing[]> {
  const timings: Timing[] = [];
  const retentionStore = openStore(databaseUrl, { poolSize: 2, timeoutMs: 600_000 });
  try {
    const config = loadConfig({ DATA_DIR: dataDir, DATABASE_URL: databaseUrl, RETENTION_DAYS: String(RETENTION_DAYS), ADMIN_KEY });
    // runRetention asks `stopping()` between batches: the time between two asks is one batch.
    const marks: number[] = [performance.now()];
    const run = await runRetention(
      { store: retentionStore, clock: { now: () => new Date() }, log: createLogger('warn'), config },
      { stopping: () => marks.push(performance.now()) < 0 },
    );
    const batches = marks
      .slice(1)
      .map((at, i) => at - (marks[i] ?? at))
      .sort((a, b) => a - b);
    if (run && batches.length > 0) {
      timings.push({
        name: `retention, per batch (${batches.length} batches of up to 500; ${run.erased_tasks} tasks erased; whole run ${run.duration_ms} ms)`,
        ms: batches[Math.floor(batches.length / 2)] ?? 0,
        max: batches.at(-1) ?? 0,
        target: PAGE_TARGET_MS,
      });
    }
  } finally {
    await retentionStore.close();
  }
  return timings;
}

/** The database BENCH_KEEP_DB names on the server, created if it is not there yet; kept after the run. */
async function keptDatabase(serverUrl: string, name: string): Promise<string> {
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`BENCH_KEEP_DB=${name}: a lower-case SQL name`);
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  try {
    const found = await admin.query('select 1 from pg_database where datname = $1', [name]);
    if (found.rowCount === 0) await admin.query(`create database ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

/** The newest 1,000 tasks of a seeded store, oldest first (as seed returns them). */
async function recentTasks(store: Store): Promise<string[]> {
  const rows = await store.db.selectFrom('tasks').select('id').orderBy('created_at', 'desc').limit(1_000).execute();
  return rows.map((r) => r.id).reverse();
}

async function runStore(label: string, kind: 'sqlite' | 'postgres', log: (line: string) => void): Promise<Timing[]> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'hts-scale-'));
  let databaseUrl = `sqlite:${path.join(dataDir, 'service.db')}`;
  let drop = async () => {};
  if (KEEP_DB !== undefined) databaseUrl = kind === 'postgres' && POSTGRES_URL ? await keptDatabase(POSTGRES_URL, KEEP_DB) : `sqlite:${path.resolve(KEEP_DB)}`;
  else if (kind === 'postgres' && POSTGRES_URL) {
    const database = await createDatabase(POSTGRES_URL);
    databaseUrl = database.url;
    drop = database.drop;
  }
  const timings: Timing[] = [];
  try {
    const store = openStore(databaseUrl, { poolSize: 2, timeoutMs: 600_000 });
    await migrate(store);
    const seeded = KEEP_DB !== undefined && (await store.db.selectFrom('tasks').select('id').limit(1).executeTakeFirst()) !== undefined;
    if (seeded) log(`  ${KEEP_DB} is seeded already: seed, backfill and retention skipped`);
    const recent = seeded ? await recentTasks(store) : await seed(store, log);
    if (!seeded) {
      // The seed wrote every day of three years of history into the coverage tables; a deployment
      // that had this history would have had only the window filled, by migration 280: do that.
      await sql`delete from coverage_days`.execute(store.db);
      await sql`delete from coverage_window`.execute(store.db);
      const backfillStarted = performance.now();
      await backfillCoverage(store.db, windowFirstDay(new Date()));
      log(`  coverage backfill (migration 280) over ${TASKS} tasks: ${Math.round(performance.now() - backfillStarted)} ms`);
      // PostgreSQL's autovacuum would have analyzed a table this size; SQLite deployments never run ANALYZE.
      if (kind === 'postgres') await sql`analyze`.execute(store.db);
    }
    await store.close();

    // Retention first, in this process on the same store: one run over the tasks due for erasure
    // (the service runs its own a minute after start, which would take them first).
    if (!seeded && part('retention')) timings.push(...(await retention(databaseUrl, dataDir)));

    const env = { DATA_DIR: dataDir, DATABASE_URL: databaseUrl, RETENTION_DAYS: String(RETENTION_DAYS), RETENTION_INTERVAL_MINUTES: '1440' };
    // Start-up: a cold start on the seeded store (the first start ran the migrations already).
    const started = performance.now();
    const setup = await startSetup({ store: 'sqlite', instances: 1, env });
    timings.push({ name: 'start-up', ms: performance.now() - started, max: performance.now() - started, target: STARTUP_TARGET_MS });
    const unwatch = await watchCpu(setup.services[0]?.process.pid, databaseUrl);
    try {
      const base = setup.base;
      const cookie = await signIn(base);
      const console = { cookie };
      const admin = { authorization: `Bearer ${ADMIN_KEY}` };
      const openTask = recent.at(-1) ?? '';
      const oldTask = recent[0] ?? '';
      for (const status of part('queue') ? ['open', 'all', 'submitted', 'accepted', 'delivered', 'rejected'] : []) {
        for (const order of ['oldest', 'newest']) {
          for (const test of ['', 'only', 'exclude']) {
            const query = `status=${status}&order=${order}${test ? `&test=${test}` : ''}`;
            timings.push(await measure(`console queue ${query}`, `${base}/operator?${query}`, console));
          }
        }
      }
      for (const [name, url] of part('console')
        ? ([
            ['console messages', '/operator/messages'],
            ['console stats', '/operator/stats'],
            ['console stats, 365 days', '/operator/stats?days=365'],
            ['console task page (open)', `/operator/tasks/${openTask}`],
            ['console task page (older)', `/operator/tasks/${oldTask}`],
            ['console outbox', '/operator/outbox'],
            ['console blocklist', '/operator/blocklist'],
          ] as const)
        : []) {
        timings.push(await measure(name, `${base}${url}`, console));
      }
      if (part('admin')) {
        timings.push(await measure('GET /api/v1/admin/stats', `${base}/api/v1/admin/stats`, admin));
        timings.push(await measure('GET /metrics', `${base}/metrics`, admin));
        timings.push(await measure('GET /api/v1/admin/messages', `${base}/api/v1/admin/messages`, admin));
      }
      for (const status of part('admin') ? ['', 'open', 'submitted', 'accepted', 'delivered', 'rejected'] : []) {
        for (const test of ['', 'only', 'exclude']) {
          const query = new URLSearchParams({ ...(status ? { status } : {}), ...(test ? { test } : {}), limit: '50' });
          const url = `${base}/api/v1/admin/tasks?${query}`;
          timings.push(await measure(`GET /api/v1/admin/tasks?${query}`, url, admin));
          const page = (await (await fetch(url, { headers: admin })).json()) as { next_cursor: string | null };
          if (page.next_cursor) timings.push(await measure(`  … its next page`, `${url}&cursor=${encodeURIComponent(page.next_cursor)}`, admin));
        }
      }
      if (part('coverage')) {
        const coverage = await measure('GET /api/v1/coverage', `${base}/api/v1/coverage`, {});
        timings.push({ ...coverage, target: COVERAGE_TARGET_MS });
      }
      if (part('dryrun')) {
        const read = await measure('GET /api/v1/tasks/{task_id}', `${base}/api/v1/tasks/${openTask}`, {});
        timings.push(read);
        const dryRun = await measurePost('POST /api/v1/tasks?dry_run=true', `${base}/api/v1/tasks?dry_run=true`, {
          task_type: 'data_collection',
          description: 'Count the benches in the park on Elm Street and note which are broken.',
          delivery: 'status_poll',
        });
        timings.push({ ...dryRun, target: read.ms + DRY_RUN_OVER_READ_MS });
      }
      for (const doc of part('documents') ? ['/.well-known/human.json', '/.well-known/capabilities.json'] : []) {
        const cold: number[] = [];
        for (let i = 0; i < COLD_SAMPLES; i++) {
          await new Promise((resolve) => setTimeout(resolve, LIVE_CACHE_MS + 200));
          cold.push(await timed(`${base}${doc}`, {}));
        }
        timings.push({ name: `GET ${doc} (cache cold)`, ms: Math.min(...cold), max: Math.max(...cold), target: PAGE_TARGET_MS });
      }
    } finally {
      await unwatch();
      await setup.stop();
    }
  } finally {
    if (KEEP_DB === undefined) await drop();
    rmSync(dataDir, { recursive: true, force: true });
  }
  for (const t of timings) {
    const cpu = t.cpu === undefined ? '' : `, CPU ${t.cpu.toFixed(1)} ms`;
    const figure = t.failed ?? `${t.ms.toFixed(1)} ms${t.max !== t.ms ? ` (max ${t.max.toFixed(1)}${cpu})` : cpu}`;
    log(`[${label}] ${t.name}: ${figure}${missed(t) ? `  ✗ target ≤ ${t.target} ms` : ''}`);
  }
  return timings;
}

async function main(): Promise<void> {
  const log = (line: string) => process.stdout.write(`${line}\n`);
  log(`bench:scale — ${TASKS} tasks, ${MESSAGES} messages, median of ${SAMPLES} requests after a warm-up`);
  const misses: string[] = [];
  // BENCH_STORES=sqlite or =postgres runs one store only.
  const only = process.env.BENCH_STORES;
  const stores = (
    [
      ['SQLite', 'sqlite'],
      ['PostgreSQL', 'postgres'],
    ] as const
  ).filter(([, kind]) => (only ? only.split(',').includes(kind) : kind === 'sqlite' || POSTGRES_URL !== undefined));
  for (const [label, kind] of stores) {
    log(`[${label}] seeding…`);
    for (const t of await runStore(label, kind, log)) if (missed(t)) misses.push(`[${label}] ${t.name}`);
  }
  if (misses.length === 0) log('all targets met');
  else log(`missed: ${misses.join('; ')}`);
  process.exitCode = misses.length === 0 ? 0 : 1;
}

await main();
