import { randomBytes } from 'node:crypto';
import { ADMIN } from './operator.support.js';
import type { TestApp } from './support/app.js';

/** Task records as an export of another deployment gives them (issue 19 import). */

export type Json = Record<string, unknown>;

export const FOREIGN_ISS = 'https://hosted.example-old-deployment.dev';

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

export function foreignReceipt(taskId: string): string {
  return `${b64({ alg: 'EdDSA', kid: 'old-key-1', typ: 'JWT' })}.${b64({ iss: FOREIGN_ISS, sub: taskId, task_id: taskId, receipt_version: 1 })}.${randomBytes(64).toString('base64url')}`;
}

export function importedId(year = 2025): string {
  return `task-${year}-${randomBytes(16).toString('hex')}`;
}

/** A delivered task whose history went through both retired statuses, with its foreign receipt. */
export function deliveredRecord(overrides: Json = {}): Json {
  const task_id = importedId();
  return {
    task_id,
    status: 'delivered',
    task_type: 'real_world_verification',
    description: 'Check whether the pharmacy on Elm Street opens at 7 on weekdays.',
    location_required: true,
    location_detail: 'Springfield',
    deadline: '2025-03-01T12:00:00Z',
    output_format: 'text_report',
    requester: 'agent-42',
    source: 'api',
    contact_email: 'owner@mail.example-agent.dev',
    delivery: 'email',
    created_at: '2025-02-01T09:00:00.000Z',
    updated_at: '2025-02-03T16:30:00.000Z',
    status_history: [
      { status: 'submitted', at: '2025-02-01T09:00:00.000Z' },
      { status: 'under_review', at: '2025-02-01T10:00:00.000Z' },
      { status: 'in_progress', at: '2025-02-02T08:00:00.000Z' },
      { status: 'delivered', at: '2025-02-03T16:30:00.000Z' },
    ],
    operator_notes: 'It opens at 7:00 on weekdays (checked on site, Feb 3).',
    seen_by_operator_at: '2025-02-01T09:45:00.000Z',
    eta: null,
    receipt: foreignReceipt(task_id),
    deliverable_sha256: 'a'.repeat(64),
    receipt_issued_at: '2025-02-03T16:30:00.000Z',
    ...overrides,
  };
}

export function rejectedRecord(overrides: Json = {}): Json {
  return {
    task_id: importedId(2024),
    status: 'rejected',
    task_type: 'data_collection',
    description: 'Collect the opening hours of every shop in town.',
    created_at: '2024-11-05T08:00:00.000Z',
    status_history: [
      { status: 'submitted', at: '2024-11-05T08:00:00.000Z' },
      { status: 'under_review', at: '2024-11-05T09:00:00.000Z' },
      { status: 'rejected', at: '2024-11-05T09:30:00.000Z' },
    ],
    operator_notes: 'Out of scope.',
    ...overrides,
  };
}

/** An open task left in a retired status (no contact e-mail: status_poll). */
export function openRecord(status: 'under_review' | 'in_progress' | 'submitted' | 'accepted' = 'in_progress', overrides: Json = {}): Json {
  const history = [{ status: 'submitted', at: '2025-05-01T08:00:00.000Z' }];
  if (status !== 'submitted') history.push({ status, at: '2025-05-01T09:00:00.000Z' });
  return {
    task_id: importedId(),
    status,
    task_type: 'ai_output_review',
    description: 'Review these three summaries for factual errors.',
    created_at: '2025-05-01T08:00:00.000Z',
    status_history: history,
    ...overrides,
  };
}

export async function importTasks(t: TestApp, body: unknown, headers: Record<string, string> = ADMIN): Promise<Response> {
  return fetch(`${t.url}/api/v1/admin/tasks/import`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

export async function importOk(t: TestApp, tasks: unknown[]): Promise<{ imported: number; skipped: number; errors: { index: number; details: string[] }[] }> {
  const res = await importTasks(t, { tasks });
  if (res.status !== 200) throw new Error(`import failed: ${res.status} ${await res.text()}`);
  return (await res.json()) as { imported: number; skipped: number; errors: { index: number; details: string[] }[] };
}
