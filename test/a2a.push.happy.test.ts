import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { systemClock } from '../src/domain/time.js';
import { createPushConfig, deletePushConfig, getPushConfig, listPushConfigs } from '../src/services/a2a/push-configs.js';
import { ADMIN, type Json, patchOk, submit } from './operator.support.js';
import { STORES, TestClock, useTestApp } from './support/app.js';
import { waitUntil } from './support/smtp.js';
import { listWebhooks, type Received, runVerifyWebhook, useReceiver, WEBHOOK_TEST_ENV } from './webhooks.support.js';

/**
 * A2A push notifications (services/a2a/push-configs.ts, docs/a2a.md "Push notifications"): the
 * configs of a task, and every change A2A reports posted to a real loopback receiver as an A2A
 * StreamResponse through the webhook outbox, with the config's token and Bearer credential and the
 * Standard Webhooks and Web Bot Auth signatures of every webhook.
 */

type StreamResponse = {
  statusUpdate?: { taskId: string; contextId: string; status: { state: string; message?: { parts: { text?: string }[] } } };
  artifactUpdate?: { taskId: string; contextId: string; artifact: { artifactId: string; parts: Json[]; metadata: Json } };
};

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

function bodies(hits: Received[]): StreamResponse[] {
  return hits.map((hit) => JSON.parse(hit.body) as StreamResponse);
}

async function ask(t: { url: string }, taskId: string, question: string): Promise<string> {
  const res = await fetch(`${t.url}/api/v1/admin/tasks/${taskId}/questions`, {
    method: 'POST',
    headers: { ...ADMIN, 'content-type': 'application/json' },
    body: JSON.stringify({ question }),
  });
  expect(res.status).toBe(201);
  return ((await res.json()) as { question_id: string }).question_id;
}

