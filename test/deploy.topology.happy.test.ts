import type { JSONWebKeySet } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyReceipt } from '../src/receipts/verify.js';
import { ADMIN, type Json } from './operator.support.js';
import type { TestClock } from './support/app.js';
import { startTestApp, type TestApp, validTask } from './support/app.js';
import { type Balancer, startBalancer } from './support/balancer.js';
import { startSmtpServer, type TestSmtpServer } from './support/smtp.js';
import { type Receiver, startReceiver } from './webhooks.support.js';

const OPERATOR = 'operator@ops.example-agent.dev';
const NOTES = 'Open Sundays 8:00-12:00; sign photographed.';

/**
 * The compose.yaml topology without Docker: two instances on one PostgreSQL database, both running
 * their background workers, behind a round-robin loopback proxy that sets X-Forwarded-For
 * (TRUST_PROXY=1). An agent talking to the proxy must see one service.
 */
describe.runIf(process.env.TEST_POSTGRES_URL)('two instances behind a balancer on one PostgreSQL', () => {
  let smtp: TestSmtpServer;
  let a: TestApp;
  let b: TestApp;
  let lb: Balancer;
  let receiver: Receiver;
  beforeAll(async () => {
    smtp = await startSmtpServer();
    receiver = await startReceiver();
    const env = {
      TRUST_PROXY: '1',
      WEBHOOK_ALLOW_PRIVATE: 'true',
      WEBHOOK_TIMEOUT_MS: '3000',
      SMTP_URL: smtp.url,
      OPERATOR_EMAIL: OPERATOR,
      MAIL_POLL_MS: '50',
      DAILY_TASK_CAP: '1000',
      AUTO_BLOCK_REFUSALS: '1000',
    };
    a = await startTestApp({ store: 'postgres', limits: 'production', env, background: true });
    b = await startTestApp({ store: 'postgres', limits: 'production', env, background: true, shareDatabaseWith: a });
    lb = await startBalancer([a.url, b.url]);
  });
  afterAll(async () => {
    await lb?.close();
    await b?.close();
    await a?.close();
    await smtp?.close();
    await receiver?.close();
  });

  const submit = (headers: Record<string, string> = {}, overrides: Json = {}) =>
    fetch(`${lb.url}/api/v1/tasks`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(validTask(overrides)),
    });
  const patch = (id: string, body: Json) =>
    fetch(`${lb.url}/api/v1/admin/tasks/${id}`, { method: 'PATCH', headers: { 'content-type': 'application/json', ...ADMIN }, body: JSON.stringify(body) });

  it('shares the per-client limit across instances, and a forged X-Forwarded-For does not escape it', async () => {
    const answers = [];
    for (let i = 0; i < 5; i++) answers.push(await submit({ 'x-forwarded-for': `203.0.113.${i}` }));
    expect(answers.map((r) => r.status)).toEqual([202, 202, 202, 429, 429]);
    // Both instances answered.
    expect(new Set(answers.map((r) => r.headers.get('x-upstream')))).toEqual(new Set(['0', '1']));
    const refusal = (await answers[3]?.json()) as Json;
    expect(refusal).toMatchObject({ error: 'rate_limited', limit: 'tasks_per_hour' });
  });

  it('sends each mail once, whichever instance queued it and whichever worker is free', async () => {
    const ids = (await (await fetch(`${lb.url}/api/v1/admin/tasks?limit=50`, { headers: ADMIN })).json()) as { tasks: Json[] };
    expect(ids.tasks).toHaveLength(3);
    for (const task of ids.tasks) await smtp.waitFor(1, (m) => m.to === OPERATOR && m.text.includes(String(task.task_id)), 20_000);
    const id = String(ids.tasks[0]?.task_id);
    expect((await patch(id, { status: 'accepted' })).status).toBe(200);
    expect((await patch(id, { status: 'delivered', operator_notes: NOTES })).status).toBe(200);
    await smtp.waitFor(2, (m) => m.to !== OPERATOR && m.text.includes(id), 20_000);
    // Give a duplicate every chance to arrive before counting.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const perTask = new Map<string, number>();
    for (const mail of smtp.received) {
      const key = `${mail.to ?? ''} ${mail.subject}`;
      perTask.set(key, (perTask.get(key) ?? 0) + 1);
    }
    expect([...perTask.values()].every((n) => n === 1)).toBe(true);
    expect(smtp.received).toHaveLength(5);
  });

  it('issues receipts that verify against the JWKS of either instance', async () => {
    const queue = (await (await fetch(`${lb.url}/api/v1/admin/tasks?status=delivered`, { headers: ADMIN })).json()) as { tasks: Json[] };
    const id = String(queue.tasks[0]?.task_id);
    const task = (await (await fetch(`${lb.url}/api/v1/tasks/${id}`)).json()) as Json;
    for (const instance of [a, b]) {
      const jwks = (await (await fetch(`${instance.url}/.well-known/jwks.json`)).json()) as JSONWebKeySet;
      const verdict = await verifyReceipt(String(task.receipt), { jwks, expectedTaskId: id, operatorNotes: NOTES });
      expect(verdict.valid).toBe(true);
    }
    // Both instances read the same task the same way.
    const [fromA, fromB] = await Promise.all([a, b].map(async (i) => (await fetch(`${i.url}/api/v1/tasks/${id}`)).json()));
    expect(fromA).toEqual(fromB);
  });

  it('reports one set of tasks in the metrics of either instance', async () => {
    for (const instance of [a, b]) {
      const body = await (await fetch(`${instance.url}/metrics`, { headers: ADMIN })).text();
      expect(body).toMatch(/^hts_tasks\{status="delivered"\} 1$/m);
      expect(body).toMatch(/^hts_tasks\{status="submitted"\} 2$/m);
    }
  });

  it('wakes a long-poll held on one instance when the change is made through the other', async () => {
    const queue = (await (await fetch(`${lb.url}/api/v1/admin/tasks?status=submitted`, { headers: ADMIN })).json()) as { tasks: Json[] };
    const id = String(queue.tasks[0]?.task_id);
    const first = await fetch(`${lb.url}/api/v1/tasks/${id}`);
    const etag = first.headers.get('etag') ?? '';
    expect(etag).not.toBe('');
    // Round-robin: the held read goes to one instance, the PATCH after it to the other.
    const held = fetch(`${lb.url}/api/v1/tasks/${id}`, { headers: { 'if-none-match': etag, prefer: 'wait=30' } });
    const until = Date.now() + 10_000;
    while (a.deps.waits.size + b.deps.waits.size < 1 && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
    const holder = a.deps.waits.size === 1 ? a : b;
    const metrics = await (await fetch(`${holder.url}/metrics`, { headers: ADMIN })).text();
    expect(metrics).toMatch(/^hts_long_polls_held 1$/m);
    const accepted = await patch(id, { status: 'accepted' });
    expect(accepted.status).toBe(200);
    expect(accepted.headers.get('x-upstream')).not.toBe((await held).headers.get('x-upstream'));
    const answer = await held;
    expect(answer.status).toBe(200);
    expect(((await answer.json()) as Json).status).toBe('accepted');
  });

  it('delivers each webhook once, whichever instance made the change and whichever worker is free', async () => {
    // The hourly task limit of this client was used up above; an hour later it may submit again.
    (a.clock as TestClock).advance(2 * 3_600_000);
    const res = await submit({}, { callback_url: `${receiver.url}/ok-topology` });
    expect(res.status, await res.clone().text()).toBe(202);
    const id = ((await res.json()) as { task_id: string }).task_id;
    await fetch(`${lb.url}/api/v1/tasks/${id}`);
    expect((await patch(id, { status: 'accepted' })).status).toBe(200);
    expect((await patch(id, { status: 'rejected', operator_notes: 'Out of area after all.' })).status).toBe(200);
    const until = Date.now() + 20_000;
    while (receiver.to('/ok-topology').length < 2 && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
    // Give a duplicate every chance to arrive before counting.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    // Exactly one delivery per event (lanes may deliver them in either order).
    const types = receiver.to('/ok-topology').map((r) => (JSON.parse(r.body) as { type: string }).type);
    expect(types.sort()).toEqual(['task.accepted', 'task.rejected']);
  });
});
