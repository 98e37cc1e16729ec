import { postJson, TEST_ADMIN_KEY, type TestApp, validTask } from './support/app.js';

/** Helpers shared by the operator, receipts and console suites. */

export type Json = Record<string, unknown>;

export const ADMIN = { authorization: `Bearer ${TEST_ADMIN_KEY}` };

export async function submit(t: TestApp, overrides: Record<string, unknown> = {}): Promise<string> {
  const res = await postJson(`${t.url}/api/v1/tasks`, validTask(overrides));
  if (res.status !== 202) throw new Error(`submission failed: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { task_id: string }).task_id;
}

export async function adminGet(t: TestApp, path: string, headers: Record<string, string> = ADMIN): Promise<Response> {
  return fetch(`${t.url}${path}`, { headers });
}

export async function patch(
  t: TestApp,
  taskId: string,
  body: unknown,
  options: { path?: 'public' | 'admin'; headers?: Record<string, string> } = {},
): Promise<Response> {
  const url = options.path === 'admin' ? `${t.url}/api/v1/admin/tasks/${taskId}` : `${t.url}/api/v1/tasks/${taskId}`;
  return fetch(url, {
    method: 'PATCH',
    headers: { 'content-type': 'application/json', ...(options.headers ?? ADMIN) },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

/** PATCH that must succeed; returns the updated task. */
export async function patchOk(t: TestApp, taskId: string, body: unknown): Promise<Json> {
  const res = await patch(t, taskId, body);
  if (res.status !== 200) throw new Error(`PATCH ${JSON.stringify(body)} failed: ${res.status} ${await res.text()}`);
  return (await res.json()) as Json;
}

/** A task taken through the API to `status` (submitted, accepted, delivered or rejected). */
export async function taskIn(t: TestApp, status: string, overrides: Record<string, unknown> = {}): Promise<string> {
  const id = await submit(t, overrides);
  if (status === 'submitted') return id;
  if (status === 'rejected') {
    await patchOk(t, id, { status: 'rejected', operator_notes: 'Out of scope.' });
    return id;
  }
  await patchOk(t, id, { status: 'accepted' });
  if (status === 'delivered') await patchOk(t, id, { status: 'delivered', operator_notes: 'The bakery is open 8:00–12:00 on Sundays.' });
  return id;
}