describe.each(STORES)('A2A push notifications on %s', (store) => {
  const receiver = useReceiver();
  const clock = new TestClock();
  const t = useTestApp({ store, clock, background: true, env: WEBHOOK_TEST_ENV });

  /** The hits of `route` once there are `count` of them. */
  const hitsOf = (route: string, count: number) =>
    waitUntil(() => (receiver.to(route).length >= count ? receiver.to(route) : undefined), 15_000, `${count} notifications to ${route}`);

  it('creates, reads, lists and deletes a task’s configs in A2A’s shapes, generating the id when none is given', async () => {
    const taskId = await submit(t);
    const url = `${receiver.url}/ok-crud-${store}`;
    const created = await createPushConfig(t.deps, taskId, { url, token: 'tok-1', authentication: { scheme: 'Bearer', credentials: 'secret-1' } });
    expect(created).toEqual({ id: expect.stringMatching(UUID), taskId, url, token: 'tok-1', authentication: { scheme: 'Bearer', credentials: 'secret-1' } });
    const named = await createPushConfig(t.deps, taskId, { id: 'mine', url, taskId });
    expect(named).toEqual({ id: 'mine', taskId, url });
    expect(await getPushConfig(t.deps, taskId, created.id)).toEqual(created);
    expect(await listPushConfigs(t.deps, taskId)).toEqual({ configs: [created, named], nextPageToken: '' });
    // The same id again replaces that config.
    const replaced = await createPushConfig(t.deps, taskId, { id: 'mine', url: `${url}-2`, token: 'tok-2' });
    expect(replaced).toEqual({ id: 'mine', taskId, url: `${url}-2`, token: 'tok-2' });
    expect((await listPushConfigs(t.deps, taskId)).configs).toHaveLength(2);
    await deletePushConfig(t.deps, taskId, 'mine');
    // Deleting is idempotent.
    await deletePushConfig(t.deps, taskId, 'mine');
    expect((await listPushConfigs(t.deps, taskId)).configs.map((c) => c.id)).toEqual([created.id]);
  });

  it('posts every change A2A reports as a StreamResponse, with the token, the Bearer credential and verifiable signatures', async () => {
    const taskId = await submit(t);
    const route = `/ok-flow-${store}`;
    await createPushConfig(t.deps, taskId, {
      url: `${receiver.url}${route}`,
      token: 'notify-token',
      authentication: { scheme: 'Bearer', credentials: 'receiver-secret' },
    });
    const contextId = (await t.store.db.selectFrom('tasks').select('context_id').where('id', '=', taskId).executeTakeFirstOrThrow()).context_id;

    clock.advance(1000);
    await patchOk(t, taskId, { status: 'accepted' });
    const [accepted] = await hitsOf(route, 1);
    expect(accepted!.headers['x-a2a-notification-token']).toBe('notify-token');
    expect(accepted!.headers.authorization).toBe('Bearer receiver-secret');
    expect(accepted!.headers['content-type']).toBe('application/a2a+json');
    expect(accepted!.headers['webhook-id']).toMatch(/^evt-/);
    expect(accepted!.headers['signature-input']).toMatch(/tag="web-bot-auth"/);
    expect(JSON.parse(accepted!.body)).toEqual({
      statusUpdate: { taskId, contextId, status: { state: 'TASK_STATE_WORKING', message: expect.any(Object), timestamp: expect.any(String) } },
    });

    clock.advance(1000);
    const questionId = await ask(t, taskId, 'Front door or side entrance?');
    clock.advance(1000);
    const answered = await fetch(`${t.url}/api/v1/tasks/${taskId}/questions/${questionId}/answer`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ answer: 'Front door.' }),
    });
    expect(answered.status).toBe(200);
    clock.advance(1000);
    await patchOk(t, taskId, { status: 'delivered', operator_notes: 'Open on Sundays 8-12.' });
    const hits = await hitsOf(route, 5);
    const states = bodies(hits)
      .filter((b) => b.statusUpdate)
      .map((b) => b.statusUpdate!.status.state);
    // Sent concurrently by the worker's lanes: the order of arrival is not the order of the changes.
    expect(states.sort()).toEqual(['TASK_STATE_COMPLETED', 'TASK_STATE_INPUT_REQUIRED', 'TASK_STATE_WORKING', 'TASK_STATE_WORKING'].sort());
    const question = bodies(hits).find((b) => b.statusUpdate?.status.state === 'TASK_STATE_INPUT_REQUIRED');
    expect(question!.statusUpdate!.status.message!.parts[0]!.text).toBe('Front door or side entrance?');
    const artifact = bodies(hits).find((b) => b.artifactUpdate)!.artifactUpdate!;
    expect(artifact).toMatchObject({ taskId, contextId, artifact: { artifactId: 'deliverable', parts: [{ text: 'Open on Sundays 8-12.' }] } });
    expect(artifact.artifact.metadata.receipt).toEqual(expect.any(String));
    expect(new Set(hits.map((h) => h.headers['webhook-id'])).size).toBe(5);
  });

  it('retries after a receiver outage as webhooks do, with the same webhook-id and body', async () => {
    const taskId = await submit(t);
    const route = `/fail-2-push-${store}`;
    await createPushConfig(t.deps, taskId, { url: `${receiver.url}${route}` });
    await patchOk(t, taskId, { status: 'accepted' });
    await waitUntil(async () => ((await listWebhooks(t, taskId))[0]?.attempts === 1 ? true : undefined), 15_000, 'the first attempt');
    clock.advance(7000);
    await waitUntil(async () => ((await listWebhooks(t, taskId))[0]?.attempts === 2 ? true : undefined), 15_000, 'the second attempt');
    clock.advance(13000);
    const [event] = await waitUntil(async () => {
      const list = await listWebhooks(t, taskId);
      return list[0]?.status === 'delivered' ? list : undefined;
    });
    expect(event!.event).toMatch(/^a2a\.statusUpdate\//);
    expect(event!.attempt_log.map((a) => a.status_code)).toEqual([500, 500, 200]);
    const hits = receiver.to(route);
    expect(new Set(hits.map((h) => h.headers['webhook-id']))).toEqual(new Set([event!.id]));
    expect(new Set(hits.map((h) => h.body)).size).toBe(1);
  });

  it('tells each config of the task, and stops telling one once it is deleted', async () => {
    const taskId = await submit(t);
    const kept = `/ok-kept-${store}`;
    const dropped = `/ok-dropped-${store}`;
    await createPushConfig(t.deps, taskId, { url: `${receiver.url}${kept}` });
    const gone = await createPushConfig(t.deps, taskId, { url: `${receiver.url}${dropped}` });
    await patchOk(t, taskId, { status: 'accepted' });
    await hitsOf(kept, 1);
    await hitsOf(dropped, 1);
    await deletePushConfig(t.deps, taskId, gone.id);
    clock.advance(1000);
    await patchOk(t, taskId, { status: 'rejected', operator_notes: 'Outside the service area.' });
    const [, rejected] = await hitsOf(kept, 2);
    expect(JSON.parse(rejected!.body).statusUpdate.status.state).toBe('TASK_STATE_REJECTED');
    expect(receiver.to(dropped)).toHaveLength(1);
  });

  it('reports a withdrawal at the requester’s request as TASK_STATE_CANCELED', async () => {
    const taskId = await submit(t);
    const route = `/ok-cancel-${store}`;
    await createPushConfig(t.deps, taskId, { url: `${receiver.url}${route}` });
    expect((await fetch(`${t.url}/api/v1/tasks/${taskId}/cancel`, { method: 'POST' })).status).toBe(202);
    const [hit] = await hitsOf(route, 1);
    expect(JSON.parse(hit!.body).statusUpdate.status.state).toBe('TASK_STATE_CANCELED');
  });
});

