import { execFile } from 'node:child_process';
import { createPublicKey, type JsonWebKey, verify as nodeVerify, webcrypto } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { importJWK, type JWK } from 'jose';
import { describe, expect, it } from 'vitest';
import { enqueueTaskEvent } from '../src/services/delivery/webhooks.js';
import { withTransaction } from '../src/store/db.js';
import { postForm, signIn } from './console.support.js';
import { connectClient } from './mcp.support.js';
import { STORES, startTestApp, type TestApp, TestClock, useSuiteResource, useTestApp } from './support/app.js';
import { waitUntil } from './support/smtp.js';
import {
  ACCEPT,
  admin,
  listWebhooks,
  patchTask,
  runVerifyWebhook,
  submitWithCallback,
  useReceiver,
  WEBHOOK_TEST_ENV,
  waitForEvent,
} from './webhooks.support.js';

async function jwks(t: TestApp): Promise<JWK[]> {
  return ((await (await fetch(`${t.url}/.well-known/jwks.json`)).json()) as { keys: JWK[] }).keys;
}

/** The verification a receiver does with jose (WebCrypto Ed25519), trying every published key. */
async function verifiesWithJose(keys: JWK[], id: string, timestamp: string, body: string, header: string): Promise<boolean> {
  const [version, signature] = header.split(',', 2);
  if (version !== 'v1a' || signature === undefined) return false;
  for (const jwk of keys) {
    const key = (await importJWK(jwk, 'EdDSA')) as webcrypto.CryptoKey;
    if (await webcrypto.subtle.verify('Ed25519', key, Buffer.from(signature, 'base64'), Buffer.from(`${id}.${timestamp}.${body}`))) return true;
  }
  return false;
}

/** The same, independently, with node:crypto alone. */
function verifiesWithNode(keys: JWK[], id: string, timestamp: string, body: string, header: string): boolean {
  const signature = Buffer.from(header.slice('v1a,'.length), 'base64');
  return keys.some((jwk) => nodeVerify(null, Buffer.from(`${id}.${timestamp}.${body}`), createPublicKey({ key: jwk as JsonWebKey, format: 'jwk' }), signature));
}

