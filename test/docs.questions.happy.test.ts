import { describe, expect, it } from 'vitest';
import { useTestApp } from './support/app.js';

/** Every document tells an agent to look for awaiting_answer and how to answer (issue 25). */

describe('documents: questions from the operator', () => {
  const t = useTestApp();
  const text = async (path: string) => (await fetch(`${t.url}${path}`)).text();

  it('llms.txt, api.md, /agent.json and the MCP card say it', async () => {
    for (const path of ['/llms.txt', '/api.md', '/.well-known/agent.json', '/.well-known/mcp']) {
      const body = await text(path);
      expect(body, path).toContain('awaiting_answer');
      expect(body, path).toContain('answer_operator_question');
      expect(body, path).toMatch(/questions\/\{question_id\}\/answer/);
    }
    expect(await text('/api.md')).toContain('thread_token');
  });

  it('the OpenAPI document describes the new endpoints, fields and callbacks', async () => {
    const doc = (await (await fetch(`${t.url}/openapi.json`)).json()) as {
      paths: Record<string, Record<string, unknown>>;
      components: { schemas: Record<string, { properties?: Record<string, unknown> }> };
    };
    expect(doc.paths['/api/v1/tasks/{task_id}/questions/{question_id}/answer']?.post).toBeDefined();
    expect(doc.paths['/api/v1/admin/tasks/{task_id}/questions']?.post).toBeDefined();
    expect(doc.paths['/api/v1/messages/{message_id}']?.get).toBeDefined();
    expect(Object.keys(doc.components.schemas.Task?.properties ?? {})).toEqual(expect.arrayContaining(['questions', 'awaiting_answer']));
    expect(Object.keys(doc.components.schemas.MessageResponse?.properties ?? {})).toContain('thread_token');
    expect(JSON.stringify(doc.components.schemas.WebhookEvent)).toContain('task.deadline_passed');
    expect(JSON.stringify(doc.paths['/api/v1/tasks']?.post)).toContain('task.question');
  });
});
