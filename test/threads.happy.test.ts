import { describe, expect, it } from 'vitest';
import { findMessage } from '../src/store/messages/messages-repo.js';
import { call, useMcpClient } from './mcp.support.js';
import { ADMIN, type Json } from './operator.support.js';
import { postJson, STORES, TestClock, useTestApp } from './support/app.js';

const REPLY_TO = 'asker@mail.example-agent.dev';

describe.each(STORES)('message threads for agents without a mailbox on %s', (store) => {
  const clock = new TestClock();
  const t = useTestApp({ store, clock });
  const client = useMcpClient(t);

  async function message(text = 'Do you also cover the north side of town?'): Promise<{ message_id: string; thread_token: string }> {
    const res = await postJson(`${t.url}/api/v1/messages`, { message: text, reply_to: REPLY_TO, subject: 'Coverage' });
    expect(res.status).toBe(201);
    return (await res.json()) as { message_id: string; thread_token: string };
  }

  function thread(id: string, token?: string): Promise<Response> {
    return fetch(`${t.url}/api/v1/messages/${id}`, { headers: token === undefined ? {} : { authorization: `Bearer ${token}` } });
  }

  async function reply(id: string, text: string): Promise<void> {
    const res = await postJson(`${t.url}/api/v1/admin/messages/${id}/reply`, { message: text }, ADMIN);
    expect(res.status).toBe(201);
  }

  it('POST /api/v1/messages returns a thread token; the thread lists the operator’s replies; only the hash is stored', async () => {
    const sent = await message();
    expect(sent.thread_token).toMatch(/^mt_[A-Za-z0-9_-]{43}$/);
    const empty = await thread(sent.message_id, sent.thread_token);
    expect(empty.status).toBe(200);
    expect(empty.headers.get('cache-control')).toBe('no-store');
    expect(await empty.json()).toMatchObject({ message_id: sent.message_id, subject: 'Coverage', replies: [] });
    await reply(sent.message_id, 'Yes, the north side too.');
    clock.advance(60_000);
    await reply(sent.message_id, 'Up to the ring road.');
    const full = (await (await thread(sent.message_id, sent.thread_token)).json()) as { replies: Json[] };
    expect(full.replies.map((r) => r.message)).toEqual(['Yes, the north side too.', 'Up to the ring road.']);
    expect(full.replies[0]!.reply_id).toMatch(/^rpl-\d{4}-[0-9a-f]{32}$/);
    const row = await findMessage(t.store.db, sent.message_id);
    expect(JSON.stringify(row)).not.toContain(sent.thread_token);
    expect(row?.thread_token_hash).toMatch(/^[0-9a-f]{64}$/);
  });

  it('a wrong, missing or other message’s token is a plain 404 not_found, never 401', async () => {
    const a = await message();
    const b = await message('Another question about the service hours please.');
    for (const res of [
      await thread(a.message_id),
      await thread(a.message_id, b.thread_token),
      await thread(a.message_id, `mt_${'A'.repeat(43)}`),
      await thread(a.message_id, 'garbage'),
      await thread('msg-2030-00000000000000000000000000000000', a.thread_token),
      await fetch(`${t.url}/api/v1/messages/${a.message_id}`, { headers: { authorization: `Basic ${a.thread_token}` } }),
    ]) {
      expect(res.status).toBe(404);
      expect(res.headers.get('www-authenticate')).toBeNull();
      expect(await res.json()).toMatchObject({ error: 'not_found' });
    }
  });

  it('MCP: message_human_operator returns the token, check_message_thread reads the replies', async () => {
    const sent = await call(client, 'message_human_operator', { message: 'Can you read handwritten notes?', reply_to: REPLY_TO });
    const { message_id, thread_token } = sent.structuredContent as { message_id: string; thread_token: string };
    expect(thread_token).toMatch(/^mt_/);
    await reply(message_id, 'Yes, if they are legible.');
    const read = await call(client, 'check_message_thread', { message_id, thread_token });
    expect(read.isError).toBeFalsy();
    expect(read.structuredContent).toMatchObject({ message_id, replies: [{ message: 'Yes, if they are legible.' }] });
    const wrong = await call(client, 'check_message_thread', { message_id, thread_token: `mt_${'B'.repeat(43)}` });
    expect(wrong.isError).toBe(true);
    expect(wrong.structuredContent).toMatchObject({ error: 'not_found' });
  });
});
