import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postJson, STORES, startTestApp, type TestApp, TestClock, useTestApp, validTask } from './support/app.js';
import { sharedDnsServer, startDnsServer, type TestDnsServer } from './support/dns-server.js';

/**
 * E-mail checks that accept (against the local DNS server on loopback): an MX, an implicit MX
 * (A only), and a resolver that cannot answer (accepted, flagged email_unverified).
 */

let nextDomain = 1;
const domain = (label: string) => `${label}-${nextDomain++}.agents-mail.dev`;
const message = (replyTo: string) => ({ message: 'A question about the service.', reply_to: replyTo });

describe.each(STORES)('deliverable e-mail addresses on %s', (store) => {
  let dns: TestDnsServer;
  const clock = new TestClock();
  // The default test timeout (500 ms): short enough for the timeout case, long enough that a
  // busy machine does not turn an answer into a timeout.
  const t = useTestApp({ store, clock });
  beforeAll(async () => {
    dns = await sharedDnsServer();
  });

  const flagOf = async (taskId: string) =>
    (await t.store.db.selectFrom('tasks').select('email_unverified').where('id', '=', taskId).executeTakeFirstOrThrow()).email_unverified;
  const submit = async (email: string) => {
    const res = await postJson(`${t.url}/api/v1/tasks`, validTask({ contact_email: email }));
    return { status: res.status, body: (await res.json()) as { task_id: string } };
  };

  it('accepts a domain with an MX record, unflagged', async () => {
    const { status, body } = await submit(`agent@${domain('mx')}`);
    expect(status).toBe(202);
    expect(await flagOf(body.task_id)).toBe(0);
  });

  it('accepts a domain with no MX but an A record (implicit MX)', async () => {
    const { status, body } = await submit(`agent@${domain('a-only')}`);
    expect(status).toBe(202);
    expect(await flagOf(body.task_id)).toBe(0);
  });

  it('accepts when the resolver answers SERVFAIL, flagged email_unverified', async () => {
    const { status, body } = await submit(`agent@${domain('servfail')}`);
    expect(status).toBe(202);
    expect(await flagOf(body.task_id)).toBe(1);
  });

  it('accepts when the resolver times out, flagged email_unverified', async () => {
    const { status, body } = await submit(`agent@${domain('timeout')}`);
    expect(status).toBe(202);
    expect(await flagOf(body.task_id)).toBe(1);
  });

  it('accepts a message whose reply_to cannot be verified, flagged', async () => {
    const res = await postJson(`${t.url}/api/v1/messages`, message(`agent@${domain('servfail')}`));
    expect(res.status).toBe(201);
    const { message_id } = (await res.json()) as { message_id: string };
    const row = await t.store.db.selectFrom('messages').select('email_unverified').where('id', '=', message_id).executeTakeFirstOrThrow();
    expect(row.email_unverified).toBe(1);
  });

  it('accepts internationalized (punycode) domains and plus addressing', async () => {
    expect((await submit(`first.last+tasks@xn--bcher-kva.idn-${nextDomain++}.dev`)).status).toBe(202);
  });

  it('caches answers: a second address on the same domain asks the resolver nothing', async () => {
    const name = domain('cached');
    expect((await submit(`one@${name}`)).status).toBe(202);
    const asked = dns.queries.filter((q) => q.name === name).length;
    expect(asked).toBe(1);
    expect((await submit(`two@${name}`)).status).toBe(202);
    expect((await postJson(`${t.url}/api/v1/messages`, message(`three@${name.toUpperCase()}`))).status).toBe(201);
    expect(dns.queries.filter((q) => q.name === name).length).toBe(asked);
    // An hour later the answer is looked up again.
    clock.advance(61 * 60_000);
    expect((await submit(`four@${name}`)).status).toBe(202);
    expect(dns.queries.filter((q) => q.name === name).length).toBe(asked + 1);
  });

  it('skips the e-mail check for status_poll tasks without an address', async () => {
    const res = await postJson(`${t.url}/api/v1/tasks`, validTask({ delivery: 'status_poll', contact_email: undefined }));
    expect(res.status).toBe(202);
  });
});

describe('a resolver that is down', () => {
  let t: TestApp;
  let dead: TestDnsServer;
  beforeAll(async () => {
    // Bind a port, then close it: nothing listens there any more.
    dead = await startDnsServer();
    await dead.close();
    t = await startTestApp({ env: { DNS_SERVERS: dead.address, DNS_TIMEOUT_MS: '100' } });
  });
  afterAll(async () => {
    await t.close();
  });

  it('accepts the task, flagged email_unverified: nothing is lost to a DNS outage', async () => {
    const res = await postJson(`${t.url}/api/v1/tasks`, validTask({ contact_email: 'agent@mail.example-agent.dev' }));
    expect(res.status).toBe(202);
    const { task_id } = (await res.json()) as { task_id: string };
    const row = await t.store.db.selectFrom('tasks').select('email_unverified').where('id', '=', task_id).executeTakeFirstOrThrow();
    expect(row.email_unverified).toBe(1);
  });

  it('still refuses what needs no resolver: syntax and placeholder domains', async () => {
    expect((await postJson(`${t.url}/api/v1/tasks`, validTask({ contact_email: 'agent@example.com' }))).status).toBe(422);
  });
});
