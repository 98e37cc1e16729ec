import { ADMIN, type Json } from './operator.support.js';
import type { TestApp } from './support/app.js';

/** Helpers of the team suites: operators made through the API, with a personal key each. */

export interface TestOperator {
  operator_id: string;
  key: string;
  key_id: string;
  invite_url: string;
  /** Authorization header of the operator's personal key. */
  auth: Record<string, string>;
}

export async function api(t: TestApp, method: string, path: string, body?: unknown, headers: Record<string, string> = ADMIN): Promise<Response> {
  return fetch(`${t.url}${path}`, {
    method,
    headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
  });
}

export async function json(res: Response, status: number): Promise<Json> {
  const text = await res.text();
  if (res.status !== status) throw new Error(`expected ${status}, got ${res.status}: ${text}`);
  return text ? (JSON.parse(text) as Json) : {};
}

let counter = 0;

/** An operator created by the owner, with one personal key. */
export async function newOperator(t: TestApp, role: 'operator' | 'admin' = 'operator', name = 'Ada'): Promise<TestOperator> {
  counter += 1;
  const created = await json(await api(t, 'POST', '/api/v1/admin/operators', { name, email: `op${counter}-${Date.now()}@team.example.org`, role }), 201);
  const operatorId = created.operator_id as string;
  const key = await json(await api(t, 'POST', `/api/v1/admin/operators/${operatorId}/keys`), 201);
  return {
    operator_id: operatorId,
    key: key.key as string,
    key_id: key.key_id as string,
    invite_url: created.invite_url as string,
    auth: { authorization: `Bearer ${key.key as string}` },
  };
}
