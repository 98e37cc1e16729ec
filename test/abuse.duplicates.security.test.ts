import { describe, expect, it } from 'vitest';
import { postJson, STORES, useTestApp, validTask } from './support/app.js';
import { waitUntil } from './support/smtp.js';

/**
 * Contract, "Duplicates across clients": the task id is the key to the task. A second client that
 * knows a contact e-mail and a description gets 409 duplicate_task without existing_task_id, and
 * the id is mailed to the contact address (through the outbox, in the refusal's transaction).
 * The same client still gets existing_task_id.
 */

type Json = Record<string, unknown>;
let nextIp = 10;
const newClient = () => ({ 'x-forwarded-for': `198.51.100.${nextIp++}` });
let n = 1;
const uniqueDescription = () => `Read the water meter in the basement of the community centre, visit ${n++}.`;

describe.each(STORES)('duplicates across clients on %s', (store) => {
  const t = useTestApp({ store, smtp: true, background: true, env: { TRUST_PROXY: '1', MAIL_FROM: 'service@mail.example-agent.dev', MAIL_POLL_MS: '20' } });

  const submit = async (client: Record<string, string>, overrides: Record<string, unknown>) => {
    const res = await postJson(`${t.url}/api/v1/tasks`, validTask(overrides), client);
    return { res, body: (await res.json()) as Json };
  };

  it('another client gets 409 without the id; the id is mailed to the contact address', async () => {
    const description = uniqueDescription();
    const contact = `owner${n}@mail.example-agent.dev`;
    const first = await submit(newClient(), { description, contact_email: contact });
    expect(first.res.status).toBe(202);
    const id = String(first.body.task_id);

    const other = await submit(newClient(), { description, contact_email: contact.toUpperCase() });
    expect(other.res.status).toBe(409);
    expect(other.body.error).toBe('duplicate_task');
    expect(other.body).not.toHaveProperty('existing_task_id');
    expect(JSON.stringify(other.body)).not.toContain(id);
    expect(String(other.body.message)).toMatch(/sent by e-mail to that contact address/);

    const [mail] = await t.smtp.waitFor(1, (m) => m.subject === `Your task already exists: ${id}`);
    expect(mail?.to).toBe(contact);
    expect(mail?.text).toContain(`/tasks?id=${id}`);
  });

  it('the same client still gets existing_task_id, and no mail is sent', async () => {
    const client = newClient();
    const description = uniqueDescription();
    const contact = `self${n}@mail.example-agent.dev`;
    const first = await submit(client, { description, contact_email: contact });
    const second = await submit(client, { description, contact_email: contact });
    expect(second.res.status).toBe(409);
    expect(second.body.existing_task_id).toBe(first.body.task_id);
    const rows = await t.store.db
      .selectFrom('outbox')
      .select('kind')
      .where('task_id', '=', String(first.body.task_id))
      .where('kind', '=', 'duplicate_notice')
      .execute();
    expect(rows).toHaveLength(0);
  });

  it('the notice is written in the refusal transaction (the outbox row exists when the 409 arrives) and sent at most once a day', async () => {
    const description = uniqueDescription();
    const contact = `flood${n}@mail.example-agent.dev`;
    const first = await submit(newClient(), { description, contact_email: contact });
    const id = String(first.body.task_id);
    for (let i = 0; i < 4; i += 1) {
      const res = await submit(newClient(), { description, contact_email: contact });
      expect(res.res.status).toBe(409);
      const rows = await t.store.db
        .selectFrom('outbox')
        .select(['kind', 'recipient'])
        .where('task_id', '=', id)
        .where('kind', '=', 'duplicate_notice')
        .execute();
      expect(rows).toEqual([{ kind: 'duplicate_notice', recipient: contact }]);
    }
    await t.smtp.waitFor(1, (m) => m.subject === `Your task already exists: ${id}`);
    await new Promise((r) => setTimeout(r, 300));
    expect(t.smtp.received.filter((m) => m.subject === `Your task already exists: ${id}`)).toHaveLength(1);
  });

  it('a cross-client duplicate through MCP carries no id either', async () => {
    const description = uniqueDescription();
    const contact = `mcp${n}@mail.example-agent.dev`;
    const first = await submit(newClient(), { description, contact_email: contact });
    const res = await fetch(`${t.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...newClient() },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'submit_human_task', arguments: validTask({ description, contact_email: contact }) },
      }),
    });
    const text = await res.text();
    expect(text).toContain('duplicate_task');
    expect(text).not.toContain(String(first.body.task_id));
    await waitUntil(async () => {
      const rows = await t.store.db
        .selectFrom('outbox')
        .select('id')
        .where('task_id', '=', String(first.body.task_id))
        .where('kind', '=', 'duplicate_notice')
        .execute();
      return rows.length === 1;
    });
  });
});
