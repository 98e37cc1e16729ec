import { describe, expect, it } from 'vitest';
import { postJson, STORES, useTestApp, validTask } from './support/app.js';

/** Idempotency-Key misuse: another payload under a used key, malformed keys, other clients. */

type Json = Record<string, unknown>;
let nextIp = 1;
const newClient = () => ({ 'x-forwarded-for': `198.19.0.${nextIp++}` });

describe.each(STORES)('Idempotency-Key errors on %s', (store) => {
  const t = useTestApp({ store, limits: 'production', env: { TRUST_PROXY: '1' } });

  it('refuses the same key with another payload: 422 validation_failed naming the header', async () => {
    const client = newClient();
    const headers = { ...client, 'idempotency-key': 'same-key' };
    expect((await postJson(`${t.url}/api/v1/tasks`, validTask(), headers)).status).toBe(202);
    const res = await postJson(`${t.url}/api/v1/tasks`, validTask(), headers);
    expect(res.status).toBe(422);
    const body = (await res.json()) as Json;
    expect(body.error).toBe('validation_failed');
    expect(body.details).toEqual([expect.stringContaining('Idempotency-Key')]);
  });

  it('a refused reuse uses no quota', async () => {
    const client = newClient();
    const headers = { ...client, 'idempotency-key': 'reuse-quota' };
    await postJson(`${t.url}/api/v1/tasks`, validTask(), headers);
    for (let i = 0; i < 3; i++) expect((await postJson(`${t.url}/api/v1/tasks`, validTask(), headers)).status).toBe(422);
    const next = await postJson(`${t.url}/api/v1/tasks`, validTask(), client);
    expect(next.status).toBe(202);
    expect(next.headers.get('ratelimit-remaining')).toBe('1');
  });

  it.each([
    ['too long', 'k'.repeat(256)],
    ['with a space', 'two words'],
    ['not ASCII', 'cl\u00e9'],
  ])('refuses a malformed key (%s): 400 malformed_request', async (_label, key) => {
    const res = await postJson(`${t.url}/api/v1/tasks`, validTask(), { ...newClient(), 'idempotency-key': key });
    expect(res.status).toBe(400);
    const body = (await res.json()) as Json;
    expect(body.error).toBe('malformed_request');
    expect(JSON.stringify(body.details)).toMatch(/idempotency-key/i);
  });

  it('a refused submission does not keep the key: the retry is processed normally', async () => {
    const client = newClient();
    const headers = { ...client, 'idempotency-key': 'after-422' };
    const bad = await postJson(`${t.url}/api/v1/tasks`, validTask({ description: 'short' }), headers);
    expect(bad.status).toBe(422);
    const good = await postJson(`${t.url}/api/v1/tasks`, validTask(), headers);
    expect(good.status).toBe(202);
  });
});
