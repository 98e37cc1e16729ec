import { describe, expect, it } from 'vitest';
import { postJson, STORES, TEST_ADMIN_KEY, useTestApp } from './support/app.js';

/** Admin blocklist endpoints refusing: bad entries (422 with details), unknown ids, no key (401). */

type Json = Record<string, unknown>;
const admin = { authorization: `Bearer ${TEST_ADMIN_KEY}` };

describe.each(STORES)('blocklist endpoint errors on %s', (store) => {
  const t = useTestApp({ store });

  const add = async (body: unknown) => {
    const res = await postJson(`${t.url}/api/v1/admin/blocklist`, body, admin);
    return { status: res.status, body: (await res.json()) as Json };
  };

  it.each([
    [{ kind: 'person', value: 'x' }, /^kind must be one of: ip, email, domain, requester, agent_key, agent_directory$/],
    [{ kind: 'ip' }, /^value is required/],
    [{ kind: 'ip', value: '   ' }, /^value is required/],
    [{ kind: 'ip', value: 42 }, /^value is required/],
    [{ kind: 'ip', value: '300.1.2.3' }, /^value must be an IPv4 address/],
    [{ kind: 'ip', value: '2001:db8::/8' }, /^value must be an IPv4 address or network \(\/8 to \/32\) or an IPv6 address or network \(\/16 to \/128\)/],
    [{ kind: 'ip', value: '192.0.2.1/4' }, /^value must be an IPv4 address/],
    [{ kind: 'ip', value: '192.0.2.1/33' }, /^value must be an IPv4 address/],
    [{ kind: 'email', value: 'not-an-address' }, /^value must be a valid e-mail address/],
    [{ kind: 'domain', value: 'no_underscores.dev' }, /^value must be a domain name/],
    [{ kind: 'domain', value: 'localhost' }, /^value must be a domain name/],
    [{ kind: 'requester', value: 'r'.repeat(201) }, /^value must be at most 200 characters/],
    [{ kind: 'ip', value: '192.0.2.1', reason: 7 }, /^reason must be a string$/],
    [{ kind: 'ip', value: '192.0.2.1', reason: 'r'.repeat(501) }, /^reason must be at most 500 characters$/],
    [{ kind: 'ip', value: '192.0.2.1', expires_at: 'tomorrow' }, /^expires_at must be an ISO 8601 date-time/],
    [{ kind: 'ip', value: '192.0.2.1', expires_at: '2030-03-10T09:59:59Z' }, /^expires_at must be in the future$/],
  ])('refuses %j: 422 validation_failed naming the field', async (body, detail) => {
    const res = await add(body);
    expect(res.status).toBe(422);
    expect(res.body.error).toBe('validation_failed');
    expect(res.body.details).toEqual([expect.stringMatching(detail)]);
  });

  it('reports every problem at once', async () => {
    const res = await add({ kind: 'nope', expires_at: 'never' });
    expect(res.status).toBe(422);
    expect(res.body.details).toHaveLength(3);
  });

  it('refuses a body that is not an object: 400 malformed_request', async () => {
    expect((await add([1, 2])).status).toBe(400);
    expect((await add('"ip"')).body.error).toBe('malformed_request');
  });

  it('refuses a body that is not JSON: 400 invalid_json', async () => {
    const res = await postJson(`${t.url}/api/v1/admin/blocklist`, '{kind:', admin);
    expect(res.status).toBe(400);
    expect(((await res.json()) as Json).error).toBe('invalid_json');
  });

  it('answers 404 not_found for removing an unknown entry', async () => {
    const res = await fetch(`${t.url}/api/v1/admin/blocklist/blk-000000000000000000000000`, { method: 'DELETE', headers: admin });
    expect(res.status).toBe(404);
    expect(((await res.json()) as Json).error).toBe('not_found');
  });

  it('stores nothing for a refused entry', async () => {
    await add({ kind: 'ip', value: 'nope' });
    const list = (await (await fetch(`${t.url}/api/v1/admin/blocklist`, { headers: admin })).json()) as { blocklist: unknown[] };
    expect(list.blocklist).toEqual([]);
  });
});
