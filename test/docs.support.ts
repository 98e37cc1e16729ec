import { expect } from 'vitest';
import type { TestApp } from './support/app.js';

/** Reading JSON documents in tests without `any`: walk a dotted path, fail loudly when it is missing. */

export type Json = { [key: string]: unknown };

export function at(value: unknown, path: string): unknown {
  let current = value;
  for (const key of path.split('.').filter(Boolean)) {
    if (typeof current !== 'object' || current === null) throw new Error(`no "${key}" in ${path}`);
    current = (current as Json)[key];
  }
  return current;
}

export function obj(value: unknown, path = ''): Json {
  const found = at(value, path);
  if (typeof found !== 'object' || found === null || Array.isArray(found)) throw new Error(`${path || 'value'} is not an object`);
  return found as Json;
}

export function arr(value: unknown, path = ''): Json[] {
  const found = at(value, path);
  if (!Array.isArray(found)) throw new Error(`${path || 'value'} is not an array`);
  return found as Json[];
}

export async function getJson(t: TestApp, path: string, headers: Record<string, string> = {}): Promise<Json> {
  const res = await fetch(`${t.url}${path}`, { headers });
  expect(res.status, path).toBe(200);
  expect(res.headers.get('content-type'), path).toMatch(/^application\/json/);
  return (await res.json()) as Json;
}

export async function getText(
  t: TestApp,
  path: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; type: string; text: string; headers: Headers }> {
  const res = await fetch(`${t.url}${path}`, { headers });
  return { status: res.status, type: res.headers.get('content-type') ?? '', text: await res.text(), headers: res.headers };
}

/** Every page of GET /api/v1/services at one page size. */
export async function walkServices(t: TestApp, limit: number): Promise<{ ids: string[]; pages: number }> {
  const ids: string[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const query: string = `limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
    const page = await getJson(t, `/api/v1/services?${query}`);
    const services = arr(page, 'services');
    expect(services.length).toBeLessThanOrEqual(limit);
    ids.push(...services.map((s) => String(s.service_id)));
    cursor = page.next_cursor as string | null;
    pages++;
    if (pages > 100) throw new Error('pagination does not end');
  } while (cursor !== null);
  return { ids, pages };
}
