// A 2026-07-28 client that submits a human task through the tasks extension and follows it to its
// result with ext-tasks' own loop. Run: npx tsx docs/examples/mcp-tasks-2026.ts http://localhost:8080/mcp
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { createTaskSessionFromClient, type JsonRpcResponse, type RawClientDispatch, resultFromTaskOutcome } from '@modelcontextprotocol/ext-tasks/client';

const url = process.argv[2] ?? 'http://localhost:8080/mcp';
const protocolVersion = '2026-07-28';
const clientInfo = { name: 'my-agent', version: '1.0.0' };

// ext-tasks sends the extension's requests (tools/call as a task, tasks/get, tasks/update,
// tasks/cancel) through this function, with their _meta envelope already framed; 2026-07-28 also
// wants the MCP-Protocol-Version, Mcp-Method and Mcp-Name headers on each.
const rawDispatch: RawClientDispatch = async (request, options) => {
  const message = request as { method: string; params?: { taskId?: string; name?: string } };
  const name = message.params?.taskId ?? message.params?.name;
  const response = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': protocolVersion,
      'mcp-method': message.method,
      ...(name ? { 'mcp-name': name } : {}),
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: crypto.randomUUID(), ...message }),
    ...(options?.signal ? { signal: options.signal } : {}),
  });
  const body = (await response.json()) as { result?: unknown; error?: unknown };
  return (body.error ? { kind: 'error', error: body.error } : { kind: 'result', result: body.result ?? null }) as JsonRpcResponse;
};

const client = new Client(clientInfo, { versionNegotiation: { mode: 'auto' } });
await client.connect(new StreamableHTTPClientTransport(new URL(url)));
const session = createTaskSessionFromClient(client, {
  endpointId: url,
  rawDispatch,
  v2RequestFraming: { protocolVersion, clientInfo, clientCapabilities: {} },
  // The operator asked something (input_required): the answer goes back with tasks/update.
  onInputRequest: async (request) => {
    console.log(`the operator asks: ${String(request.params?.message)}`);
    return { action: 'accept', content: { answer: 'Use the side entrance.' } } as never;
  },
});
try {
  const execution = await session.callTool(
    'submit_human_task',
    {
      task_type: 'real_world_verification',
      description: 'Check whether the bakery at 12 Main Street is open on Sunday mornings.',
      delivery: 'status_poll',
    },
    { task: { preference: 'require' } },
  );
  if (execution.kind === 'task') console.log(`task ${execution.handle.taskId}`);
  // ext-tasks polls tasks/get at the server's interval (1 s, each held for a change) until the task ends.
  const { outcome } = await execution.settle({ onEvent: (event) => void (event.type === 'task' && console.log(`status ${event.task.status}`)) });
  const result = resultFromTaskOutcome(outcome) as { structuredContent?: { status?: string; operator_notes?: string } };
  console.log(`${result.structuredContent?.status}: ${result.structuredContent?.operator_notes}`);
} finally {
  await session.close();
  await client.close();
}