describe.each(STORES)('webhooks on %s', (store) => {
  const receiver = useReceiver();
  const clock = new TestClock();
  const t = useTestApp({ store, clock, background: true, env: WEBHOOK_TEST_ENV });

  it('posts task.accepted, signed with a published key, carrying the task exactly as GET returns it', async () => {
    const id = await submitWithCallback(t, `${receiver.url}/ok-accepted`);
    await patchTask(t, id, ACCEPT);
    const status = await (await fetch(`${t.url}/api/v1/tasks/${id}`)).text();
    const [hit] = await waitUntil(() => (receiver.to('/ok-accepted').length > 0 ? receiver.to('/ok-accepted') : undefined), 15_000, 'the webhook');
    expect(hit!.headers['content-type']).toBe('application/json');
    const webhookId = String(hit!.headers['webhook-id']);
    const timestamp = String(hit!.headers['webhook-timestamp']);
    const signature = String(hit!.headers['webhook-signature']);
    expect(webhookId).toMatch(/^evt-2030-[0-9a-f]{32}$/);
    expect(timestamp).toBe(String(Math.floor(clock.now().getTime() / 1000)));
    expect(signature).toMatch(/^v1a,[A-Za-z0-9+/]+={0,2}$/);
    const body = JSON.parse(hit!.body) as { type: string; timestamp: string; data: unknown };
    expect(body.type).toBe('task.accepted');
    expect(body.timestamp).toBe(clock.now().toISOString());
    expect(body.data).toEqual(JSON.parse(status));
    expect(Object.keys(body)).toEqual(['type', 'timestamp', 'data']);

    const keys = await jwks(t);
    expect(await verifiesWithJose(keys, webhookId, timestamp, hit!.body, signature)).toBe(true);
    expect(verifiesWithNode(keys, webhookId, timestamp, hit!.body, signature)).toBe(true);
    // A changed byte, id or timestamp no longer verifies.
    expect(await verifiesWithJose(keys, webhookId, timestamp, hit!.body.replace('accepted', 'rejected'), signature)).toBe(false);
    expect(verifiesWithNode(keys, webhookId, String(Number(timestamp) + 1), hit!.body, signature)).toBe(false);

    const [event] = await waitUntil(async () => {
      const list = await listWebhooks(t, id);
      return list[0]?.status === 'delivered' ? list : undefined;
    });
    expect(event).toMatchObject({
      id: webhookId,
      task_id: id,
      event: 'task.accepted',
      target: receiver.url,
      status: 'delivered',
      attempts: 1,
      last_status_code: 204,
      last_error: null,
      next_attempt_at: null,
    });
    expect(event!.attempt_log).toEqual([expect.objectContaining({ attempt: 1, status_code: 204, error: null })]);
  });

  it('posts task.delivered with the receipt, and task.rejected with the reason', async () => {
    const delivered = await submitWithCallback(t, `${receiver.url}/ok-delivered`);
    await patchTask(t, delivered, ACCEPT);
    await patchTask(t, delivered, { status: 'delivered', operator_notes: 'Open Sundays 8-12.' });
    const rejected = await submitWithCallback(t, `${receiver.url}/ok-rejected`);
    await patchTask(t, rejected, { status: 'rejected', operator_notes: 'Outside the service area.' });
    const hits = await waitUntil(
      () => (receiver.to('/ok-delivered').length === 2 && receiver.to('/ok-rejected').length === 1 ? true : undefined),
      15_000,
      'three webhooks',
    );
    expect(hits).toBe(true);
    const bodies = receiver.to('/ok-delivered').map((r) => JSON.parse(r.body) as { type: string; data: Record<string, unknown> });
    const final = bodies.find((b) => b.type === 'task.delivered')!;
    expect(bodies.map((b) => b.type).sort()).toEqual(['task.accepted', 'task.delivered']);
    // The public task as a read gives it, except the receipt's place in the public log: the webhook
    // leaves with the delivery, and the sequencer integrates the receipt up to 2 s later
    // (docs/receipt-log.md), so the webhook may carry null where a later read has the index.
    const read = await (await fetch(`${t.url}/api/v1/tasks/${delivered}`)).json();
    expect(final.data.receipt_log_index === null || final.data.receipt_log_index === read.receipt_log_index).toBe(true);
    expect({ ...final.data, receipt_log_index: null }).toEqual({ ...read, receipt_log_index: null });
    expect(final.data.receipt).toEqual(expect.any(String));
    const rejection = JSON.parse(receiver.to('/ok-rejected')[0]!.body) as { type: string; data: Record<string, unknown> };
    expect(rejection.type).toBe('task.rejected');
    expect(rejection.data).toMatchObject({ task_id: rejected, status: 'rejected', operator_notes: 'Outside the service area.' });
    // Distinct events have distinct ids.
    const ids = new Set([...receiver.to('/ok-delivered'), ...receiver.to('/ok-rejected')].map((r) => r.headers['webhook-id']));
    expect(ids.size).toBe(3);
  });

  it('retries a failing receiver with backoff, keeping the same webhook-id, until it answers 2xx', async () => {
    const id = await submitWithCallback(t, `${receiver.url}/fail-2-${store}`);
    await patchTask(t, id, ACCEPT);
    const first = await waitForEvent(t, id, 'task.accepted', (w) => w.attempts === 1);
    expect(first).toMatchObject({ status: 'pending', last_status_code: 500, last_error: 'the receiver answered 500' });
    // The first retry is due 5 s later (±20 % jitter); nothing is sent before that.
    const due = Date.parse(first.next_attempt_at!) - clock.now().getTime();
    expect(due).toBeGreaterThanOrEqual(4000);
    expect(due).toBeLessThanOrEqual(6000);
    clock.advance(7000);
    const second = await waitForEvent(t, id, 'task.accepted', (w) => w.attempts === 2);
    const secondDue = Date.parse(second.next_attempt_at!) - clock.now().getTime();
    expect(secondDue).toBeGreaterThanOrEqual(8000);
    expect(secondDue).toBeLessThanOrEqual(12000);
    clock.advance(13000);
    const done = await waitForEvent(t, id, 'task.accepted', (w) => w.status === 'delivered');
    expect(done.attempt_log.map((a) => a.status_code)).toEqual([500, 500, 200]);
    const hits = receiver.to(`/fail-2-${store}`);
    expect(hits).toHaveLength(3);
    expect(new Set(hits.map((h) => h.headers['webhook-id']))).toEqual(new Set([done.id]));
    expect(new Set(hits.map((h) => h.body)).size).toBe(1);
  });

  it('verifies a received webhook with npm run verify-webhook (0 valid, 4 tampered, 2 usage)', async () => {
    const id = await submitWithCallback(t, `${receiver.url}/ok-cli-${store}`);
    await patchTask(t, id, ACCEPT);
    const [hit] = await waitUntil(() => (receiver.to(`/ok-cli-${store}`).length > 0 ? receiver.to(`/ok-cli-${store}`) : undefined), 15_000, 'the webhook');
    const dir = mkdtempSync(path.join(tmpdir(), 'hts-webhook-'));
    try {
      const headersFile = path.join(dir, 'headers.txt');
      const bodyFile = path.join(dir, 'body.json');
      const jwksFile = path.join(dir, 'jwks.json');
      writeFileSync(
        headersFile,
        `POST /ok-cli HTTP/1.1\n${['webhook-id', 'webhook-timestamp', 'webhook-signature'].map((h) => `${h}: ${String(hit!.headers[h])}`).join('\n')}\n`,
      );
      writeFileSync(bodyFile, hit!.body);
      writeFileSync(jwksFile, JSON.stringify({ keys: await jwks(t) }));
      const viaService = await runVerifyWebhook(['--headers-file', headersFile, '--body-file', bodyFile, '--base-url', t.url]);
      expect(viaService.code).toBe(0);
      expect(viaService.stdout).toContain('VALID');
      expect(viaService.stdout).toContain(`task.accepted for ${id}`);
      const viaStdin = await runVerifyWebhook(
        [
          '--id',
          String(hit!.headers['webhook-id']),
          '--timestamp',
          String(hit!.headers['webhook-timestamp']),
          '--signature',
          String(hit!.headers['webhook-signature']),
          '--jwks-file',
          jwksFile,
        ],
        hit!.body,
      );
      expect(viaStdin.code).toBe(0);
      const tampered = await runVerifyWebhook(['--headers-file', headersFile, '--jwks-file', jwksFile], hit!.body.replace('"accepted"', '"rejected"'));
      expect(tampered.code).toBe(4);
      expect(tampered.stdout).toContain('INVALID');
      // The clock of the test app is in 2030: a freshness check against the real clock refuses it.
      const stale = await runVerifyWebhook(['--headers-file', headersFile, '--body-file', bodyFile, '--jwks-file', jwksFile, '--tolerance', '300']);
      expect(stale.code).toBe(4);
      const usage = await runVerifyWebhook(['--body-file', bodyFile, '--jwks-file', jwksFile]);
      expect(usage.code).toBe(2);
      writeFileSync(jwksFile, '{"keys":[]}');
      const noKeys = await runVerifyWebhook(['--headers-file', headersFile, '--body-file', bodyFile, '--jwks-file', jwksFile]);
      expect(noKeys.code).toBe(1);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    // Six runs of the CLI through tsx: slow on a loaded machine.
  }, 180_000);

  it('sends nothing for a task without a callback URL', async () => {
    const res = await fetch(`${t.url}/api/v1/tasks`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        task_type: 'ai_output_review',
        description: 'Review this generated summary for factual errors, please.',
        delivery: 'status_poll',
      }),
    });
    const { task_id: id } = (await res.json()) as { task_id: string };
    await patchTask(t, id, ACCEPT);
    expect(await listWebhooks(t, id)).toEqual([]);
  });

  it('lets the operator retry a failed event, which is then delivered', async () => {
    const retry = await startTestApp({ store, clock: new TestClock(), background: true, env: { ...WEBHOOK_TEST_ENV, WEBHOOK_MAX_ATTEMPTS: '1' } });
    try {
      const id = await submitWithCallback(retry, `${receiver.url}/fail-1-retry-${store}`);
      await patchTask(retry, id, ACCEPT);
      const failed = await waitForEvent(retry, id, 'task.accepted', (w) => w.status === 'failed');
      expect(failed).toMatchObject({ attempts: 1, last_status_code: 500, next_attempt_at: null });
      const res = await fetch(`${retry.url}/api/v1/admin/webhooks/${failed.id}/retry`, { method: 'POST', headers: admin });
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ id: failed.id, status: 'pending', attempts: 0 });
      const done = await waitForEvent(retry, id, 'task.accepted', (w) => w.status === 'delivered');
      expect(done.attempt_log.map((a) => a.status_code)).toEqual([500, 200]);
      expect(new Set(receiver.to(`/fail-1-retry-${store}`).map((h) => h.headers['webhook-id']))).toEqual(new Set([failed.id]));
    } finally {
      await retry.close();
    }
  });
});

