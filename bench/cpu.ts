/**
 * CPU cost per request (npm run bench:cpu -- <read|submit> [sqlite|postgres] [instances]): the
 * service processes' CPU time (utime + stime from /proc) over a BENCH_SECONDS (default 5) load,
 * divided by the requests answered. Unlike req/s, this does not depend on how much of the machine
 * the load generator takes, so it is the figure to compare before and after a change. Also
 * prints the group commit's average batch size, read from /metrics.
 */
import autocannon from 'autocannon';
import { processTicks } from './cpu-budget.js';
import { ADMIN_KEY, createTask, startSetup } from './service.js';

const scenario = process.argv[2] ?? 'read';
const store = process.argv[3] === 'postgres' ? 'postgres' : 'sqlite';
const instances = Number(process.argv[4] ?? 1);
const seconds = Number(process.env.BENCH_SECONDS ?? 5);

const setup = await startSetup({ store, instances });
try {
  const task_id = await createTask(setup.base, 'CPU probe task: count the benches.');
  let n = 0;
  const options: autocannon.Options =
    scenario === 'read'
      ? { url: `${setup.base}/api/v1/tasks/${task_id}` }
      : {
          url: `${setup.base}/api/v1/tasks`,
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          requests: [
            {
              setupRequest: (request) => ({
                ...request,
                body: JSON.stringify({ task_type: 'data_collection', description: `CPU probe submission ${n++}: count the benches.`, delivery: 'status_poll' }),
              }),
            },
          ],
        };
  await autocannon({ ...options, duration: 2, connections: 50 });
  const pids = setup.services.map((service) => service.process.pid ?? 0);
  const before = pids.map(processTicks);
  const result = await autocannon({ ...options, duration: seconds, connections: Number(process.env.BENCH_CONNECTIONS ?? 50) });
  const cpuUs = pids.reduce((sum, pid, i) => sum + (processTicks(pid) - (before[i] ?? 0)), 0) * 10_000;
  const answered = result['2xx'];
  const metrics = await (await fetch(`${setup.base}/metrics`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } })).text();
  const batchSum = Number(/hts_submission_batch_size_sum (\S+)/.exec(metrics)?.[1] ?? 0);
  const batches = Number(/hts_submission_batch_size_count (\S+)/.exec(metrics)?.[1] ?? 0);
  process.stdout.write(
    `${scenario}, ${store}, ${instances} instance(s): ${Math.round(answered / result.duration)}/s, ${Math.round(cpuUs / answered)} µs of service CPU per request, ` +
      `p50 ${result.latency.p50} ms, p99 ${result.latency.p99} ms, not 2xx ${result.non2xx}, peak RSS ${setup.rss()} MB` +
      (batches > 0 ? `, ${(batchSum / batches).toFixed(1)} submissions per transaction (instance asked)` : '') +
      '\n',
  );
} finally {
  await setup.stop();
}
