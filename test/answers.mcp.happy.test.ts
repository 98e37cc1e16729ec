import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { EXAMPLE_RESPONSE_SCHEMA, EXAMPLE_RESULT } from '../src/domain/answers/answer-example.js';
import { call, type Json, useMcpClient } from './mcp.support.js';
import { patchOk } from './operator.support.js';
import { STORES, TestClock, useTestApp, validTask } from './support/app.js';

describe.each(STORES)('structured answers over MCP on %s', (store) => {
  const clock = new TestClock('2030-03-10T10:00:00.000Z');
  const t = useTestApp({ store, clock, env: { MCP_TASK_HOLD_SECONDS: '0' } });
  const client = useMcpClient(t);

  it('describes response_schema in the input schema of submit_human_task, and result in the task it returns', async () => {
    const { tools } = await client.listTools();
    const submit = tools.find((tool) => tool.name === 'submit_human_task');
    const properties = submit?.inputSchema.properties as Record<string, Json>;
    expect(properties.response_schema?.type).toBe('object');
    expect(String(properties.response_schema?.description)).toContain('$ref to "#/$defs/..." only');
    const check = tools.find((tool) => tool.name === 'check_task_status');
    const task = (check?.outputSchema?.anyOf as Json[] | undefined)?.[0]?.properties as Json;
    expect(Object.keys(task)).toEqual(expect.arrayContaining(['result', 'response_schema']));
    expect(check?.description).toContain('carries result');
  });

  it('submits with a schema and reads the delivered result from check_task_status and tasks/result', async () => {
    const submitted = await call(client, 'submit_human_task', validTask({ response_schema: EXAMPLE_RESPONSE_SCHEMA }));
    expect(submitted.isError).toBeFalsy();
    const id = String(submitted.structuredContent.task_id);
    const before = await call(client, 'check_task_status', { task_id: id });
    expect(before.structuredContent).toMatchObject({ response_schema: EXAMPLE_RESPONSE_SCHEMA, result: null, output_format: 'structured_json' });

    await patchOk(t, id, { status: 'accepted' });
    await patchOk(t, id, { status: 'delivered', result: EXAMPLE_RESULT });
    const after = await call(client, 'check_task_status', { task_id: id });
    expect(after.structuredContent.result).toEqual(EXAMPLE_RESULT);
  });

  it('refuses a bad schema as a tool error naming response_schema and the keyword', async () => {
    const refused = await call(
      client,
      'submit_human_task',
      validTask({ response_schema: { type: 'object', properties: { a: { type: 'string', pattern: '.' } } } }),
    );
    expect(refused.isError).toBe(true);
    expect(refused.structuredContent.details).toEqual([expect.stringContaining('response_schema/properties/a/pattern')]);
  });

  it('carries result in the MCP Tasks result once delivered', async () => {
    const stream = client.experimental.tasks.callToolStream(
      { name: 'submit_human_task', arguments: validTask({ response_schema: EXAMPLE_RESPONSE_SCHEMA }) },
      CallToolResultSchema,
      { task: { ttl: 60_000 } },
    );
    let id = '';
    for await (const message of stream) {
      if (message.type === 'taskCreated') id = message.task.taskId;
      if (message.type === 'taskStatus' || message.type === 'error' || message.type === 'result') break;
    }
    await patchOk(t, id, { status: 'accepted' });
    await patchOk(t, id, { status: 'delivered', result: EXAMPLE_RESULT });
    const result = (await client.experimental.tasks.getTaskResult(id, CallToolResultSchema)) as { structuredContent: Json; isError?: boolean };
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent.result).toEqual(EXAMPLE_RESULT);
  });
});
