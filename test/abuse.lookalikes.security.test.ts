import { describe, expect, it } from 'vitest';
import { comparisonKey, normalizeText } from '../src/domain/text.js';
import { postJson, STORES, TEST_ADMIN_KEY, useTestApp, validTask } from './support/app.js';

/**
 * Issue 33, finding 3: look-alike and invisible text. One normalization (NFKC, invisible characters
 * removed, whitespace collapsed, case folded; trailing punctuation ignored when comparing) is used
 * by duplicate detection, requester blocks and the length checks; text showing nothing is 422.
 */

const admin = { authorization: `Bearer ${TEST_ADMIN_KEY}` };
type Json = Record<string, unknown>;

const fullwidth = (text: string) => text.replace(/[A-Za-z0-9]/g, (c) => String.fromCodePoint(c.codePointAt(0)! + 0xfee0));

/** Ways to write the same description that a reader cannot tell apart (or that differ in case, spacing, a final period). */
const LOOKALIKES: [string, (text: string) => string][] = [
  ['NFD (decomposed accents)', (s) => s.normalize('NFD')],
  ['fullwidth letters', fullwidth],
  ['U+200B inside', (s) => s.replace('bakery', 'bak\u200Bery')],
  ['U+200D inside', (s) => s.replace('Sunday', 'Sun\u200Dday')],
  ['U+FEFF and a soft hyphen', (s) => `\uFEFF${s.replace('mornings', 'morn\u00ADings')}`],
  ['a trailing period', (s) => `${s}.`],
  ['no-break and ideographic spaces', (s) => s.replace(/ /g, '\u00A0').replace('at', '\u3000at')],
  ['upper case and extra spaces', (s) => `  ${s.toUpperCase().replace(/ /g, '   ')}  `],
  ['a variation selector', (s) => s.replace('Café', 'Café\uFE0F')],
];

describe('the normalization', () => {
  it('gives every look-alike form of a text the same comparison key', () => {
    const base = 'Check whether the Café bakery at 12 Main Street is open on Sunday mornings';
    for (const [name, form] of LOOKALIKES) expect(comparisonKey(form(base)), name).toBe(comparisonKey(base));
    expect(normalizeText('\u200B'.repeat(20))).toBe('');
    expect(normalizeText('Ｂａｄｂｏｔ\u200B')).toBe('badbot');
    expect(comparisonKey('Straße')).toBe(comparisonKey('STRASSE'));
  });
});

describe.each(STORES)('look-alike text on %s', (store) => {
  const t = useTestApp({ store, env: { TRUST_PROXY: '1' } });
  const tasks = () => `${t.url}/api/v1/tasks`;
  let n = 0;

  it.each(LOOKALIKES)('a duplicate written with %s is still the 409 duplicate', async (_name, form) => {
    n += 1;
    const description = `Check whether the Café bakery at ${n} Main Street is open on Sunday mornings`;
    const first = await postJson(tasks(), validTask({ description }));
    expect(first.status).toBe(202);
    const { task_id } = (await first.json()) as { task_id: string };
    const again = await postJson(tasks(), validTask({ description: form(description) }));
    expect(again.status).toBe(409);
    expect((await again.json()) as Json).toMatchObject({ error: 'duplicate_task', existing_task_id: task_id });
  });

  it('a requester block matches every look-alike form of the name', async () => {
    expect((await postJson(`${t.url}/api/v1/admin/blocklist`, { kind: 'requester', value: 'BadBot' }, admin)).status).toBe(201);
    for (const requester of ['BadBot\u200B', 'Ｂａｄｂｏｔ', 'Bad\u200DBot', 'Bad\u00ADBot', '  BADBOT. ', 'Badbot\uFE0F']) {
      const res = await postJson(tasks(), validTask({ requester }));
      expect(res.status, JSON.stringify(requester)).toBe(403);
      const message = await postJson(`${t.url}/api/v1/messages`, { message: 'A question for you.', reply_to: 'agent@mail.example-agent.dev', from: requester });
      expect(message.status, JSON.stringify(requester)).toBe(403);
    }
    expect((await postJson(tasks(), validTask({ requester: 'BadBot2' }))).status).toBe(202);
  });

  it('length checks count visible characters: text that shows nothing is 422', async () => {
    const cases: [Json, string][] = [
      [{ description: '\u200B'.repeat(20) }, 'description must be between 10 and'],
      [{ description: `${'\u200D'.repeat(30)}abc` }, 'description must be between 10 and'],
      [{ description: '\u3164'.repeat(20) }, 'description must be between 10 and'],
      [{ description: '\u00A0'.repeat(20) }, 'description must be between 10 and'],
      [{ requester: '\u200B\u200B' }, 'requester must contain a visible character'],
    ];
    for (const [fields, detail] of cases) {
      const res = await postJson(tasks(), validTask(fields));
      expect(res.status, JSON.stringify(fields)).toBe(422);
      const body = (await res.json()) as { error: string; details: string[] };
      expect(body.error).toBe('validation_failed');
      expect(body.details.join('\n')).toContain(detail);
    }
    const message = await postJson(`${t.url}/api/v1/messages`, { message: '\u200B'.repeat(10), reply_to: 'agent@mail.example-agent.dev' });
    expect(message.status).toBe(422);
    expect(((await message.json()) as { details: string[] }).details[0]).toMatch(/^message must be between/);
    const subject = await postJson(`${t.url}/api/v1/messages`, { message: 'A question for you.', reply_to: 'agent@mail.example-agent.dev', subject: '\u2060' });
    expect(subject.status).toBe(422);
  });

  it('an e-mail block matches sub-addresses everywhere, and dotted forms only where the provider ignores dots', async () => {
    for (const value of ['bad@mailbox.org', 'bad@gmail.com']) {
      expect((await postJson(`${t.url}/api/v1/admin/blocklist`, { kind: 'email', value }, admin)).status).toBe(201);
    }
    for (const contact of [
      'bad+tag@mailbox.org',
      'BAD@MailBox.org',
      'Bad+x+y@mailbox.org',
      'b.a.d@gmail.com',
      'bad+tag@gmail.com',
      'B.A.D+z@googlemail.com'.replace('googlemail', 'gmail'),
    ]) {
      expect((await postJson(tasks(), validTask({ contact_email: contact }))).status, contact).toBe(403);
    }
    // At other providers a dot names another mailbox: that needs a domain block.
    expect((await postJson(tasks(), validTask({ contact_email: 'b.a.d@mailbox.org' }))).status).toBe(202);
    expect((await postJson(tasks(), validTask({ contact_email: 'badder@mailbox.org' }))).status).toBe(202);
  });
});
