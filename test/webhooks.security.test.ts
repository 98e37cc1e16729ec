import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { describe, expect, it } from 'vitest';
import { isPublicAddress } from '../src/domain/network/addresses.js';
import { callbackUrlProblem } from '../src/domain/tasks/callback-url.js';
import { call, connectClient } from './mcp.support.js';
import { postJson, STORES, useSuiteResource, useTestApp, validTask } from './support/app.js';
import { ACCEPT, listWebhooks, patchTask, submitWithCallback, useReceiver, WEBHOOK_TEST_ENV, waitForEvent } from './webhooks.support.js';

/** Every form of a non-public host an agent could write, and what the refusal must say. */
const PRIVATE_TARGETS = [
  'https://127.0.0.1/hook',
  'https://127.1.2.3/hook',
  'https://2130706433/hook', // decimal 127.0.0.1
  'https://0x7f.1/hook', // hex + short form
  'https://0x7f000001/hook',
  'https://017700000001/hook', // octal
  'https://0177.0.0.1/hook',
  'https://0.0.0.0/hook',
  'https://0/hook',
  'https://10.0.0.5/hook',
  'https://172.16.3.4/hook',
  'https://192.168.1.1/hook',
  'https://169.254.169.254/latest/meta-data',
  'https://100.64.0.1/hook', // CGNAT
  'https://224.0.0.1/hook', // multicast
  'https://255.255.255.255/hook',
  'https://192.0.2.1/hook', // documentation
  'https://[::1]/hook',
  'https://[::]/hook',
  'https://[::ffff:127.0.0.1]/hook', // IPv4-mapped
  'https://[::ffff:7f00:1]/hook',
  'https://[::ffff:10.0.0.1]/hook',
  'https://[64:ff9b::a00:1]/hook', // NAT64 of 10.0.0.1
  'https://[fe80::1]/hook',
  'https://[fd00::1]/hook',
  'https://[ff02::1]/hook',
  'https://[2001:db8::1]/hook',
  'https://localhost/hook',
  'https://localhost./hook',
  'https://LOCALHOST:8443/hook',
  'https://api.localhost/hook',
];

const MALFORMED: [string, RegExp][] = [
  ['not a url', /^callback_url must be an absolute URL/],
  ['/relative/path', /^callback_url must be an absolute URL/],
  ['http://hooks.example-agent.dev/x', /^callback_url must be an https:\/\/ URL$/],
  ['ftp://hooks.example-agent.dev/x', /^callback_url must be an https:\/\/ URL$/],
  ['javascript:alert(1)', /^callback_url must be an https:\/\/ URL$/],
  ['https://user:secret@hooks.example-agent.dev/x', /^callback_url must not contain a user name or password$/],
  [`https://hooks.example-agent.dev/${'a'.repeat(2000)}`, /^callback_url must be at most 2000 characters$/],
];

describe('the address rules (pure)', () => {
  it('calls public only globally routable unicast addresses', () => {
    for (const ok of ['93.184.216.34', '8.8.8.8', '2606:4700::1111', '2a00:1450:4001::1', '::ffff:8.8.8.8']) expect(isPublicAddress(ok), ok).toBe(true);
    for (const bad of [
      '127.0.0.1',
      '0.0.0.0',
      '10.1.1.1',
      '::1',
      '::',
      '::ffff:127.0.0.1',
      '::127.0.0.1',
      '2002:7f00:1::',
      'fc00::1',
      'fe80::1%eth0',
      '2001::1',
      'not-an-ip',
    ]) {
      expect(isPublicAddress(bad), bad).toBe(false);
    }
  });

  it('lets WEBHOOK_ALLOW_PRIVATE lift the guard and allow http://', () => {
    expect(callbackUrlProblem('http://127.0.0.1:9/x', true)).toBeNull();
    expect(callbackUrlProblem('http://localhost/x', true)).toBeNull();
    expect(callbackUrlProblem('ftp://127.0.0.1/x', true)).toBe('must be an http:// or https:// URL');
    // A developer's own receiver on loopback: the refusal says which setting allows it (issue 30).
    expect(callbackUrlProblem('http://localhost:9000/hook', false)).toBe(
      'must be an https:// URL; a deployment for local development can allow it with WEBHOOK_ALLOW_PRIVATE=true',
    );
    expect(callbackUrlProblem('https://127.0.0.1:9000/hook', false)).toContain('WEBHOOK_ALLOW_PRIVATE=true');
    expect(callbackUrlProblem('http://hooks.example.com/x', false)).toBe('must be an https:// URL');
    expect(callbackUrlProblem('https://hooks.example-agent.dev/x?t=1', false)).toBeNull();
  });
});

