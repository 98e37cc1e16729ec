import { describe, expect, it } from 'vitest';
import { signIn } from './console.support.js';
import { deliveredRecord, importOk, importTasks, openRecord } from './import.support.js';
import { STORES, useTestApp } from './support/app.js';

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

describe.each(STORES)('task import, untrusted input on %s', (store) => {
  const t = useTestApp({ store });

  it('escapes imported text and a foreign issuer on the status page and in the console; never returns the contact e-mail', async () => {
    const record = deliveredRecord({
      description: 'Check <img src=x onerror=alert(1)> the shop.',
      requester: '<script>alert(2)</script>',
      contact_email: 'private.person@mail.example-agent.dev',
    });
    record.receipt = `${b64({ alg: 'EdDSA' })}.${b64({ iss: '<script>alert(3)</script>' })}.c2ln`;
    await importOk(t, [record]);
    const id = String(record.task_id);
    const page = await (await fetch(`${t.url}/tasks?id=${id}`)).text();
    expect(page).not.toContain('<img src=x');
    expect(page).not.toContain('<script>alert');
    expect(page).toContain('&lt;script&gt;alert(3)&lt;/script&gt;');
    expect(page).not.toContain('private.person');
    const json = await (await fetch(`${t.url}/api/v1/tasks/${id}`)).text();
    expect(json).not.toContain('private.person');
    const { cookie } = await signIn(t);
    const consolePage = await (await fetch(`${t.url}/operator/tasks/${id}`, { headers: { cookie } })).text();
    expect(consolePage).not.toContain('<img src=x');
    expect(consolePage).not.toContain('<script>alert(2)');
  });

  it('answers odd records per record and odd bodies with the contract error, never a 500', async () => {
    const odd: unknown[] = [
      null,
      42,
      [],
      {},
      { task_id: null },
      openRecord('submitted', { status_history: 'x' }),
      openRecord('submitted', { status_history: [null] }),
      openRecord('submitted', { budget_usd: -1 }),
      openRecord('submitted', { receipt: 'x'.repeat(20000) }),
      openRecord('submitted', { task_id: `task-2025-${'a'.repeat(65)}` }),
    ];
    const result = await importOk(t, odd);
    expect(result.imported).toBe(0);
    expect(result.errors.map((e) => e.index)).toEqual(odd.map((_, i) => i));
    // A NUL anywhere in a JSON body is refused whole before any service sees it (as everywhere).
    const nul = await importTasks(t, { tasks: [openRecord('submitted', { description: 'nul\u0000byte' })] });
    expect(nul.status).toBe(422);
    for (const body of ['null', '"tasks"', '[1]', '{"tasks": null}']) {
      const res = await importTasks(t, body);
      expect(res.status).toBe(400);
    }
    const text = await fetch(`${t.url}/api/v1/admin/tasks/import`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain', authorization: 'Bearer test-admin-key-0123456789' },
      body: 'x',
    });
    expect(text.status).toBe(415);
  });
});
