import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STORES, postJson, startTestApp, validTask, type TestApp } from './support/app.js';

describe.each(STORES)('task submission and status on %s', (store) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ store });
  });
  afterAll(async () => {
    await t.close();
  });

  it('accepts a task with 202, Location and the submission response', async () => {
    const res = await postJson(`${t.url}/api/v1/tasks`, validTask());
    expect(res.status).toBe(202);
    const body = (await res.json()) as Record<string, string>;
    expect(body.task_id).toMatch(/^task-\d{4}-[0-9a-f]{32}$/);
    expect(body.status).toBe('submitted');
    expect(res.headers.get('location')).toBe(`${t.config.baseUrl}/api/v1/tasks/${body.task_id}`);
    expect(body.status_url).toBe(`${t.config.baseUrl}/api/v1/tasks/${body.task_id}`);
    expect(body.status_page).toBe(`${t.config.baseUrl}/tasks?id=${body.task_id}`);
  });
});
