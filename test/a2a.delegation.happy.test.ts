import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { AgentCard, Message, SendMessageRequest, Task } from '@a2a-js/sdk';
import { ClientFactory, JsonRpcTransportFactory } from '@a2a-js/sdk/client';
import { AgentEvent, type AgentExecutor, DefaultRequestHandler, InMemoryTaskStore, JsonRpcTransportHandler, ServerCallContext } from '@a2a-js/sdk/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { a2aClient, operator, uniqueDescription } from './a2a.support.js';
import { STORES, TEST_ADMIN_KEY, useTestApp } from './support/app.js';

/**
 * A user's multi-agent system adds "a human" as one more remote agent (docs/a2a.md): a second A2A
 * agent, written with the SDK's own server pieces (AgentExecutor, DefaultRequestHandler, the
 * JSON-RPC transport handler on node:http), delegates the part of its work that needs a person to
 * this service with the SDK's client, waits in a blocking SendMessage, and answers its own caller
 * with what the person delivered. Nothing here knows the service beyond its agent card.
 */

type Json = Record<string, unknown>;

/** The delegating agent: one skill, "ask a person to check something", over JSON-RPC at its root. */
async function startDelegatingAgent(humanAgent: () => Promise<Awaited<ReturnType<typeof a2aClient>>>): Promise<{ url: string; server: Server }> {
  const executor: AgentExecutor = {
    async execute(request, bus) {
      const asked = Message.toJSON(request.userMessage) as { parts: { text?: string }[] };
      const human = await humanAgent();
      // Blocking (no returnImmediately): held by the service until the person is done.
      const outcome = await human.sendMessage(
        SendMessageRequest.fromJSON({
          message: { messageId: `delegated-${request.taskId}`, role: 'ROLE_USER', parts: [{ text: asked.parts.map((p) => p.text ?? '').join('\n') }] },
        }),
      );
      const task = Task.toJSON(outcome as Parameters<typeof Task.toJSON>[0]) as { status: { state: string }; artifacts?: { parts: { text?: string }[] }[] };
      const answer =
        task.status.state === 'TASK_STATE_COMPLETED' ? `A person checked: ${task.artifacts?.[0]?.parts[0]?.text ?? ''}` : `No answer (${task.status.state}).`;
      bus.publish(
        AgentEvent.message(
          Message.fromJSON({ messageId: `answer-${request.taskId}`, contextId: request.contextId, role: 'ROLE_AGENT', parts: [{ text: answer }] }),
        ),
      );
      bus.finished();
    },
    async cancelTask() {},
  };
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const card = AgentCard.fromJSON({
    name: 'Errand planner',
    description: 'Plans errands; asks a person when something must be checked on the spot.',
    version: '1.0.0',
    supportedInterfaces: [{ url, protocolBinding: 'JSONRPC', protocolVersion: '1.0' }],
    capabilities: { streaming: false, pushNotifications: false },
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [{ id: 'check', name: 'Check on the spot', description: 'A person checks something.', tags: ['human'] }],
  });
  const transport = new JsonRpcTransportHandler(new DefaultRequestHandler(card, new InMemoryTaskStore(), executor));
  server.on('request', (req, res) => {
    if (req.method === 'GET' && req.url === '/.well-known/agent-card.json') {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify(AgentCard.toJSON(card)));
      return;
    }
    let body = '';
    req.on('data', (chunk: Buffer) => {
      body += chunk.toString('utf8');
    });
    req.on('end', async () => {
      const version = req.headers['a2a-version'];
      const context = new ServerCallContext({ requestedVersion: typeof version === 'string' ? version : '1.0' });
      const answer = await transport.handle(body, context);
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify(answer));
    });
  });
  return { url, server };
}

describe.each(STORES)('an A2A agent that delegates to the human on %s', (store) => {
  const t = useTestApp({ store });
  let agent: { url: string; server: Server };
  beforeAll(async () => {
    agent = await startDelegatingAgent(() => a2aClient(t, 'JSONRPC'));
  });
  afterAll(async () => {
    await new Promise((resolve) => agent.server.close(resolve));
  });

  it('asks the service, waits for the person, and answers its own caller with what the person delivered', async () => {
    const caller = await new ClientFactory({ transports: [new JsonRpcTransportFactory()], preferredTransports: ['JSONRPC'] }).createFromUrl(agent.url);
    const description = uniqueDescription();
    const asking = caller.sendMessage(
      SendMessageRequest.fromJSON({ message: { messageId: `user-${Math.random()}`, role: 'ROLE_USER', parts: [{ text: description }] } }),
    );
    // The operator finds the delegated task in the console's queue and does it.
    const admin = { authorization: `Bearer ${TEST_ADMIN_KEY}` };
    let taskId: string | undefined;
    for (let i = 0; i < 200 && taskId === undefined; i++) {
      const page = (await (await fetch(`${t.url}/api/v1/admin/tasks?status=open&limit=20`, { headers: admin })).json()) as {
        tasks: { task_id: string; description: string; source: string }[];
      };
      taskId = page.tasks.find((task) => task.description === description)?.task_id;
      if (taskId === undefined) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(taskId).toBeDefined();
    await operator.patch(t, taskId as string, { status: 'accepted' });
    await operator.patch(t, taskId as string, { status: 'delivered', operator_notes: 'Open on Sundays from 8 to 12.' });

    const answer = Message.toJSON((await asking) as Parameters<typeof Message.toJSON>[0]) as Json;
    expect(answer).toMatchObject({ role: 'ROLE_AGENT', parts: [{ text: 'A person checked: Open on Sundays from 8 to 12.' }] });
    // The same task as over REST: delivered, with a receipt.
    const published = (await (await fetch(`${t.url}/api/v1/tasks/${taskId}`)).json()) as Json;
    expect(published).toMatchObject({ status: 'delivered', operator_notes: 'Open on Sundays from 8 to 12.' });
    expect(published.receipt).toEqual(expect.any(String));
  });
});
