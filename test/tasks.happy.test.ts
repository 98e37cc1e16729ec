import { describe, expect, it } from 'vitest';
import { postJson, STORES, useTestApp, validTask } from './support/app.js';

type Json = Record<string, unknown>;

describe.each(STORES)('task submission and status on %s', (store) => {
  const t = useTestApp({ store });

  it('accepts a task with 202, Location and the submission response', async () => {
    const res = await postJson(`${t.url}/api/v1/tasks`, validTask());
    expect(res.status).toBe(202);
    const body = (await res.json()) as Json;
    expect(body.task_id).toMatch(/^task-2030-[0-9a-f]{32}$/);
    expect(body.status).toBe('submitted');
    expect(body.created_at).toBe('2030-03-10T10:00:00.000Z');
    expect(res.headers.get('location')).toBe(`${t.config.baseUrl}/api/v1/tasks/${String(body.task_id)}`);
    expect(body.status_url).toBe(`${t.config.baseUrl}/api/v1/tasks/${String(body.task_id)}`);
    expect(body.status_page).toBe(`${t.config.baseUrl}/tasks?id=${String(body.task_id)}`);
    expect(typeof body.message).toBe('string');
    expect(body).not.toHaveProperty('warnings');
    expect(JSON.stringify(body)).not.toContain('agent@');
  });

  it('returns the stored task exactly as the specification lists it, without the contact e-mail', async () => {
    const submitted = validTask({ deadline: '2030-04-01T12:00:00+02:00', output_format: 'structured_json', budget_usd: 25, requester: 'agent-7' });
    const res = await postJson(`${t.url}/api/v1/tasks`, submitted);
    const { task_id } = (await res.json()) as { task_id: string };

    const read = await fetch(`${t.url}/api/v1/tasks/${task_id}`);
    expect(read.status).toBe(200);
    const task = (await read.json()) as Json;
    expect(Object.keys(task).sort()).toEqual(
      [
        'task_id',
        'status',
        'task_type',
        'description',
        'location_required',
        'location_detail',
        'deadline',
        'output_format',
        'budget_usd',
        'requester',
        'source',
        'created_at',
        'updated_at',
        'status_history',
        'operator_notes',
        'seen_by_operator_at',
        'eta',
        'response_schema',
        'result',
        // Issue 25: the operator's questions, [] and false until one is asked.
        'questions',
        'awaiting_answer',
      ].sort(),
    );
    expect(task).toMatchObject({
      task_id,
      status: 'submitted',
      task_type: submitted.task_type,
      description: submitted.description,
      location_required: true,
      location_detail: 'Springfield',
      deadline: '2030-04-01T12:00:00+02:00',
      output_format: 'structured_json',
      budget_usd: 25,
      requester: 'agent-7',
      source: 'api',
      created_at: '2030-03-10T10:00:00.000Z',
      updated_at: '2030-03-10T10:00:00.000Z',
      status_history: [{ status: 'submitted', at: '2030-03-10T10:00:00.000Z' }],
      operator_notes: null,
      seen_by_operator_at: null,
      eta: null,
    });
    expect(JSON.stringify(task)).not.toContain('agent@mail.example-agent.dev');
  });

  it('fills defaults for optional fields', async () => {
    const res = await postJson(`${t.url}/api/v1/tasks`, {
      task_type: 'ai_output_review',
      description: 'Read this paragraph and tell me whether it sounds natural.',
      contact_email: 'agent@mail.example-agent.dev',
    });
    const { task_id } = (await res.json()) as { task_id: string };
    const task = (await (await fetch(`${t.url}/api/v1/tasks/${task_id}`)).json()) as Json;
    expect(task).toMatchObject({
      location_required: false,
      location_detail: null,
      deadline: null,
      output_format: 'text_report',
      budget_usd: null,
      requester: '',
    });
  });

  it('accepts status_poll delivery without a contact e-mail', async () => {
    const res = await postJson(`${t.url}/api/v1/tasks`, {
      task_type: 'data_collection',
      description: 'Count the benches in the central park.',
      delivery: 'status_poll',
    });
    expect(res.status).toBe(202);
    expect(((await res.json()) as Json).message).toMatch(/operator_notes/);
  });

  it('stores a deadline without an offset as given', async () => {
    const res = await postJson(`${t.url}/api/v1/tasks`, validTask({ deadline: '2030-05-01T09:30:00' }));
    expect(res.status).toBe(202);
    const { task_id } = (await res.json()) as { task_id: string };
    const task = (await (await fetch(`${t.url}/api/v1/tasks/${task_id}`)).json()) as Json;
    expect(task.deadline).toBe('2030-05-01T09:30:00');
  });

  it('ignores unknown fields and lists them in warnings', async () => {
    const res = await postJson(`${t.url}/api/v1/tasks`, validTask({ priority: 'high', notify_url: 'https://x.dev/' }));
    expect(res.status).toBe(202);
    const body = (await res.json()) as { warnings: string[] };
    expect(body.warnings).toEqual(['unknown field "priority" was ignored', 'unknown field "notify_url" was ignored']);
  });

  it('treats optional fields sent as null as absent', async () => {
    const res = await postJson(`${t.url}/api/v1/tasks`, validTask({ deadline: null, location_detail: null, requester: null }));
    expect(res.status).toBe(202);
  });

  it('ignores a stray Authorization header on public endpoints', async () => {
    const res = await postJson(`${t.url}/api/v1/tasks`, validTask(), { authorization: 'Bearer whatever' });
    expect(res.status).toBe(202);
    const { task_id } = (await res.json()) as { task_id: string };
    const read = await fetch(`${t.url}/api/v1/tasks/${task_id}`, { headers: { authorization: 'Basic Zm9vOmJhcg==' } });
    expect(read.status).toBe(200);
    expect(read.headers.get('www-authenticate')).toBeNull();
  });

  it('sends a message and answers 201 with the message response', async () => {
    const res = await postJson(`${t.url}/api/v1/messages`, {
      message: 'Can you do tasks in Lyon next week?',
      reply_to: 'agent@mail.example-agent.dev',
      from: 'planner-bot',
      subject: 'Coverage',
      mood: 'curious',
    });
    expect(res.status).toBe(201);
    const body = (await res.json()) as Json;
    expect(body.message_id).toMatch(/^msg-2030-[0-9a-f]{32}$/);
    expect(body.created_at).toBe('2030-03-10T10:00:00.000Z');
    expect(typeof body.message).toBe('string');
    expect(body.warnings).toEqual(['unknown field "mood" was ignored']);
    expect(JSON.stringify(body)).not.toContain('agent@');
  });

  it('reports health with the store up', async () => {
    const res = await fetch(`${t.url}/api/v1/health`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'ok', service: 'human-task-service', api_version: 'v1', time: '2030-03-10T10:00:00.000Z' });
  });

  it('answers CORS preflights, allowing Idempotency-Key and exposing Location and the RateLimit headers', async () => {
    const res = await fetch(`${t.url}/api/v1/tasks`, {
      method: 'OPTIONS',
      headers: {
        origin: 'https://agent.example-app.dev',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type, idempotency-key',
      },
    });
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(res.headers.get('access-control-allow-headers')?.toLowerCase()).toContain('idempotency-key');
    expect(res.headers.get('access-control-allow-methods')).toContain('POST');

    const post = await postJson(`${t.url}/api/v1/tasks`, validTask(), { origin: 'https://agent.example-app.dev' });
    const exposed = post.headers.get('access-control-expose-headers') ?? '';
    for (const name of ['Location', 'RateLimit-Policy', 'RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset', 'Retry-After']) {
      expect(exposed).toContain(name);
    }
  });

  it('echoes a request id on every response', async () => {
    const res = await fetch(`${t.url}/api/v1/health`, { headers: { 'x-request-id': 'trace-123' } });
    expect(res.headers.get('x-request-id')).toBe('trace-123');
    const other = await fetch(`${t.url}/api/v1/health`);
    expect(other.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    for (const unfit of ['x'.repeat(200), 'has spaces in it', '<script>']) {
      const res = await fetch(`${t.url}/api/v1/health`, { headers: { 'x-request-id': unfit } });
      expect(res.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    }
  });
});
