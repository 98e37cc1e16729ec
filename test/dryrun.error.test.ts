import { describe, expect, it } from 'vitest';
import { dailyTaskCapKey } from '../src/abuse/quotas.js';
import { addCounts } from '../src/store/abuse-control/counters-repo.js';
import { postJson, STORES, TEST_ADMIN_KEY, TestClock, useTestApp, validTask } from './support/app.js';
import { rowCounts } from './support/row-counts.js';

/**
 * A dry run (POST /api/v1/tasks?dry_run=true) of every refusal the submission suites know
 * (tasks.error, abuse.*): the same status, error code and details as the real submission sent
 * right after it, and not one row of the store changed by the dry run.
 */

type Json = Record<string, unknown>;
type Headers = Record<string, string>;
let nextIp = 1;
const newClient = (): Headers => ({ 'x-forwarded-for': `198.51.100.${nextIp++}` });
const admin = { authorization: `Bearer ${TEST_ADMIN_KEY}` };

interface Case {
  name: string;
  /** Brings the client where the refusal happens (earlier submissions, a block). */
  setup?: (client: Headers, ip: string) => Promise<void>;
  body: (client: Headers) => unknown;
  headers?: Headers;
  /** The status both must answer. */
  status: number;
  error: string;
  /** Undo what setup did to shared state (the daily cap). */
  teardown?: () => Promise<void>;
}

