import { describe, expect, it } from 'vitest';
import { STORES, type TestApp, TestClock, useTestApp } from './support/app.js';

function form(fields: Record<string, string>): URLSearchParams {
  return new URLSearchParams(fields);
}

const GOOD = {
  task_type: 'data_collection',
  description: 'List the opening hours of the five public libraries in the city centre.',
  contact_email: 'agent@mail.example-agent.dev',
  delivery: 'email',
};

async function submit(t: TestApp, fields: Record<string, string>): Promise<{ status: number; location: string | null; text: string; headers: Headers }> {
  const res = await fetch(`${t.url}/tasks`, { method: 'POST', body: form(fields), redirect: 'manual' });
  return { status: res.status, location: res.headers.get('location'), text: await res.text(), headers: res.headers };
}

describe.each(STORES)('the web form and status page refusing on %s', (store) => {
  const t = useTestApp({ store });

  it('answers 404 with a page, not a bare error, for an unknown or malformed task id', async () => {
    for (const id of [`task-2030-${'0'.repeat(32)}`, 'not-a-task-id', `task-2030-${'f'.repeat(31)}`]) {
      const res = await fetch(`${t.url}/tasks?id=${encodeURIComponent(id)}`);
      expect(res.status, id).toBe(404);
      expect(res.headers.get('content-type')).toMatch(/^text\/html/);
      expect(res.headers.get('cache-control')).toBe('no-store');
      const text = await res.text();
      expect(text).toContain('No task with that id');
      expect(text).toContain('name="id"');
      const md = await fetch(`${t.url}/tasks?id=${encodeURIComponent(id)}`, { headers: { accept: 'text/markdown' } });
      expect(md.status).toBe(404);
      expect(md.headers.get('content-type')).toMatch(/^text\/markdown/);
      expect(await md.text()).toMatch(/^# 404 task_not_found/);
    }
  });

  it('shows the lookup form at /tasks without an id', async () => {
    const res = await fetch(`${t.url}/tasks`);
    expect(res.status).toBe(200);
    expect(await res.text()).toContain('Check a task');
  });

  it('answers 422 with the form again when a field is wrong', async () => {
    const res = await submit(t, { ...GOOD, task_type: 'teleportation', deadline: '2001-01-01T00:00' });
    expect(res.status).toBe(422);
    expect(res.location).toBeNull();
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.text).toMatch(/id="e-task_type">Kind of task must be one of: real_world_verification/);
    expect(res.text).toMatch(/id="e-deadline">Deadline must be in the future/);
    expect(res.text).toContain('value="2001-01-01T00:00"');
  });

  it('says "already submitted" with a link to the existing task for a duplicate', async () => {
    const fields = { ...GOOD, description: 'Photograph the notice board at the town hall entrance today.' };
    const first = await submit(t, fields);
    expect(first.status).toBe(303);
    const existing = new URL(String(first.location), t.url).searchParams.get('id') ?? '';
    const again = await submit(t, fields);
    expect(again.status).toBe(409);
    expect(again.text).toContain('already submitted');
    expect(again.text).toContain(`href="/tasks?id=${existing}"`);
  });

  it('turns away form fields it does not show: the task stays a web_form task', async () => {
    const res = await submit(t, {
      ...GOOD,
      description: 'Check the price of oat milk at the corner shop today.',
      source: 'api',
      budget_usd: '50',
      warnings: 'x',
    });
    expect(res.status).toBe(303);
    const id = new URL(String(res.location), t.url).searchParams.get('id') ?? '';
    const task = (await (await fetch(`${t.url}/api/v1/tasks/${id}`)).json()) as { source: string; budget_usd: number | null };
    expect(task.source).toBe('web_form');
    expect(task.budget_usd).toBeNull();
  });

  it('answers 413 to a form over the body limit with a page and the form to try again', async () => {
    const res = await submit(t, { ...GOOD, description: 'x'.repeat(70_000) });
    expect(res.status).toBe(413);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    expect(res.text).toContain('64 KB');
    expect(res.text).toContain('<form');
  });

  it('answers 415 to a form in another encoding with a page', async () => {
    const res = await fetch(`${t.url}/tasks`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      body: 'task_type=data_collection',
      redirect: 'manual',
    });
    expect(res.status).toBe(415);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
  });
});

describe.each(STORES)('the web form under the real limits on %s', (store) => {
  const clock = new TestClock('2030-03-10T10:00:00.000Z');

  const t = useTestApp({ store, clock, limits: 'production' });

  it('shares the per-client limit with the API and says when to come back', async () => {
    for (let i = 0; i < t.config.limits.tasksPerHour; i++) {
      const res = await submit(t, { ...GOOD, description: `Count the bicycles parked at the station entrance, round ${i}.` });
      expect(res.status, `submission ${i}`).toBe(303);
    }
    const refused = await submit(t, { ...GOOD, description: 'Count the bicycles parked at the station entrance, one more time.' });
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(refused.text).toMatch(/Try again in about \d+ min/);
    expect(refused.text).toContain('>\nCount the bicycles parked at the station entrance, one more time.</textarea>');
    // The API sees the same client as spent.
    const api = await fetch(`${t.url}/api/v1/tasks`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ ...GOOD, description: 'Count the scooters parked at the station entrance.' }),
    });
    expect(api.status).toBe(429);
  });
});
