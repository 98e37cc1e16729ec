import { describe, expect, it } from 'vitest';
import { exampleStructuredRequest } from '../src/docs/answers.js';
import { EXAMPLE_RESPONSE_SCHEMA, EXAMPLE_RESULT } from '../src/domain/answers/answer-example.js';
import { call, type Json, useMcpClient } from './mcp.support.js';
import { patchOk } from './operator.support.js';
import { postJson, useTestApp } from './support/app.js';

/** The worked example (is the shop open, and what are the hours?) in every document, and it works. */
describe('structured answers in the documents', () => {
  const t = useTestApp({ store: 'sqlite' });
  const client = useMcpClient(t);

  const get = async (path: string) => {
    const res = await fetch(`${t.url}${path}`);
    expect(res.status, path).toBe(200);
    return res;
  };

  it('shows the same example in OpenAPI, llms.txt, api.md and /agent.json', async () => {
    const openapi = (await (await get('/openapi.json')).json()) as Json;
    const media = ((((openapi.paths as Json)['/api/v1/tasks'] as Json).post as Json).requestBody as Json).content as Record<string, Json>;
    expect((media['application/json']?.examples as Record<string, Json>).structured_answer?.value).toEqual(exampleStructuredRequest());
    const taskSchema = ((openapi.components as Json).schemas as Record<string, Json>).Task?.properties as Json;
    expect(Object.keys(taskSchema)).toEqual(expect.arrayContaining(['response_schema', 'result']));

    const llms = await (await get('/llms.txt')).text();
    expect(llms).toContain('## Structured answers');
    expect(llms).toContain(JSON.stringify(EXAMPLE_RESULT));
    const api = await (await get('/api.md')).text();
    expect(api).toContain('## Structured answers');
    expect(api).toContain('"open_on_sundays": true');
    const agent = (await (await get('/agent.json')).json()) as Json;
    expect((agent.structured_answers as Json).example).toEqual({ request: exampleStructuredRequest(), result: EXAMPLE_RESULT });
  });

  it('carries example_response_schema in the catalog and in get_human_services', async () => {
    const services = (await (await get('/api/v1/services')).json()) as { services: Json[] };
    expect(services.services[0]?.example_response_schema).toEqual(EXAMPLE_RESPONSE_SCHEMA);
    const info = await call(client, 'get_human_services');
    expect((info.structuredContent.services as Json[])[0]?.example_response_schema).toEqual(EXAMPLE_RESPONSE_SCHEMA);
  });

  it('the example request is accepted as written, and its result delivers', async () => {
    const res = await postJson(`${t.url}/api/v1/tasks`, exampleStructuredRequest());
    expect(res.status).toBe(202);
    const { task_id } = (await res.json()) as { task_id: string };
    await patchOk(t, task_id, { status: 'accepted' });
    const done = await patchOk(t, task_id, { status: 'delivered', result: EXAMPLE_RESULT });
    expect(done.result).toEqual(EXAMPLE_RESULT);
  });
});