describe.each(STORES)('A2A push notifications signed, on %s (the real clock: Web Bot Auth signatures carry a time window)', (store) => {
  const receiver = useReceiver();
  const t = useTestApp({ store, clock: systemClock, background: true, env: WEBHOOK_TEST_ENV });

  it('verify-webhook accepts both signatures of a notification as received, and refuses it tampered', async () => {
    const taskId = await submit(t);
    const route = `/ok-signed-${store}`;
    await createPushConfig(t.deps, taskId, { url: `${receiver.url}${route}`, token: 'notify-token' });
    await patchOk(t, taskId, { status: 'accepted' });
    const [accepted] = await waitUntil(() => (receiver.to(route).length > 0 ? receiver.to(route) : undefined), 15_000, 'the notification');
    // The repository's verifier accepts both signatures of the notification as received.
    const dir = mkdtempSync(path.join(tmpdir(), 'hts-a2a-push-'));
    try {
      const headersFile = path.join(dir, 'headers.txt');
      const bodyFile = path.join(dir, 'body.json');
      const names = ['host', 'webhook-id', 'webhook-timestamp', 'webhook-signature', 'signature', 'signature-input', 'signature-agent'];
      writeFileSync(headersFile, `POST ${route} HTTP/1.1\n${names.map((h) => `${h}: ${String(accepted!.headers[h])}`).join('\n')}\n`);
      writeFileSync(bodyFile, accepted!.body);
      const verified = await runVerifyWebhook(['--headers-file', headersFile, '--body-file', bodyFile, '--base-url', t.url]);
      expect(verified.stdout).toContain('✓ web bot auth');
      expect(verified.stdout).toContain(`A2A statusUpdate for ${taskId} (TASK_STATE_WORKING)`);
      expect(verified.code).toBe(0);
      writeFileSync(bodyFile, accepted!.body.replace('TASK_STATE_WORKING', 'TASK_STATE_FAILED'));
      expect((await runVerifyWebhook(['--headers-file', headersFile, '--body-file', bodyFile, '--base-url', t.url])).code).toBe(4);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe.each(STORES)('A2A push notifications in the outbox (no worker) on %s', (store) => {
  const t = useTestApp({ store, env: WEBHOOK_TEST_ENV });

  it('queues one row per config in the change’s transaction, and a deleted config’s waiting rows end as gone', async () => {
    const taskId = await submit(t);
    const a = await createPushConfig(t.deps, taskId, { url: 'http://127.0.0.1:9/a' });
    const b = await createPushConfig(t.deps, taskId, { url: 'http://127.0.0.1:9/b' });
    await patchOk(t, taskId, { status: 'accepted' });
    const rows = await t.store.db.selectFrom('webhook_outbox').select(['push_config_id', 'status', 'body']).where('task_id', '=', taskId).execute();
    expect(rows.map((r) => r.push_config_id).sort()).toEqual([a.id, b.id].sort());
    expect(new Set(rows.map((r) => r.body)).size).toBe(1);
    await deletePushConfig(t.deps, taskId, a.id);
    const after = await listWebhooks(t, taskId);
    expect(after.map((w) => [w.event.split('/')[1], w.status]).sort()).toEqual(
      [
        [a.id, 'gone'],
        [b.id, 'pending'],
      ].sort(),
    );
  });

  it('queues nothing for a passed deadline or an approval step of an accepted task, which change no A2A state', async () => {
    const taskId = await submit(t);
    await createPushConfig(t.deps, taskId, { url: 'http://127.0.0.1:9/news' });
    await patchOk(t, taskId, { status: 'accepted' });
    const { enqueueTaskEvent } = await import('../src/services/delivery/webhooks.js');
    const row = await t.store.db.selectFrom('tasks').selectAll().where('id', '=', taskId).executeTakeFirstOrThrow();
    const later = new Date(Date.parse(row.updated_at) + 1000).toISOString();
    await enqueueTaskEvent(t.store.db, t.deps, { ...row, deadline_passed_at: later, updated_at: later }, 'task.deadline_passed');
    await enqueueTaskEvent(t.store.db, t.deps, { ...row, updated_at: later }, 'task.approval', '1/1');
    expect(await listWebhooks(t, taskId)).toHaveLength(1);
  });
});