describe.each(STORES)('webhooks under a slow poll on %s', (store) => {
  const receiver = useReceiver();
  const t = useTestApp({ store, background: true, env: { ...WEBHOOK_TEST_ENV, MAIL_POLL_MS: '60000' } });

  it('wakes the worker once a slow transaction has committed, not before, so its event waits for no poll', async () => {
    // The event is queued 300 ms before its transaction commits: a nudge sent at once would have
    // the worker claim 25 ms later, see nothing on PostgreSQL (another connection) and leave the
    // event to the poll a minute away.
    const id = await submitWithCallback(t, `${receiver.url}/ok-slow-commit`);
    const row = await t.store.db.selectFrom('tasks').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    await withTransaction(t.store.db, async (trx) => {
      await enqueueTaskEvent(trx, t.deps, { ...row, status: 'accepted' });
      await new Promise((resolve) => setTimeout(resolve, 300));
    });
    await waitUntil(() => (receiver.to('/ok-slow-commit').length > 0 ? true : undefined), 5_000, 'the webhook');
  });
});

describe.each(STORES)('webhooks in the operator console on %s', (store) => {
  const receiver = useReceiver();
  const t = useTestApp({ store, background: true, env: { ...WEBHOOK_TEST_ENV, WEBHOOK_MAX_ATTEMPTS: '1' } });

  it('shows each event with its attempts on the task page, and retries it from there', async () => {
    const id = await submitWithCallback(t, `${receiver.url}/fail-1-console-${store}`);
    await patchTask(t, id, ACCEPT);
    const failed = await waitForEvent(t, id, 'task.accepted', (w) => w.status === 'failed');
    const { cookie, csrf } = await signIn(t);
    const page = await (await fetch(`${t.url}/operator/tasks/${id}`, { headers: { cookie } })).text();
    expect(page).toContain('<h2 id="hooks">Webhooks</h2>');
    expect(page).toContain(`To ${receiver.url}`);
    expect(page).toContain('task.accepted');
    expect(page).toContain('failed');
    expect(page).toContain('Last error: the receiver answered 500');
    expect(page).toContain(`action="/operator/webhooks/${failed.id}/retry"`);
    expect(page).not.toContain(`/fail-1-console-${store}`);

    const refused = await postForm(t, `/operator/webhooks/${failed.id}/retry`, {}, cookie);
    expect(refused.status).toBe(403);
    const res = await postForm(t, `/operator/webhooks/${failed.id}/retry`, { _csrf: csrf }, cookie);
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe(`/operator/tasks/${id}?done=webhook`);
    await waitForEvent(t, id, 'task.accepted', (w) => w.status === 'delivered');
    const after = await (await fetch(`${t.url}/operator/tasks/${id}`, { headers: { cookie } })).text();
    expect(after).toContain('delivered');
    expect(after).not.toContain(`action="/operator/webhooks/${failed.id}/retry"`);
  });
});

