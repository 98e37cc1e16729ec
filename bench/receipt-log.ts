/**
 * The public receipt log's cost targets (docs/receipt-log.md; `npm run bench:receipt-log`, never in timed tests):
 *   - a proof read at BENCH_LOG_LEAVES (default 1,000,000) leaves costs the same as at 1,000
 *     (ratio of the median per-read times ≤ 1.5);
 *   - the leaf adds at most 10 % to the delivery path: the median marginal time of writing a leaf
 *     inside a transaction against the median of a whole delivery (PATCH … delivered, through the
 *     real app).
 * One process, SQLite in a temporary directory (BENCH_STORES=postgres with TEST_POSTGRES_URL: PostgreSQL).
 * Exits 1 below a target.
 */
import { performance } from 'node:perf_hooks';
import { iso } from '../src/domain/time.js';
import { integrateLog, receiptProof } from '../src/services/receipt-log/receipt-log.js';
import { withTransaction } from '../src/store/db.js';
import { insertLeaf, insertLeaves } from '../src/store/receipt-log/receipt-log-repo.js';
import { ADMIN } from '../test/operator.support.js';
import { postJson, startTestApp, type TestApp, validTask } from '../test/support/app.js';

const LARGE = Number(process.env.BENCH_LOG_LEAVES ?? 1_000_000);
const READS = 300;
const DELIVERIES = 100;
const store = (process.env.BENCH_STORES ?? 'sqlite') === 'postgres' ? 'postgres' : 'sqlite';

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

async function seed(t: TestApp, count: number, from: number): Promise<void> {
  const at = iso(t.clock.now());
  for (let i = from; i < count; i += 50_000) {
    const n = Math.min(50_000, count - i);
    await insertLeaves(
      t.store.db,
      Array.from({ length: n }, (_, k) => ({ taskId: `bench-${i + k}`, data: `bench receipt ${i + k}`, createdAt: at })),
    );
    await integrateLog(t.deps);
  }
}

async function proofTime(t: TestApp, size: number): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < READS; i++) {
    const id = `bench-${Math.floor(Math.random() * size)}`;
    const started = performance.now();
    await receiptProof(t.deps, id);
    times.push(performance.now() - started);
  }
  return median(times);
}

async function deliveryTimes(t: TestApp): Promise<{ delivery: number; leaf: number }> {
  const patch = (id: string, body: unknown) =>
    fetch(`${t.url}/api/v1/admin/tasks/${id}`, { method: 'PATCH', headers: { ...ADMIN, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const deliveries: number[] = [];
  const leaves: number[] = [];
  for (let i = 0; i < DELIVERIES; i++) {
    const res = await postJson(`${t.url}/api/v1/tasks`, validTask());
    const { task_id } = (await res.json()) as { task_id: string };
    await (await patch(task_id, { status: 'accepted', eta: '2030-03-20T12:00:00Z' })).arrayBuffer();
    const started = performance.now();
    await (await patch(task_id, { status: 'delivered', operator_notes: `Result ${i}.` })).arrayBuffer();
    deliveries.push(performance.now() - started);
    // The leaf's marginal cost: one more INSERT in a transaction that commits anyway (the
    // delivery's), measured as a hundred in one transaction.
    const leafStarted = performance.now();
    await withTransaction(t.store.db, async (trx) => {
      for (let k = 0; k < 100; k++) await insertLeaf(trx, { taskId: null, data: 'x'.repeat(900), createdAt: iso(t.clock.now()) });
    });
    leaves.push((performance.now() - leafStarted) / 100);
  }
  return { delivery: median(deliveries), leaf: median(leaves) };
}

async function main(): Promise<number> {
  const t = await startTestApp({ store });
  try {
    const { delivery, leaf } = await deliveryTimes(t);
    await integrateLog(t.deps);
    await seed(t, 1_000, 0);
    const small = await proofTime(t, 1_000);
    await seed(t, LARGE, 1_000);
    const large = await proofTime(t, LARGE);
    const leafShare = leaf / delivery;
    process.stdout.write(
      `${store}: delivery p50 ${delivery.toFixed(2)} ms, leaf write p50 ${leaf.toFixed(3)} ms (${(leafShare * 100).toFixed(1)} %, target ≤ 10 %)\n` +
        `${store}: proof read p50 at 1,000 leaves ${small.toFixed(3)} ms, at ${LARGE.toLocaleString('en')} ${large.toFixed(3)} ms (×${(large / small).toFixed(2)}, target ≤ 1.5)\n`,
    );
    return leafShare <= 0.1 && large / small <= 1.5 ? 0 : 1;
  } finally {
    await t.close();
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(2);
  },
);
