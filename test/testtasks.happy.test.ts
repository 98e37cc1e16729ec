import { describe, expect, it } from 'vitest';
import { isTestTask } from '../src/domain/tasks/test-task.js';
import { postForm, signIn } from './console.support.js';
import { importOk, openRecord } from './import.support.js';
import { call, useMcpClient } from './mcp.support.js';
import { ADMIN, adminGet, submit } from './operator.support.js';
import { postJson, STORES, TestClock, useTestApp, validTask } from './support/app.js';

type Json = Record<string, unknown>;

describe('the test-task rule', () => {
  it('is the whole word "test", any case, in description or requester', () => {
    for (const description of ['This is a test.', 'Test: check the bakery', 'TEST run', 'a (test) task', 'smoke-test of the API', 'test']) {
      expect(isTestTask({ description }), description).toBe(true);
    }
    for (const description of [
      'Judge the contest entries',
      'Attestation of a signature',
      'testing the form',
      'Run the tests',
      'test_1 harness',
      'latest news',
      'testé',
    ]) {
      expect(isTestTask({ description }), description).toBe(false);
    }
    expect(isTestTask({ description: 'Check the bakery hours.', requester: 'Acme Test Agent' })).toBe(true);
    expect(isTestTask({ description: 'Check the bakery hours.', requester: 'contest-bot' })).toBe(false);
    expect(isTestTask({ description: 'Check the bakery hours.', requester: null })).toBe(false);
  });
});

describe.each(STORES)('test tasks on %s', (store) => {
  const clock = new TestClock('2030-03-10T10:00:00.000Z');
  const t = useTestApp({ store, clock });
  const mcp = useMcpClient(t);

  const adminTask = async (id: string): Promise<Json> => (await (await adminGet(t, `/api/v1/admin/tasks/${id}`)).json()) as Json;

  it('recognizes a test task through REST, says so in the message, and not an ordinary one', async () => {
    const res = await postJson(`${t.url}/api/v1/tasks`, validTask({ description: `This is a TEST of the API (${Math.random()}).` }));
    expect(res.status).toBe(202);
    const body = (await res.json()) as Json;
    expect(body.message).toMatch(/recognized as a test task/i);
    expect(await adminTask(String(body.task_id))).toMatchObject({ is_test: true });

    const plain = await postJson(`${t.url}/api/v1/tasks`, validTask({ requester: 'contest-agent' }));
    const plainBody = (await plain.json()) as Json;
    expect(plainBody.message).not.toMatch(/test task/i);
    expect(await adminTask(String(plainBody.task_id))).toMatchObject({ is_test: false });
  });

  it('recognizes a test task through MCP (requester) and the web form', async () => {
    const result = await call(mcp, 'submit_human_task', validTask({ requester: 'Test agent' }));
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent.message).toMatch(/recognized as a test task/i);
    expect(await adminTask(String(result.structuredContent.task_id))).toMatchObject({ is_test: true });

    const form = await postForm(t, '/tasks', {
      task_type: 'real_world_verification',
      description: `Just a test, please ignore (${Math.random()}).`,
      contact_email: 'agent@mail.example-agent.dev',
      delivery: 'email',
      output_format: 'text_report',
    });
    expect(form.status).toBe(303);
    const id = new URL(String(form.headers.get('location')), t.url).searchParams.get('id');
    expect(await adminTask(String(id))).toMatchObject({ is_test: true, source: 'web_form' });
  });

  it('leaves test tasks out of the response-time figures (stats, human.json, capabilities.json) and filters them in the queue and console', async () => {
    clock.set('2030-06-01T10:00:00.000Z');
    const real = await submit(t);
    const test = await submit(t, { description: `test (${Math.random()})` });
    clock.set('2030-06-01T10:01:00.000Z');
    await adminGet(t, `/api/v1/admin/tasks/${real}`);
    clock.set('2030-06-01T12:00:00.000Z');
    await adminGet(t, `/api/v1/admin/tasks/${test}`);
    await fetch(`${t.url}/api/v1/tasks/${test}`, { method: 'PATCH', headers: { 'content-type': 'application/json', ...ADMIN }, body: '{"status":"accepted"}' });
    clock.set('2030-06-01T13:00:00.000Z');

    // Only the ordinary task counts: first view after 60 s, no acceptance (the test task's 2 h are left out).
    const stats = (await (await adminGet(t, '/api/v1/admin/stats?days=1')).json()) as Json;
    expect(stats.time_to_first_view_seconds).toEqual({ median: 60, p90: 60, samples: 1 });
    expect(stats.time_to_acceptance_seconds).toEqual({ median: null, p90: null, samples: 0 });
    for (const doc of ['/.well-known/human.json', '/.well-known/capabilities.json']) {
      const live = ((await (await fetch(`${t.url}${doc}`)).json()) as { live: Json }).live;
      expect((live.time_to_first_view_seconds as Json).samples, doc).toBe(1);
      expect(live.time_to_acceptance_seconds, doc).toMatchObject({ samples: 0 });
    }

    const only = (await (await adminGet(t, '/api/v1/admin/tasks?test=only&limit=200')).json()) as { tasks: Json[] };
    expect(only.tasks.every((task) => task.is_test === true)).toBe(true);
    expect(only.tasks.map((task) => task.task_id)).toContain(test);
    const without = (await (await adminGet(t, '/api/v1/admin/tasks?test=exclude&limit=200')).json()) as { tasks: Json[] };
    expect(without.tasks.map((task) => task.task_id)).toContain(real);
    expect(without.tasks.some((task) => task.is_test === true)).toBe(false);
    expect((await adminGet(t, '/api/v1/admin/tasks?test=maybe')).status).toBe(400);

    const { cookie } = await signIn(t);
    const page = await (await fetch(`${t.url}/operator?status=all&test=only`, { headers: { cookie } })).text();
    expect(page).toContain('Test tasks only');
    expect(page).toContain(`/operator/tasks/${test}`);
    expect(page).not.toContain(`/operator/tasks/${real}`);
    expect(page).toMatch(/class="badge test"[^>]*>Test</);
    const taskPage = await (await fetch(`${t.url}/operator/tasks/${test}`, { headers: { cookie } })).text();
    expect(taskPage).toMatch(/class="badge test"[^>]*>Test</);
    const realPage = await (await fetch(`${t.url}/operator/tasks/${real}`, { headers: { cookie } })).text();
    expect(realPage).not.toMatch(/class="badge test"/);
  });

  it('shows the retired statuses of an imported task in the console history', async () => {
    const record = openRecord('under_review');
    await importOk(t, [record]);
    const { cookie } = await signIn(t);
    const page = await (await fetch(`${t.url}/operator/tasks/${String(record.task_id)}`, { headers: { cookie } })).text();
    expect(page).toMatch(/st-under_review[^>]*>under review/);
    // A retired status offers the operator the choices of a submitted task.
    expect(page).toContain(`action="/operator/tasks/${String(record.task_id)}/accept"`);
  });
});
