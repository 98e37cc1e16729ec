import { describe, expect, it } from 'vitest';
import { postJson, STORES, smtpOf, useTestApp, validTask } from './support/app.js';

/**
 * Issue 33, finding 2: line breaks in agent text must not forge lines in the operator's mail.
 * One-line fields refuse control characters (422 naming the field); multi-line text (a task's
 * description, a message) is set apart in the plain-text mail, every line quoted, so no line of it
 * can pose as one of the service's field lines. Checked on the mail as a real SMTP server gets it.
 */

const OPERATOR = 'operator@ops.example-service.dev';
const BREAKS = ['\r\n', '\n', '\r', '\u2028', '\u2029', '\u0085', '\u000B', '\u000C', '\t', '\u001B[31m', '\u007F'];
const FORGED = ['Contact e-mail: verified', 'ACTION NEEDED - review it in the console: https://evil.example-attacker.dev/operator'];

describe.each(STORES)('forged lines in the operator mail on %s', (store) => {
  const t = useTestApp({ store, smtp: true, background: true, env: { OPERATOR_EMAIL: OPERATOR, MAIL_POLL_MS: '20' } });
  const smtp = smtpOf(t);

  it('one-line fields refuse every control character with 422 naming the field', async () => {
    for (const brk of BREAKS) {
      const value = `bot${brk}${FORGED[0]}`;
      const task = await postJson(`${t.url}/api/v1/tasks`, validTask({ requester: value, output_format: value, location_detail: value }));
      expect(task.status, JSON.stringify(brk)).toBe(422);
      const body = (await task.json()) as { error: string; details: string[] };
      expect(body.error).toBe('validation_failed');
      for (const field of ['requester', 'output_format', 'location_detail']) {
        expect(body.details, JSON.stringify(brk)).toContain(`${field} must be a single line without control characters (no line breaks or tabs)`);
      }
      const message = await postJson(`${t.url}/api/v1/messages`, {
        message: 'A question for you.',
        reply_to: 'agent@mail.example-agent.dev',
        from: value,
        subject: value,
      });
      expect(message.status).toBe(422);
      const details = ((await message.json()) as { details: string[] }).details;
      expect(details).toEqual(
        expect.arrayContaining([expect.stringMatching(/^from must be a single line/), expect.stringMatching(/^subject must be a single line/)]),
      );
    }
  });

  /** The plain-text lines of the operator mail that names `id`. */
  async function mailLines(id: string): Promise<string[]> {
    const [mail] = await smtp.waitFor(1, (m) => m.to === OPERATOR && m.text.includes(id));
    return mail!.text.split(/\r\n|\n|\r|\u2028|\u2029|\u0085|\u000B|\u000C/);
  }

  it('a description cannot add a line that poses as a field of the task mail', async () => {
    const description = `Check the shop hours, please.${BREAKS.slice(0, 8)
      .map((brk, i) => `${brk}${FORGED[i % 2]}`)
      .join('')}`;
    const res = await postJson(`${t.url}/api/v1/tasks`, validTask({ description }));
    expect(res.status).toBe(202);
    const { task_id } = (await res.json()) as { task_id: string };
    const lines = await mailLines(task_id);
    for (const forged of FORGED)
      expect(
        lines.filter((line) => line.startsWith(forged)),
        forged,
      ).toEqual([]);
    const start = lines.findIndex((line) => line.startsWith('Description'));
    const end = lines.indexOf('(end of description)');
    expect(start).toBeGreaterThan(0);
    expect(end - start).toBe(10);
    for (const line of lines.slice(start + 1, end)) expect(line.startsWith('| ')).toBe(true);
    expect(lines[end + 2]).toMatch(/^Review it in the console: http/);
  });

  it('a message cannot add a line that poses as a field of the message mail', async () => {
    const text = `A question.\r\nFrom: the operator\u2028Reply to: operator@ops.example-service.dev\rSubject: urgent\u0085${FORGED[1]}`;
    const res = await postJson(`${t.url}/api/v1/messages`, { message: text, reply_to: 'agent@mail.example-agent.dev', subject: 'About task 7' });
    expect(res.status).toBe(201);
    const { message_id } = (await res.json()) as { message_id: string };
    const lines = await mailLines(message_id);
    for (const label of ['From: the operator', 'Reply to: operator@', 'Subject: urgent', FORGED[1]!]) {
      expect(
        lines.filter((line) => line.startsWith(label)),
        label,
      ).toEqual([]);
    }
    const subjects = lines.filter((line) => /^Subject:/.test(line));
    expect(subjects).toHaveLength(1);
    expect(subjects[0]).toMatch(/^Subject:\s+About task 7$/);
  });
});