describe.each(STORES)('callback_url at submission on %s (guard on)', (store) => {
  const t = useTestApp({ store });
  const client = useSuiteResource<Client>(
    () => connectClient(t),
    (c) => c.close(),
  );

  it('refuses every private, loopback or reserved host form with 422 naming callback_url, through REST and MCP alike', async () => {
    for (const target of PRIVATE_TARGETS) {
      const res = await postJson(`${t.url}/api/v1/tasks`, validTask({ callback_url: target }));
      expect(res.status, target).toBe(422);
      const body = (await res.json()) as { error: string; details: string[] };
      expect(body.error).toBe('validation_failed');
      expect(body.details, target).toEqual([
        'callback_url must not point at a loopback, private, link-local or otherwise reserved address; a deployment for local development can allow it with WEBHOOK_ALLOW_PRIVATE=true',
      ]);
      expect(JSON.stringify(body)).not.toContain(target.slice(8, 20));

      const result = await call(client, 'submit_human_task', validTask({ callback_url: target }));
      expect(result.isError, target).toBe(true);
      expect(result.structuredContent).toMatchObject({ error: 'validation_failed', details: body.details });
    }
  });

  it('refuses malformed, non-https, credentialed and over-long URLs, through REST and MCP alike', async () => {
    for (const [target, detail] of MALFORMED) {
      const res = await postJson(`${t.url}/api/v1/tasks`, validTask({ callback_url: target }));
      expect(res.status, target).toBe(422);
      const body = (await res.json()) as { error: string; details: string[] };
      expect(body.details, target).toEqual([expect.stringMatching(detail)]);
      const result = await call(client, 'submit_human_task', validTask({ callback_url: target }));
      expect(result.structuredContent, target).toMatchObject({ error: 'validation_failed', details: body.details });
    }
    const notString = await postJson(`${t.url}/api/v1/tasks`, validTask({ callback_url: 42 }));
    expect(((await notString.json()) as { details: string[] }).details).toEqual(['callback_url must be a string']);
  });

  it('never returns the callback URL: not at submission, status, replay, duplicate, MCP or the status page', async () => {
    const secret = 'https://hooks.example-agent.dev/cb/secret-token-7f3a';
    const task = validTask({ callback_url: secret });
    const headers = { 'idempotency-key': `cb-${store}` };
    const first = await postJson(`${t.url}/api/v1/tasks`, task, headers);
    expect(first.status).toBe(202);
    const firstText = await first.text();
    const id = (JSON.parse(firstText) as { task_id: string }).task_id;
    const replay = await postJson(`${t.url}/api/v1/tasks`, task, headers);
    const duplicate = await postJson(`${t.url}/api/v1/tasks`, task);
    expect(duplicate.status).toBe(409);
    const texts = [
      firstText,
      await replay.text(),
      await duplicate.text(),
      await (await fetch(`${t.url}/api/v1/tasks/${id}`)).text(),
      await (await fetch(`${t.url}/tasks?id=${id}`)).text(),
      JSON.stringify(await call(client, 'check_task_status', { task_id: id })),
    ];
    for (const text of texts) {
      expect(text).not.toContain('secret-token-7f3a');
      expect(text).not.toContain('callback_url');
    }
    // The receipt's request hash leaves it out, like the contact e-mail.
    const row = await t.store.db.selectFrom('tasks').select(['callback_url', 'request_json']).where('id', '=', id).executeTakeFirstOrThrow();
    expect(row.callback_url).toBe(secret);
    expect(row.request_json).not.toContain('callback_url');
    expect(row.request_json).not.toContain('contact_email');
  });

  it('ignores a callback_url smuggled into the web form', async () => {
    const form = new URLSearchParams({
      task_type: 'real_world_verification',
      description: 'Check the opening hours of the library on Elm Street, please.',
      delivery: 'status_poll',
      callback_url: 'https://hooks.example-agent.dev/from-form',
    });
    const res = await fetch(`${t.url}/tasks`, { method: 'POST', body: form, redirect: 'manual' });
    expect(res.status).toBe(303);
    const id = new URL(res.headers.get('location')!, t.url).searchParams.get('id')!;
    const row = await t.store.db.selectFrom('tasks').select('callback_url').where('id', '=', id).executeTakeFirstOrThrow();
    expect(row.callback_url).toBeNull();
  });
});

describe.each(STORES)('the SSRF guard at delivery on %s', (store) => {
  const receiver = useReceiver();
  // Guard on, but a short timeout and a fast poll; names resolve through the test DNS server.
  const guarded = useTestApp({ store, background: true, env: { MAIL_POLL_MS: '50', WEBHOOK_TIMEOUT_MS: '3000' } });
  const open = useTestApp({ store, background: true, env: WEBHOOK_TEST_ENV });

  it('refuses a name that resolves to a private or loopback address, and sends nothing', async () => {
    for (const host of ['ip-10-1-2-3.hooks.example-agent.dev', 'ip-127-0-0-1.hooks.example-agent.dev', 'ip-169-254-169-254.hooks.example-agent.dev']) {
      const id = await submitWithCallback(guarded, `https://${host}/hook`);
      await patchTask(guarded, id, ACCEPT);
      const event = await waitForEvent(guarded, id, 'task.accepted', (w) => w.attempts === 1);
      expect(event).toMatchObject({ status: 'pending', last_status_code: null });
      expect(event.last_error).toMatch(/^refused: the callback host is, or resolves to, a loopback, private or reserved address$/);
    }
    expect(receiver.received).toHaveLength(0);
  });

  it('connects to the address it resolved and checked, keeping the name in the Host header', async () => {
    const port = new URL(receiver.url).port;
    const id = await submitWithCallback(open, `http://ip-127-0-0-1.hooks.example-agent.dev:${port}/ok-pinned-${store}`);
    await patchTask(open, id, ACCEPT);
    await waitForEvent(open, id, 'task.accepted', (w) => w.status === 'delivered');
    const [hit] = receiver.to(`/ok-pinned-${store}`);
    expect(hit!.headers.host).toBe(`ip-127-0-0-1.hooks.example-agent.dev:${port}`);
    expect((await listWebhooks(open, id))[0]!.target).toBe(`http://ip-127-0-0-1.hooks.example-agent.dev:${port}`);
  });
});
