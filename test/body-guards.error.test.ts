import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rpc } from './mcp.support.js';
import { postJson, STORES, startTestApp, TEST_ADMIN_KEY, type TestApp, validTask } from './support/app.js';

/**
 * Agent input that used to produce a 500 (issue 15, defects 5 and 9): numbers JSON cannot hold,
 * unpaired surrogates and deep nesting are refused with the contract's errors, naming the field,
 * at every door (REST, MCP, admin), before the Idempotency-Key hash ever sees them.
 */

/** A task body as raw JSON text with `fragment` spliced in as extra members. */
function rawTask(fragment: string, overrides: Record<string, unknown> = {}): string {
  return JSON.stringify(validTask(overrides)).replace(/}$/, `,${fragment}}`);
}

interface ErrorBody {
  error: string;
  details?: string[];
}

describe.each(STORES)('body guards on %s', (store) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ store });
  });
  afterAll(async () => {
    await t.close();
  });

  it.each([
    ['budget_usd', '"budget_usd":1e400'],
    ['an unknown field', '"priority":-1e999'],
    ['a nested unknown field', '"extra":{"deep":[1,2,1e999]}'],
  ])('refuses a number JSON cannot hold in %s with 422 naming the field, with or without Idempotency-Key', async (_label, fragment) => {
    for (const headers of [{}, { 'idempotency-key': `odd-number-${Math.random()}` }] as Record<string, string>[]) {
      const res = await postJson(`${t.url}/api/v1/tasks`, rawTask(fragment), headers);
      expect(res.status).toBe(422);
      const body = (await res.json()) as ErrorBody;
      expect(body.error).toBe('validation_failed');
      const field = /"(\w+)":/.exec(fragment)?.[1] ?? '';
      expect(body.details?.some((d) => d.startsWith(field) && d.includes('number JSON can hold'))).toBe(true);
    }
  });

  it('refuses an odd number in a message', async () => {
    const res = await postJson(`${t.url}/api/v1/messages`, '{"message":"Hello there operator","reply_to":"agent@mail.example-agent.dev","n":1e400}');
    expect(res.status).toBe(422);
    expect(((await res.json()) as ErrorBody).details).toEqual(['n must be a number JSON can hold (this one is out of range)']);
  });

  it('refuses an odd number in an admin PATCH', async () => {
    const created = (await (await postJson(`${t.url}/api/v1/tasks`, validTask())).json()) as { task_id: string };
    const res = await fetch(`${t.url}/api/v1/admin/tasks/${created.task_id}`, {
      method: 'PATCH',
      headers: { authorization: `Bearer ${TEST_ADMIN_KEY}`, 'content-type': 'application/json' },
      body: '{"status":"accepted","eta":1e400}',
    });
    expect(res.status).toBe(422);
  });

  it('refuses unpaired surrogates with 422 naming the field, instead of replacing them silently', async () => {
    const text = JSON.stringify(validTask()).replace(/"description":"/, '"description":"\\ud800 broken ');
    const res = await postJson(`${t.url}/api/v1/tasks`, text);
    expect(res.status).toBe(422);
    expect(((await res.json()) as ErrorBody).details).toEqual(['description must not contain unpaired surrogates (invalid Unicode)']);
    // A proper pair (an emoji) is fine.
    const emoji = JSON.stringify(validTask()).replace(/"description":"/, '"description":"\\ud83d\\ude00 fine ');
    expect((await postJson(`${t.url}/api/v1/tasks`, emoji)).status).toBe(202);
  });

  // On /mcp the refusal is JSON-RPC's parse error, carrying the contract's code and details (docs/mcp.md).
  it('refuses an odd number in MCP tool arguments with a JSON-RPC parse error naming the field', async () => {
    const args = JSON.stringify({ ...validTask(), delivery: 'email' }).replace(/}$/, ',"budget_usd":1e400}');
    const res = await rpc(t, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"submit_human_task","arguments":${args}}}`);
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: { code: number; data: ErrorBody } };
    expect(body.error.code).toBe(-32700);
    expect(body.error.data.error).toBe('validation_failed');
    expect(body.error.data.details?.[0]).toMatch(/^params\.arguments\.budget_usd must be a number JSON can hold/);
  });

  it('refuses MCP arguments nested 3,000 deep with a JSON-RPC parse error, not internal_error', async () => {
    const deep = `${'{"a":'.repeat(3000)}1${'}'.repeat(3000)}`;
    const res = await rpc(t, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"submit_human_task","arguments":${deep}}}`);
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: { code: number; data: ErrorBody } };
    expect(body.error.code).toBe(-32700);
    expect(body.error.data.error).toBe('malformed_request');
    expect(JSON.stringify(body)).not.toContain('internal_error');
  });
});

describe('warnings', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  it('lists at most 20 unknown fields and says how many more were ignored', async () => {
    const extra = Object.fromEntries(Array.from({ length: 500 }, (_, i) => [`extra_${i}`, i]));
    const res = await postJson(`${t.url}/api/v1/tasks`, validTask(extra));
    expect(res.status).toBe(202);
    const { warnings } = (await res.json()) as { warnings: string[] };
    expect(warnings).toHaveLength(21);
    expect(warnings[0]).toBe('unknown field "extra_0" was ignored');
    expect(warnings[20]).toBe('480 more unknown fields were ignored');
  });
});