describe('webhooks in the documents', () => {
  const t = useTestApp();

  it('describes callback_url (write-only) and the webhook as an OpenAPI callbacks object on POST /api/v1/tasks', async () => {
    const doc: unknown = await (await fetch(`${t.url}/openapi.json`)).json();
    /** Walks object keys (they contain dots and slashes, so no path string). */
    const get = (value: unknown, ...keys: string[]): unknown =>
      keys.reduce<unknown>((node, key) => (node as Record<string, unknown> | undefined)?.[key], value);
    const schemas = get(doc, 'components', 'schemas');
    expect(get(schemas, 'TaskInput', 'properties', 'callback_url')).toMatchObject({ type: 'string', maxLength: 2000, writeOnly: true });
    expect(get(schemas, 'Task', 'properties', 'callback_url')).toBeUndefined();
    const callback = get(doc, 'paths', '/api/v1/tasks', 'post', 'callbacks', 'taskEvent', '{$request.body#/callback_url}', 'post');
    expect((get(callback, 'parameters') as { name: string }[]).map((p) => p.name)).toEqual(['webhook-id', 'webhook-timestamp', 'webhook-signature']);
    expect(get(callback, 'requestBody', 'content', 'application/json', 'schema')).toEqual({ $ref: '#/components/schemas/WebhookEvent' });
    expect(get(schemas, 'WebhookEvent', 'properties', 'data')).toEqual({ $ref: '#/components/schemas/Task' });
    expect(get(schemas, 'WebhookEvent', 'properties', 'type', 'enum')).toEqual([
      'task.accepted',
      'task.delivered',
      'task.rejected',
      'task.question',
      'task.deadline_passed',
      'task.approval',
    ]);
    expect(Object.keys(get(callback, 'responses') as object).sort()).toEqual(['2XX', '410', 'default']);
    for (const path of ['/api/v1/admin/webhooks', '/api/v1/admin/webhooks/{id}/retry']) expect(get(doc, 'paths', path)).toBeDefined();
  });

  it('tells agents about webhooks in llms.txt, api.md, agent.json and the MCP tool description', async () => {
    const llms = await (await fetch(`${t.url}/llms.txt`)).text();
    // All five events, wherever webhooks are described (issue 51: three were listed).
    expect(llms).toMatch(/callback_url.*signed POST.*accepted, delivered or rejected.*task\.question.*task\.deadline_passed/);
    const events = /- Events, one per change: ([\s\S]*?) Each is a `POST`/.exec(readFileSync(path.resolve('docs/webhooks.md'), 'utf8'))?.[1] ?? '';
    for (const event of ['task.accepted', 'task.delivered', 'task.rejected', 'task.question', 'task.deadline_passed']) expect(events).toContain(`\`${event}\``);
    const api = await (await fetch(`${t.url}/api.md`)).text();
    expect(api).toContain('## Webhooks');
    expect(api).toContain('webhook-signature: v1a,');
    const agent = (await (await fetch(`${t.url}/agent.json`)).json()) as { how_it_works: string[]; task_schema: { properties: Record<string, unknown> } };
    expect(agent.how_it_works.some((line) => line.includes('callback_url'))).toBe(true);
    expect(agent.task_schema.properties.callback_url).toBeDefined();
    const client = await connectClient(t);
    try {
      const submit = (await client.listTools()).tools.find((tool) => tool.name === 'submit_human_task')!;
      expect(submit.description).toMatch(/callback_url \(https\).*accepted, delivered or rejected.*task\.question.*task\.deadline_passed/);
      expect(submit.inputSchema.properties!.callback_url).toMatchObject({ type: 'string', maxLength: 2000 });
    } finally {
      await client.close();
    }
  });
});