describe.each(STORES)('dry run refusals on %s', (store) => {
  const clock = new TestClock('2030-03-10T10:15:30.000Z');
  const t = useTestApp({ store, clock, limits: 'production', env: { TRUST_PROXY: '1' } });
  const url = () => `${t.url}/api/v1/tasks`;
  const submit = (body: unknown, headers: Headers) => postJson(url(), body, headers);
  const dryRun = (body: unknown, headers: Headers) => postJson(`${url()}?dry_run=true`, body, headers);
  const block = (kind: string, value: string) => postJson(`${t.url}/api/v1/admin/blocklist`, { kind, value }, admin);
  const same = { description: 'Check whether the pharmacy on Oak Road opens at 8 on Saturdays.' };

  const cases: Case[] = [
    { name: 'a body that is not JSON', body: () => '{"task_type":', status: 400, error: 'invalid_json' },
    { name: 'a JSON body that is not an object', body: () => '[1, 2]', status: 400, error: 'malformed_request' },
    { name: 'a body over 64 KB', body: () => validTask({ description: 'x'.repeat(70_000) }), status: 413, error: 'payload_too_large' },
    {
      name: 'a body sent as text/plain',
      body: () => JSON.stringify(validTask()),
      headers: { 'content-type': 'text/plain' },
      status: 415,
      error: 'unsupported_media_type',
    },
    {
      name: 'every field wrong at once',
      body: () => ({ task_type: 'astrology', description: 'short', location_required: 'yes', deadline: 'soon', contact_email: 'nope' }),
      status: 422,
      error: 'validation_failed',
    },
    { name: 'no contact_email for e-mail delivery', body: () => validTask({ contact_email: undefined }), status: 422, error: 'validation_failed' },
    { name: 'a deadline in the past', body: () => validTask({ deadline: '2020-01-01T00:00:00Z' }), status: 422, error: 'validation_failed' },
    { name: 'a placeholder e-mail domain', body: () => validTask({ contact_email: 'agent@example.com' }), status: 422, error: 'validation_failed' },
    { name: 'a null MX', body: () => validTask({ contact_email: 'agent@null-mx.example-agent.dev' }), status: 422, error: 'validation_failed' },
    {
      name: 'a domain that does not exist',
      body: () => validTask({ contact_email: 'agent@nxdomain.example-agent.dev' }),
      status: 422,
      error: 'validation_failed',
    },
    {
      name: 'a duplicate from the same client',
      setup: async (client) => void expect((await submit(validTask(same), client)).status).toBe(202),
      body: () => validTask(same),
      status: 409,
      error: 'duplicate_task',
    },
    {
      name: 'a duplicate by contact e-mail from another client',
      setup: async () => void expect((await submit(validTask({ ...same, contact_email: 'shared@mail.example-agent.dev' }), newClient())).status).toBe(202),
      body: () => validTask({ ...same, contact_email: 'shared@mail.example-agent.dev' }),
      status: 409,
      error: 'duplicate_task',
    },
    {
      name: 'the 4th task in an hour',
      setup: async (client) => {
        for (let i = 0; i < 3; i++) expect((await submit(validTask(), client)).status).toBe(202);
      },
      body: () => validTask(),
      status: 429,
      error: 'rate_limited',
    },
    {
      name: 'a second status_poll task in a day',
      setup: async (client) => void expect((await submit(validTask({ delivery: 'status_poll', contact_email: undefined }), client)).status).toBe(202),
      body: () => validTask({ delivery: 'status_poll', contact_email: undefined }),
      status: 429,
      error: 'rate_limited',
    },
    {
      name: 'the daily task cap reached',
      setup: async () => void (await addCounts(t.store.db, [{ key: dailyTaskCapKey(clock.now()), count: 1_000, expiresAt: '2030-03-12T00:00:00.000Z' }])),
      body: () => validTask({ delivery: 'status_poll', contact_email: undefined }),
      status: 429,
      error: 'capacity_reached',
      teardown: async () => void (await addCounts(t.store.db, [{ key: dailyTaskCapKey(clock.now()), count: -1_000, expiresAt: '2030-03-12T00:00:00.000Z' }])),
    },
    {
      name: 'a blocked address',
      setup: async (_client, ip) => void expect((await block('ip', ip)).status).toBe(201),
      body: () => validTask({ delivery: 'status_poll', contact_email: undefined }),
      status: 403,
      error: 'client_blocked',
    },
    {
      name: 'a blocked e-mail',
      setup: async () => void expect((await block('email', 'blocked@mail.example-agent.dev')).status).toBe(201),
      body: () => validTask({ contact_email: 'blocked@mail.example-agent.dev' }),
      status: 403,
      error: 'client_blocked',
    },
    {
      name: 'a blocked domain',
      setup: async () => void expect((await block('domain', 'blocked-domain.example-agent.dev')).status).toBe(201),
      body: () => validTask({ contact_email: 'someone@blocked-domain.example-agent.dev' }),
      status: 403,
      error: 'client_blocked',
    },
    {
      name: 'a blocked requester',
      setup: async () => void expect((await block('requester', 'Blocked Agent Inc')).status).toBe(201),
      body: () => validTask({ requester: 'Blocked Agent Inc', delivery: 'status_poll', contact_email: undefined }),
      status: 403,
      error: 'client_blocked',
    },
    {
      name: 'an Idempotency-Key reused with another payload',
      setup: async (client) => void expect((await submit(validTask(), { ...client, 'idempotency-key': 'dry-run-key-1' })).status).toBe(202),
      body: () => validTask(),
      headers: { 'idempotency-key': 'dry-run-key-1' },
      status: 422,
      error: 'validation_failed',
    },
    {
      name: 'a malformed Idempotency-Key',
      body: () => validTask(),
      headers: { 'idempotency-key': 'has spaces in it' },
      status: 400,
      error: 'malformed_request',
    },
  ];

  it.each(cases)('$name: the same answer as the submission, and nothing stored', async (c) => {
    const client = newClient();
    const ip = client['x-forwarded-for'] ?? '';
    await c.setup?.(client, ip);
    const headers = { ...client, ...c.headers };
    const before = await rowCounts(t.store.db);
    const dry = await dryRun(c.body(client), headers);
    const dryBody = (await dry.json()) as Json;
    expect(await rowCounts(t.store.db)).toEqual(before);
    const real = await submit(c.body(client), headers);
    const realBody = (await real.json()) as Json;
    await c.teardown?.();
    expect(real.status).toBe(c.status);
    expect(realBody.error).toBe(c.error);
    expect(dry.status).toBe(real.status);
    const { message: _m1, ...dryRest } = dryBody;
    const { message: _m2, ...realRest } = realBody;
    expect(dryRest).toEqual(realRest);
  });

  it('a malformed dry_run value is 400 malformed_request naming it', async () => {
    const res = await postJson(`${url()}?dry_run=yes`, validTask(), newClient());
    expect(res.status).toBe(400);
    const body = (await res.json()) as Json;
    expect(body.error).toBe('malformed_request');
    expect(JSON.stringify(body.details)).toContain('dry_run');
  });
});
