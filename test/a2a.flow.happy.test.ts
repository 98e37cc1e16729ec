import { StreamResponse, verifyAgentCardSignature } from '@a2a-js/sdk';
import { createLocalJWKSet, type JSONWebKeySet } from 'jose';
import { describe, expect, it } from 'vitest';
import { EXAMPLE_RESPONSE_SCHEMA, EXAMPLE_RESULT } from '../src/domain/answers/answer-example.js';
import { a2aClient, BINDINGS, operator, sendRequest, taskOf, uniqueDescription } from './a2a.support.js';
import { pngImage, uploadOk } from './attachments.support.js';
import { STORES, TestClock, useTestApp } from './support/app.js';

/**
 * A2A 1.0 with the SDK's own client on both bindings (docs/a2a.md): a message submits a task, the
 * operator accepts, asks and delivers through the real admin API, and the client sees the states,
 * the question, its answer, the artifact and the receipt; idempotency by messageId; blocking sends
 * and streams.
 */

type Json = Record<string, unknown>;

describe.each(STORES)('A2A flows on %s', (store) => {
  const clock = new TestClock();
  const t = useTestApp({ store, clock });

  it('serves a card the SDK verifies, declaring both bindings, streaming, push and one skill per task type', async () => {
    const client = await a2aClient(t, 'JSONRPC');
    const jwks = (await (await fetch(`${t.url}/.well-known/jwks.json`)).json()) as JSONWebKeySet;
    const keys = createLocalJWKSet(jwks);
    const card = await client.getAgentCard(
      undefined,
      verifyAgentCardSignature(async (kid) => await keys({ alg: 'EdDSA', kid })),
    );
    expect(card.supportedInterfaces.map((i) => [i.protocolBinding, i.url, i.protocolVersion])).toEqual([
      ['JSONRPC', `${t.config.baseUrl}/a2a`, '1.0'],
      ['HTTP+JSON', `${t.config.baseUrl}/a2a/v1`, '1.0'],
    ]);
    expect(card.capabilities).toMatchObject({ streaming: true, pushNotifications: true });
    expect(card.skills.map((s) => s.id)).toEqual(expect.arrayContaining(['custom_human_in_the_loop', 'real_world_verification']));
    // A changed card does not verify.
    const verify = verifyAgentCardSignature(async (kid) => keys({ alg: 'EdDSA', kid }));
    await expect(verify({ ...card, name: 'Someone else' })).rejects.toThrow();
  });

  describe.each(BINDINGS)('over %s', (binding) => {
    it('submits from a message, then follows the operator: working, a question answered by message, completed with a signed text artifact', async () => {
      const client = await a2aClient(t, binding);
      const description = uniqueDescription();
      const first = taskOf(
        await client.sendMessage(sendRequest({ text: [description, 'Photos welcome.'], data: { location_required: true, location_detail: 'Springfield' } })),
      );
      const id = first.id as string;
      expect(first.contextId).toMatch(/^ctx-\d{4}-[0-9a-f]{32}$/);
      expect(first.status).toMatchObject({ state: 'TASK_STATE_SUBMITTED' });
      const rest = await (await fetch(`${t.url}/api/v1/tasks/${id}`)).json();
      expect(rest).toMatchObject({
        task_type: 'custom_human_in_the_loop',
        description: `${description}\n\nPhotos welcome.`,
        location_required: true,
        source: 'api',
      });

      await operator.patch(t, id, { status: 'accepted', eta: '2030-03-11T10:00:00.000Z' });
      expect(taskOf(await client.getTask({ tenant: '', id, historyLength: undefined })).status).toMatchObject({ state: 'TASK_STATE_WORKING' });

      const questionId = await operator.ask(t, id, 'Which entrance should I check?');
      const waiting = taskOf(await client.getTask({ tenant: '', id, historyLength: undefined }));
      expect(waiting.status).toMatchObject({
        state: 'TASK_STATE_INPUT_REQUIRED',
        message: { role: 'ROLE_AGENT', messageId: questionId, parts: [{ text: 'Which entrance should I check?' }] },
      });

      const answered = taskOf(await client.sendMessage(sendRequest({ text: 'The one on Main Street.', taskId: id })));
      expect(answered.status).toMatchObject({ state: 'TASK_STATE_WORKING' });
      expect(((answered.history as Json[]) ?? []).map((m) => [m.role, (m.parts as Json[])[0]?.text])).toEqual([
        ['ROLE_USER', `${description}\n\nPhotos welcome.`],
        ['ROLE_AGENT', 'Which entrance should I check?'],
        ['ROLE_USER', 'The one on Main Street.'],
      ]);

      await operator.patch(t, id, { status: 'delivered', operator_notes: 'Open from 8 to 12 on Sundays.' });
      const done = taskOf(await client.getTask({ tenant: '', id, historyLength: 1 }));
      expect(done.status).toMatchObject({ state: 'TASK_STATE_COMPLETED' });
      expect(done.history).toHaveLength(1);
      const [artifact] = done.artifacts as Json[];
      expect(artifact).toMatchObject({ artifactId: 'deliverable', name: 'deliverable', parts: [{ text: 'Open from 8 to 12 on Sundays.' }] });
      const published = (await (await fetch(`${t.url}/api/v1/tasks/${id}`)).json()) as Json;
      expect(artifact?.metadata).toEqual({
        receipt: published.receipt,
        deliverable_sha256: published.deliverable_sha256,
        receipt_issued_at: published.receipt_issued_at,
        status_url: `${t.config.baseUrl}/api/v1/tasks/${id}`,
      });
    });

    it('delivers a structured result as a data part and each attachment as a file part', async () => {
      const client = await a2aClient(t, binding);
      const first = taskOf(await client.sendMessage(sendRequest({ text: uniqueDescription(), data: { response_schema: EXAMPLE_RESPONSE_SCHEMA } })));
      const id = first.id as string;
      await operator.patch(t, id, { status: 'accepted' });
      const file = await uploadOk(t, id, await pngImage(), { type: 'image/png', name: 'door-sign.png' });
      await operator.patch(t, id, { status: 'delivered', result: EXAMPLE_RESULT });
      const done = taskOf(await client.getTask({ tenant: '', id, historyLength: undefined }));
      expect((done.artifacts as Json[])[0]?.parts).toEqual([
        { data: EXAMPLE_RESULT, mediaType: 'application/json' },
        { url: `${t.config.baseUrl}/api/v1/tasks/${id}/attachments/${String(file.attachment_id)}`, mediaType: 'image/png', filename: 'door-sign.png' },
      ]);
    });

    it('treats messageId as the idempotency key: the same message is the same task, another payload 422', async () => {
      const client = await a2aClient(t, binding);
      const text = uniqueDescription();
      const messageId = `m-${Math.random().toString(36).slice(2)}`;
      const a = taskOf(await client.sendMessage(sendRequest({ text, messageId })));
      const b = taskOf(await client.sendMessage(sendRequest({ text, messageId })));
      expect(b.id).toBe(a.id);
      expect(b.contextId).toBe(a.contextId);
      const changed = client.sendMessage(sendRequest({ text: `${text} Changed.`, messageId }));
      await expect(changed).rejects.toMatchObject(binding === 'JSONRPC' ? { data: { error: 'validation_failed' } } : { statusCode: 422 });
    });

    it('puts a follow-up task in the context it names, and lists the context newest update first, a page at a time', async () => {
      const client = await a2aClient(t, binding);
      const first = taskOf(await client.sendMessage(sendRequest({ text: uniqueDescription() })));
      const contextId = first.contextId as string;
      const ids = [first.id as string];
      for (let i = 0; i < 4; i++) {
        const next = taskOf(await client.sendMessage(sendRequest({ text: uniqueDescription(), contextId })));
        expect(next.contextId).toBe(contextId);
        ids.push(next.id as string);
      }
      clock.advance(1000);
      await operator.patch(t, ids[0] as string, { status: 'accepted' });
      const listed: string[] = [];
      let pageToken = '';
      let pages = 0;
      do {
        const page = await client.listTasks({
          tenant: '',
          contextId,
          status: 0,
          pageSize: 2,
          pageToken,
          historyLength: undefined,
          statusTimestampAfter: undefined,
          includeArtifacts: undefined,
        });
        expect(page.totalSize).toBe(5);
        expect(page.pageSize).toBe(2);
        listed.push(...page.tasks.map((task) => task.id));
        pageToken = page.nextPageToken;
        pages++;
      } while (pageToken !== '');
      expect(pages).toBe(3);
      expect(new Set(listed)).toEqual(new Set(ids));
      expect(listed[0]).toBe(ids[0]);
      // Without a context (and unsigned): none.
      const none = await client.listTasks({
        tenant: '',
        contextId: '',
        status: 0,
        pageSize: undefined,
        pageToken: '',
        historyLength: undefined,
        statusTimestampAfter: undefined,
        includeArtifacts: undefined,
      });
      expect(none.tasks).toEqual([]);
      expect(none.nextPageToken).toBe('');
    });

    it('holds a blocking send until the operator asks, and a stream until the task is final, resumed with SubscribeToTask', async () => {
      const client = await a2aClient(t, binding);
      const first = taskOf(await client.sendMessage(sendRequest({ text: uniqueDescription() })));
      const id = first.id as string;
      // Blocking (the default): held while submitted and working, released by the question.
      // A message on a task without an open question reaches the operator (reply_to: where they answer).
      const held = client.sendMessage(
        sendRequest({ text: 'Also check the side door.', data: { reply_to: 'agent@mail.example-agent.dev' }, taskId: id, returnImmediately: false }),
      );
      let settled = false;
      void held.then(() => {
        settled = true;
      });
      await operator.patch(t, id, { status: 'accepted' });
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(settled).toBe(false);
      await operator.ask(t, id, 'Is the side door on Elm Street?');
      expect(taskOf(await held).status).toMatchObject({ state: 'TASK_STATE_INPUT_REQUIRED' });

      // A stream: the task, then each change, until the task is final.
      const stream = client.sendMessageStream(sendRequest({ text: 'Yes, on Elm Street.', taskId: id }));
      const events: Json[] = [];
      for await (const event of stream) {
        events.push(StreamResponse.toJSON(event) as Json);
        if (events.length === 1) {
          expect(events[0]).toHaveProperty('task');
          // The stream ends at an interrupted state: the answer made the task work again, then a new question.
          await operator.ask(t, id, 'Should I photograph it?');
        }
      }
      expect(events.map((e) => Object.keys(e)[0])).toEqual(['task', 'statusUpdate']);
      expect(at(events[1], 'statusUpdate.status.state')).toBe('TASK_STATE_INPUT_REQUIRED');

      // Resumed with SubscribeToTask after answering over REST: working, then the artifact and completed.
      const questions = ((await (await fetch(`${t.url}/api/v1/tasks/${id}`)).json()) as { questions: { question_id: string }[] }).questions;
      await fetch(`${t.url}/api/v1/tasks/${id}/questions/${questions[1]?.question_id}/answer`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ answer: 'Yes please.' }),
      });
      const resumed: Json[] = [];
      for await (const event of client.resubscribeTask({ tenant: '', id })) {
        resumed.push(StreamResponse.toJSON(event) as Json);
        if (resumed.length === 1) await operator.patch(t, id, { status: 'delivered', operator_notes: 'Side door open too.' });
      }
      expect(resumed.map((e) => Object.keys(e)[0])).toEqual(['task', 'artifactUpdate', 'statusUpdate']);
      expect(at(resumed[0], 'task.status.state')).toBe('TASK_STATE_WORKING');
      expect(at(resumed[1], 'artifactUpdate.artifact.parts')).toEqual([{ text: 'Side door open too.', mediaType: 'text/plain' }]);
      expect(at(resumed[2], 'statusUpdate.status.state')).toBe('TASK_STATE_COMPLETED');
    });

    it('manages push notification configs, one also given with the message', async () => {
      const client = await a2aClient(t, binding);
      const request = sendRequest({ text: uniqueDescription() });
      request.configuration = {
        ...(request.configuration as NonNullable<typeof request.configuration>),
        taskPushNotificationConfig: {
          tenant: '',
          id: 'with-message',
          taskId: '',
          url: 'https://hooks.example-agent.dev/a2a',
          token: 'tok-1',
          authentication: undefined,
        },
      };
      const id = taskOf(await client.sendMessage(request)).id as string;
      const created = await client.createTaskPushNotificationConfig({
        tenant: '',
        id: 'second',
        taskId: id,
        url: 'https://hooks.example-agent.dev/other',
        token: '',
        authentication: { scheme: 'Bearer', credentials: 'secret-1' },
      });
      expect(created).toMatchObject({ id: 'second', taskId: id, url: 'https://hooks.example-agent.dev/other' });
      const got = await client.getTaskPushNotificationConfig({ tenant: '', taskId: id, id: 'with-message' });
      expect(got).toMatchObject({ id: 'with-message', url: 'https://hooks.example-agent.dev/a2a', token: 'tok-1' });
      const listed = await client.listTaskPushNotificationConfig({ tenant: '', taskId: id, pageSize: 0, pageToken: '' });
      expect(listed.configs.map((c) => c.id).sort()).toEqual(['second', 'with-message']);
      await client.deleteTaskPushNotificationConfig({ tenant: '', taskId: id, id: 'second' });
      expect((await client.listTaskPushNotificationConfig({ tenant: '', taskId: id, pageSize: 0, pageToken: '' })).configs.map((c) => c.id)).toEqual([
        'with-message',
      ]);
      await expect(client.getTaskPushNotificationConfig({ tenant: '', taskId: id, id: 'second' })).rejects.toThrow();
    });

    it('follows a task that waits for input when subscribing, until it is final', async () => {
      const client = await a2aClient(t, binding);
      const id = taskOf(await client.sendMessage(sendRequest({ text: uniqueDescription() }))).id as string;
      await operator.patch(t, id, { status: 'accepted' });
      await operator.ask(t, id, 'Front or back entrance?');
      const states: unknown[] = [];
      for await (const event of client.resubscribeTask({ tenant: '', id })) {
        const json = StreamResponse.toJSON(event) as Json;
        states.push(at(json, 'task.status.state') ?? at(json, 'statusUpdate.status.state') ?? 'artifact');
        if (states.length === 1) await client.sendMessage(sendRequest({ text: 'Front.', taskId: id }));
        if (states.length === 2) await operator.patch(t, id, { status: 'delivered', operator_notes: 'Checked the front.' });
      }
      expect(states).toEqual(['TASK_STATE_INPUT_REQUIRED', 'TASK_STATE_WORKING', 'artifact', 'TASK_STATE_COMPLETED']);
    });
  });
});

function at(value: unknown, path: string): unknown {
  return path.split('.').reduce<unknown>((current, key) => (current as Json | undefined)?.[key], value);
}