/** The code blocks of one language in docs/webhooks.md. */
function snippets(language: string): string[] {
  const text = readFileSync(path.resolve('docs/webhooks.md'), 'utf8');
  return [...text.matchAll(new RegExp(`\`\`\`${language}\n([\\s\\S]*?)\`\`\``, 'g'))].map((m) => m[1] ?? '');
}

function run(command: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(command, args, { timeout: 60_000 }, (error, stdout, stderr) =>
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr }),
    );
  });
}

const hasPythonCryptography = async () => (await run('python3', ['-c', 'import cryptography'])).code === 0;

describe('the verification snippets of docs/webhooks.md', () => {
  const receiver = useReceiver();
  // The snippets refuse timestamps far from now: this app's clock reads the real time.
  const t = useTestApp({ clock: new TestClock(new Date()), background: true, env: WEBHOOK_TEST_ENV });
  const dir = useSuiteResource(
    async () => ({ path: mkdtempSync(path.join(tmpdir(), 'hts-snippets-')) }),
    async (d) => rmSync(d.path, { recursive: true, force: true }),
  );

  async function receivedWebhook(pathname: string): Promise<{ headers: Record<string, string>; body: string }> {
    const id = await submitWithCallback(t, `${receiver.url}${pathname}`);
    await patchTask(t, id, ACCEPT);
    const [hit] = await waitUntil(() => (receiver.to(pathname).length > 0 ? receiver.to(pathname) : undefined), 15_000, 'the webhook');
    const headers = Object.fromEntries(['webhook-id', 'webhook-timestamp', 'webhook-signature'].map((h) => [h, String(hit!.headers[h])]));
    return { headers, body: hit!.body };
  }

  it('verifies a real webhook with the Node snippet, and refuses a tampered one', async () => {
    const [code] = snippets('js');
    const { headers, body } = await receivedWebhook('/ok-snippet-js');
    const file = path.join(dir.path, 'verify.mjs');
    const call = (raw: string) => `console.log(await verifyWebhook(${JSON.stringify(headers)}, ${JSON.stringify(raw)}, ${JSON.stringify(t.url)}));\n`;
    writeFileSync(file, `${code}\n${call(body)}${call(body.replace('"accepted"', '"rejected"'))}`);
    const result = await run(process.execPath, [file]);
    expect(result.stderr).toBe('');
    expect(result.stdout.trim().split('\n')).toEqual(['true', 'false']);
  });

  it('verifies a real webhook with the Python snippet (cryptography), and refuses a tampered one', async (context) => {
    if (!(await hasPythonCryptography())) context.skip();
    const [code] = snippets('python');
    const { headers, body } = await receivedWebhook('/ok-snippet-python');
    const file = path.join(dir.path, 'verify.py');
    const call = (raw: string) => `print(verify_webhook(${JSON.stringify(headers)}, ${JSON.stringify(raw)}.encode(), ${JSON.stringify(t.url)}))\n`;
    writeFileSync(file, `${code}\n${call(body)}${call(body.replace('"accepted"', '"rejected"'))}`);
    const result = await run('python3', [file]);
    expect(result.stderr).toBe('');
    expect(result.stdout.trim().split('\n')).toEqual(['True', 'False']);
  });
});

