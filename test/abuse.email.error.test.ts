import { describe, expect, it } from 'vitest';
import { postJson, STORES, useTestApp, validTask } from './support/app.js';

/**
 * E-mail checks that refuse: bad syntax, placeholder domains, null MX (RFC 7505), a domain with
 * no mail host, NXDOMAIN. 422 validation_failed, the detail naming the field, never the address.
 */

type Json = Record<string, unknown>;

describe.each(STORES)('undeliverable e-mail addresses on %s', (store) => {
  const t = useTestApp({ store });

  const refuseTask = async (email: string, detail: RegExp) => {
    const res = await postJson(`${t.url}/api/v1/tasks`, validTask({ contact_email: email }));
    const text = await res.text();
    expect(res.status).toBe(422);
    const body = JSON.parse(text) as Json;
    expect(body.error).toBe('validation_failed');
    expect(body.details).toEqual([expect.stringMatching(detail)]);
    expect((body.details as string[])[0]).toMatch(/^contact_email /);
    expect(text).not.toContain(email);
    expect(text.toLowerCase()).not.toContain(email.split('@')[1]!.toLowerCase());
  };

  it.each([
    'agent@example.com',
    'agent@mail.example.org',
    'agent@example.net',
    'agent@something.example',
    'agent@service.test',
    'agent@host.invalid',
    'agent@box.localhost',
    'agent@localhost',
  ])('refuses the placeholder domain of %s', async (email) => {
    await refuseTask(email, /placeholder/);
  });

  it.each([
    'agent',
    'agent@',
    '@mail.example-agent.dev',
    'agent@@mail.example-agent.dev',
    'a b@mail.example-agent.dev',
    'agent@mail..dev',
    'agent@-mail.dev',
    'agent@[192.0.2.1]',
    'agent@nodot',
  ])('refuses the malformed address %j', async (email) => {
    const res = await postJson(`${t.url}/api/v1/tasks`, validTask({ contact_email: email }));
    expect(res.status).toBe(422);
    const body = (await res.json()) as Json;
    expect(body.details).toEqual([expect.stringMatching(/^contact_email must be a valid e-mail address/)]);
  });

  it('refuses a domain with a null MX', async () => {
    await refuseTask('agent@null-mx.agents-mail.dev', /null MX/);
  });

  it('refuses a domain that does not exist', async () => {
    await refuseTask('agent@nxdomain.agents-mail.dev', /does not exist/);
  });

  it('refuses a domain with no MX, A or AAAA record', async () => {
    await refuseTask('agent@no-records.agents-mail.dev', /no mail server/);
  });

  it('refuses an undeliverable reply_to on a message, naming reply_to', async () => {
    const res = await postJson(`${t.url}/api/v1/messages`, { message: 'A question about the service.', reply_to: 'me@nxdomain.agents-mail.dev' });
    expect(res.status).toBe(422);
    const text = await res.text();
    expect((JSON.parse(text) as Json).details).toEqual([expect.stringMatching(/^reply_to .*does not exist/)]);
    expect(text).not.toContain('me@nxdomain');
  });

  it('refuses a placeholder reply_to', async () => {
    const res = await postJson(`${t.url}/api/v1/messages`, { message: 'A question about the service.', reply_to: 'me@example.com' });
    expect(res.status).toBe(422);
    expect(((await res.json()) as Json).details).toEqual([expect.stringMatching(/^reply_to .*placeholder/)]);
  });

  it('checks a contact_email given on a status_poll task too', async () => {
    const res = await postJson(`${t.url}/api/v1/tasks`, validTask({ delivery: 'status_poll', contact_email: 'agent@null-mx.agents-mail.dev' }));
    expect(res.status).toBe(422);
  });

  it('stores nothing for a refused address', async () => {
    const before = await t.store.db.selectFrom('tasks').select('id').execute();
    await postJson(`${t.url}/api/v1/tasks`, validTask({ contact_email: 'agent@nxdomain.agents-mail.dev' }));
    expect((await t.store.db.selectFrom('tasks').select('id').execute()).length).toBe(before.length);
  });
});
