import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBackground } from '../src/background.js';
import { enqueueMessageReceived, enqueueTaskSubmitted, enqueueTaskTransition } from '../src/mail/outbox.js';
import { headerText, isSafeAddress, maskAddress } from '../src/mail/sanitize.js';
import { startOutboxWorker } from '../src/services/delivery/mail-worker.js';
import type { MessageRow } from '../src/store/messages/messages-repo.js';
import { findTask } from '../src/store/tasks/tasks-repo.js';
import { postJson, STORES, smtpOf, startTestApp, type TestApp, useTestApp, validTask } from './support/app.js';
import { driveTransition, type ReceivedMail, startSmtpServer, type TestSmtpServer, waitUntil } from './support/smtp.js';

const OPERATOR = 'operator@ops.example-service.dev';
const FROM = 'tasks@hitl.example-service.dev';
const CONTACT = 'agent@mail.example-agent.dev';
const VICTIM = 'victim@target.example-agent.dev';

/** The headers a mail of ours may carry; anything else was injected. */
const ALLOWED_HEADERS = new Set(['from', 'to', 'reply-to', 'subject', 'message-id', 'date', 'mime-version', 'content-type', 'content-transfer-encoding']);

function expectNoInjection(mail: ReceivedMail, recipient: string): void {
  expect(mail.envelope.to).toEqual([recipient]);
  expect(mail.headerNames.filter((name) => !ALLOWED_HEADERS.has(name))).toEqual([]);
  expect(mail.headerNames.filter((name) => name === 'subject')).toHaveLength(1);
  expect(mail.headerNames.filter((name) => name === 'to')).toHaveLength(1);
  expect(mail.parsed.cc).toBeUndefined();
  expect(mail.parsed.bcc).toBeUndefined();
  expect(mail.subject).not.toMatch(/[\r\n]/);
  const to = mail.parsed.to;
  expect(Array.isArray(to) ? to.flatMap((a) => a.value) : to?.value).toHaveLength(1);
}

const INJECTIONS = [
  `Hello\r\nBcc: ${VICTIM}\r\nX-Injected: yes`,
  `Hello\nCc: ${VICTIM}`,
  `Hello\rTo: ${VICTIM}`,
  `Hello\u2028Bcc: ${VICTIM}\u001b[31m\u0085`,
  `Hello\r\n\r\n<html>body takeover</html>`,
  `Hello =?UTF-8?Q?Hi=0D=0ABcc:_${VICTIM}?=`,
];

