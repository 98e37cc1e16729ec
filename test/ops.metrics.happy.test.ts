import { describe, expect, it } from 'vitest';
import { adminGet, submit, taskIn } from './operator.support.js';
import { STORES, TestClock, useTestApp } from './support/app.js';

/** The value of one sample line (`name{labels} value`) in a Prometheus text body, or undefined. */
function sample(body: string, name: string, labels = ''): number | undefined {
  const line = body.split('\n').find((l) => l.startsWith(`${name}${labels ? `{${labels}}` : ''} `));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
}

describe.each(STORES)('GET /metrics on %s', (store) => {
  const clock = new TestClock('2030-03-10T10:00:00.000Z');
  const t = useTestApp({ store, clock });

  it('reports requests by route template, a latency histogram, tasks by status, queue and outbox age, process metrics', async () => {
    const open = await submit(t, { contact_email: 'agent@mail.example-agent.dev' });
    await taskIn(t, 'delivered');
    await fetch(`${t.url}/api/v1/tasks/${open}`);
    await fetch(`${t.url}/api/v1/tasks/task-2030-0000000000000000`);
    await fetch(`${t.url}/no/such/${open}`);
    clock.advance(90_000);

    const res = await adminGet(t, '/metrics');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const body = await res.text();

    expect(sample(body, 'hts_http_requests_total', 'method="GET",route="/api/v1/tasks/:task_id",status="200"')).toBe(1);
    expect(sample(body, 'hts_http_requests_total', 'method="GET",route="/api/v1/tasks/:task_id",status="404"')).toBe(1);
    expect(sample(body, 'hts_http_requests_total', 'method="GET",route="<unmatched>",status="404"')).toBe(1);
    expect(sample(body, 'hts_http_requests_total', 'method="POST",route="/api/v1/tasks",status="202"')).toBe(2);
    expect(body).toContain('# TYPE hts_http_request_duration_seconds histogram');
    expect(sample(body, 'hts_http_request_duration_seconds_count', 'method="POST",route="/api/v1/tasks",status="202"')).toBe(2);
    expect(body).toMatch(/hts_http_request_duration_seconds_bucket\{le="0\.1",method="POST",route="\/api\/v1\/tasks",status="202"\} \d+/);

    expect(sample(body, 'hts_tasks', 'status="submitted"')).toBe(1);
    expect(sample(body, 'hts_tasks', 'status="delivered"')).toBe(1);
    expect(sample(body, 'hts_tasks', 'status="rejected"')).toBe(0);
    expect(sample(body, 'hts_open_queue_oldest_age_seconds')).toBe(90);
    // Acceptance and delivery queued requester mail; no worker runs here, so it is pending.
    expect(sample(body, 'hts_outbox_pending', 'outbox="mail"')).toBeGreaterThanOrEqual(2);
    expect(sample(body, 'hts_outbox_oldest_pending_age_seconds', 'outbox="mail"')).toBe(90);
    expect(sample(body, 'hts_outbox_pending', 'outbox="webhooks"')).toBe(0);
    expect(sample(body, 'hts_outbox_oldest_pending_age_seconds', 'outbox="webhooks"')).toBe(0);
    expect(sample(body, 'hts_store_errors_total')).toBe(0);
    expect(sample(body, 'hts_long_polls_held')).toBe(0);
    expect(body).toContain('# TYPE nodejs_eventloop_lag_seconds gauge');
    expect(body).toContain('# TYPE process_cpu_user_seconds_total counter');
  });

  it('counts the long-polls held right now', async () => {
    const id = await submit(t);
    const etag = (await fetch(`${t.url}/api/v1/tasks/${id}`)).headers.get('etag') ?? '';
    const abort = new AbortController();
    const held = fetch(`${t.url}/api/v1/tasks/${id}`, { headers: { 'if-none-match': etag, prefer: 'wait=30' }, signal: abort.signal }).catch(() => undefined);
    const until = Date.now() + 10_000;
    while (t.deps.waits.size < 1 && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
    const body = await (await adminGet(t, '/metrics')).text();
    abort.abort();
    await held;
    expect(sample(body, 'hts_long_polls_held')).toBe(1);
  });

  it('reads held long-polls from their holder at scrape time when one is registered', async () => {
    let held = 3;
    t.deps.metrics.countHeldLongPolls(() => held);
    expect(sample(await (await adminGet(t, '/metrics')).text(), 'hts_long_polls_held')).toBe(3);
    held = 0;
    expect(sample(await (await adminGet(t, '/metrics')).text(), 'hts_long_polls_held')).toBe(0);
  });
});