describe.runIf(STORES.includes('postgres'))('webhooks with two instances on one PostgreSQL database', () => {
  const receiver = useReceiver();
  const a = useTestApp({ store: 'postgres', background: true, env: WEBHOOK_TEST_ENV });
  const b = useTestApp(() => ({ shareDatabaseWith: a, background: true, env: WEBHOOK_TEST_ENV }));

  it('sends each event exactly once although both workers poll the same outbox', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 12; i++) ids.push(await submitWithCallback(a, `${receiver.url}/slow-150-twice`));
    // Accept through both instances, so both nudge their workers and both poll.
    await Promise.all(ids.map((id, i) => patchTask(i % 2 === 0 ? a : b, id, ACCEPT)));
    await waitUntil(
      async () => {
        const rows = await Promise.all(ids.map((id) => listWebhooks(a, id)));
        return rows.every((list) => list[0]?.status === 'delivered') ? true : undefined;
      },
      30_000,
      'every event delivered',
    );
    await new Promise((resolve) => setTimeout(resolve, 500));
    const hits = receiver.to('/slow-150-twice');
    expect(hits).toHaveLength(12);
    expect(new Set(hits.map((h) => h.headers['webhook-id'])).size).toBe(12);
    const attempts = await Promise.all(ids.map(async (id) => (await listWebhooks(b, id))[0]!.attempt_log.length));
    expect(attempts).toEqual(ids.map(() => 1));
  });
});