describe.each(STORES)('mail header safety on %s', (store) => {
  const t = useTestApp({ store, smtp: true, background: true, env: { OPERATOR_EMAIL: OPERATOR, MAIL_FROM: FROM, MAIL_POLL_MS: '20' } });
  const smtp = smtpOf(t);

  it.each(INJECTIONS)('a message subject or sender with line breaks adds no header or recipient: %j', async (attack) => {
    // One-line fields refuse control characters at the door (issue 33); a row stored before that
    // (or imported) still cannot inject a header, so the mail is checked straight from the outbox.
    const refused = await postJson(`${t.url}/api/v1/messages`, { message: 'Injection attempt', reply_to: 'q@agents.example-agent.dev', subject: attack });
    expect(refused.status).toBe(attack.includes('=?') ? 201 : 422);
    for (const [i, fields] of [{ subject: attack }, { sender: attack }].entries()) {
      const message: MessageRow = {
        id: `msg-2030-${'c'.repeat(30)}${INJECTIONS.indexOf(attack)}${i}`,
        message: 'Injection attempt through a one-line field',
        reply_to: 'q@agents.example-agent.dev',
        sender: null,
        subject: null,
        ...fields,
        client_hash: 'x',
        task_ids: '[]',
        done_at: null,
        done_by: null,
        email_unverified: 0,
        erased_at: null,
        thread_token_hash: null,
        created_at: t.clock.now().toISOString(),
      };
      await enqueueMessageReceived(t.store.db, t.deps, message);
      const [mail] = await smtp.waitFor(1, (m) => m.text.includes(message.id));
      expectNoInjection(mail!, OPERATOR);
      expect(mail!.replyTo).toBe('q@agents.example-agent.dev');
      expect(mail!.subject).toContain('Hello');
    }
  });

  it('a task description with line breaks adds no header or recipient to the operator mail', async () => {
    const description = `Check the shop hours.\r\nBcc: ${VICTIM}\r\nSubject: You won\r\n\r\nfake body`;
    const res = await postJson(`${t.url}/api/v1/tasks`, validTask({ description, requester: `bot Cc: ${VICTIM}` }));
    expect(res.status).toBe(202);
    const id = ((await res.json()) as { task_id: string }).task_id;
    const [mail] = await smtp.waitFor(1, (m) => m.text.includes(id));
    expectNoInjection(mail!, OPERATOR);
    expect(mail!.subject).toMatch(/^New task real_world_verification: Check the shop hours\. Bcc: victim@target\.example-agent\.dev Subject: You won fak/);
    // The text part keeps the description as written, every line quoted: body text, not a header.
    expect(mail!.text).toContain(
      description
        .split('\r\n')
        .map((line) => `| ${line}`)
        .join('\n'),
    );
  });

  it('caps the subject length', async () => {
    const res = await postJson(`${t.url}/api/v1/tasks`, validTask({ description: `Please ${'verify this very long request '.repeat(100)}` }));
    const id = ((await res.json()) as { task_id: string }).task_id;
    const [mail] = await smtp.waitFor(1, (m) => m.text.includes(id));
    expect([...mail!.subject].length).toBeLessThanOrEqual(150);
    expect(mail!.subject.endsWith('…')).toBe(true);
  });

  it('escapes agent text in the HTML part', async () => {
    const description = 'Review <script>alert(1)</script><img src=x onerror=alert(2)> & "quotes" at the shop';
    const res = await postJson(`${t.url}/api/v1/tasks`, validTask({ description, location_detail: '<b>Main</b> St' }));
    const id = ((await res.json()) as { task_id: string }).task_id;
    const [mail] = await smtp.waitFor(1, (m) => m.text.includes(id));
    expect(mail!.html).not.toContain('<script');
    expect(mail!.html).not.toContain('<img');
    expect(mail!.html).not.toContain('<b>Main');
    expect(mail!.html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x onerror=alert(2)&gt; &amp; &quot;quotes&quot;');
    expect(mail!.html).toContain('&lt;b&gt;Main&lt;/b&gt; St');
    expect(mail!.text).toContain(`| ${description}`);
  });

  it('never uses an address that is not a plain mailbox as recipient or Reply-To', async () => {
    const res = await postJson(`${t.url}/api/v1/tasks`, validTask());
    const taskId = ((await res.json()) as { task_id: string }).task_id;
    await smtp.waitFor(1, (m) => m.text.includes(taskId));
    const task = await findTask(t.store.db, taskId);
    const hostile = [`${CONTACT}\r\nBcc: ${VICTIM}`, `${CONTACT}, ${VICTIM}`, `"x" <${VICTIM}>`, `${CONTACT}\n`];
    for (const address of hostile) {
      // Straight to the outbox, past every validation a request goes through.
      const message: MessageRow = {
        id: `msg-2030-${'a'.repeat(31)}${hostile.indexOf(address)}`,
        message: 'Crafted row with a hostile reply_to',
        reply_to: address,
        sender: null,
        subject: null,
        client_hash: 'x',
        task_ids: '[]',
        email_unverified: 0,
        thread_token_hash: null,
        erased_at: null,
        done_at: null,
        done_by: null,
        created_at: t.clock.now().toISOString(),
      };
      await enqueueMessageReceived(t.store.db, t.deps, message);
      const [mail] = await smtp.waitFor(1, (m) => m.text.includes(message.id));
      expectNoInjection(mail!, OPERATOR);
      expect(mail!.replyTo).toBeUndefined();

      const row = { ...task!, status: 'accepted', contact_email: address, id: `task-2030-${'b'.repeat(31)}${hostile.indexOf(address)}` };
      await enqueueTaskTransition(t.store.db, t.deps, row);
      await enqueueTaskSubmitted(t.store.db, t.deps, [row]);
      const rows = await t.store.db.selectFrom('outbox').select(['kind', 'recipient', 'reply_to']).where('task_id', '=', row.id).execute();
      expect(rows).toEqual([{ kind: 'task_submitted', recipient: OPERATOR, reply_to: null }]);
    }
    expect(smtp.received.flatMap((m) => m.envelope.to)).not.toContain(VICTIM);
  });

  it('accepts CR/LF nowhere in a reply_to that reaches the outbox', async () => {
    const res = await postJson(`${t.url}/api/v1/messages`, { message: 'Reply-To injection attempt', reply_to: `q@agents.example-agent.dev\r\nBcc: ${VICTIM}` });
    if (res.status === 201) {
      const id = ((await res.json()) as { message_id: string }).message_id;
      const [mail] = await smtp.waitFor(1, (m) => m.text.includes(id));
      expectNoInjection(mail!, OPERATOR);
      expect(mail!.replyTo).toBeUndefined();
    } else {
      expect(res.status).toBe(422);
    }
  });
});

describe('header sanitizing helpers', () => {
  it('turns controls and line separators into spaces and caps the length', () => {
    expect(headerText('a\r\nb\tc\u0000d\u2028e\u202ef')).toBe('a b c d e f');
    expect([...headerText('x'.repeat(500))].length).toBe(150);
    // Characters, not UTF-16 units: 150 emoji (300 units) fit; 151 are cut to 149 and an ellipsis.
    expect(headerText('😀'.repeat(150))).toBe('😀'.repeat(150));
    expect(headerText('😀'.repeat(151))).toBe(`${'😀'.repeat(149)}…`);
    expect(headerText('x'.repeat(150))).toBe('x'.repeat(150));
    expect(headerText('  spaced   out  ')).toBe('spaced out');
    expect(headerText('=?UTF-8?Q?a=0D=0AX?=')).toBe('= ?UTF-8?Q?a=0D=0AX?=');
  });

  it('accepts plain mailboxes only', () => {
    expect(isSafeAddress('agent.smith+tag@mail.example-agent.dev')).toBe(true);
    for (const bad of [
      'a@b',
      'a b@c.dev',
      'a@b.dev\r\n',
      'a@b.dev, c@d.dev',
      '<a@b.dev>',
      '"a"@b.dev',
      'a@-b.dev',
      '@b.dev',
      'a@',
      null,
      undefined,
      `${'a'.repeat(65)}@b.dev`,
    ]) {
      expect(isSafeAddress(bad), String(bad)).toBe(false);
    }
  });

  it('masks addresses for logs', () => {
    expect(maskAddress('agent@mail.example-agent.dev')).toBe('ag***@mail.example-agent.dev');
  });
});

describe.each(STORES)('two workers on one %s store', (store) => {
  let smtp: TestSmtpServer;
  let a: TestApp;
  let b: TestApp;
  beforeAll(async () => {
    smtp = await startSmtpServer();
    const env = { SMTP_URL: smtp.url, OPERATOR_EMAIL: OPERATOR, MAIL_POLL_MS: '10' };
    a = await startTestApp({ store, env });
    b = await startTestApp({ shareDatabaseWith: a, env });
  });
  afterAll(async () => {
    await b.close();
    await a.close();
    await smtp.close();
  });

  it('send each mail exactly once', async () => {
    smtp.setDataDelay(5);
    // A backlog first, so both workers start by racing for the same rows…
    const ids: string[] = [];
    for (let i = 0; i < 12; i += 1) {
      const res = await postJson(`${(i % 2 === 0 ? a : b).url}/api/v1/tasks`, validTask());
      ids.push(((await res.json()) as { task_id: string }).task_id);
    }
    const workers = await Promise.all([startBackground(a.deps), startBackground(b.deps), startBackground(a.deps)]);
    try {
      // …then more while they run.
      for (let i = 0; i < 12; i += 1) {
        const res = await postJson(`${(i % 2 === 0 ? a : b).url}/api/v1/tasks`, validTask());
        ids.push(((await res.json()) as { task_id: string }).task_id);
      }
      await smtp.waitFor(ids.length);
      await waitUntil(async () => {
        const rows = await a.store.db.selectFrom('outbox').select('status').where('status', '!=', 'sent').execute();
        return rows.length === 0;
      });
      // Give a duplicate every chance to show up.
      await new Promise((resolve) => setTimeout(resolve, 200));
    } finally {
      await Promise.all(workers.map((w) => w.stop()));
      smtp.setDataDelay(0);
    }
    expect(smtp.received).toHaveLength(ids.length);
    const messageIds = smtp.received.map((m) => m.parsed.messageId);
    expect(new Set(messageIds).size).toBe(ids.length);
    for (const id of ids)
      expect(
        smtp.received.filter((m) => m.text.includes(id)),
        id,
      ).toHaveLength(1);
    const rows = await a.store.db.selectFrom('outbox').select(['attempts', 'claim_token']).execute();
    expect(rows.every((r) => r.attempts === 1 && r.claim_token === null)).toBe(true);
  });
});

describe.each(STORES)('worker logs on %s', (store) => {
  const t = useTestApp({ store, smtp: true, env: { OPERATOR_EMAIL: OPERATOR } });
  const smtp = smtpOf(t);

  it('never carry a mail body or a whole recipient address', async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, callback) {
        lines.push(chunk.toString());
        callback();
      },
    });
    const log = pino({ level: 'trace' }, sink);
    const deps = { ...t.deps, log };
    const secret = 'Unique secret description text 7f3a9c for the log test';
    const res = await postJson(`${t.url}/api/v1/tasks`, validTask({ description: secret }));
    const id = ((await res.json()) as { task_id: string }).task_id;
    await driveTransition(t, id, { status: 'rejected', operator_notes: 'Private reason 4b2e' });
    await smtp.setMode('reject');
    await postJson(`${t.url}/api/v1/messages`, { message: 'Another secret message body 91cd', reply_to: 'q@agents.example-agent.dev' });
    await smtp.setMode('accept');
    const worker = startOutboxWorker(deps, { ...t.config.mail, pollMs: 10 });
    try {
      await smtp.waitFor(2, (m) => m.text.includes(id));
      await waitUntil(async () => (await t.store.db.selectFrom('outbox').select('id').where('status', '=', 'pending').execute()).length === 0);
    } finally {
      await worker.stop();
    }
    const all = lines.join('');
    expect(all).toContain('outbox: mail sent');
    expect(all).toContain('ag***@mail.example-agent.dev');
    for (const needle of [CONTACT, OPERATOR, 'q@agents.example-agent.dev', secret, 'Private reason 4b2e', 'Another secret message body 91cd']) {
      expect(all).not.toContain(needle);
    }
  });
});
