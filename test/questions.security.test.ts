import { describe, expect, it } from 'vitest';
import { signIn } from './console.support.js';
import { submit } from './operator.support.js';
import { answer, ask } from './questions.support.js';
import { STORES, smtpOf, useTestApp } from './support/app.js';

const OPERATOR = 'operator@ops.example-service.dev';
const CONTACT = 'agent@mail.example-agent.dev';
const HOSTILE = '<script>alert(1)</script><img src=x onerror=alert(2)>\r\nBcc: victim@mail.example-agent.dev';

describe.each(STORES)('questions and answers are untrusted text on %s', (store) => {
  const t = useTestApp({ store, smtp: true, background: true, env: { OPERATOR_EMAIL: OPERATOR, MAIL_POLL_MS: '20' } });
  const smtp = smtpOf(t);

  it('escapes questions and answers in the mails and keeps them out of the headers', async () => {
    const id = await submit(t);
    const asked = await ask(t, id, `Which door? ${HOSTILE}`);
    const [toRequester] = await smtp.waitFor(1, (m) => m.to === CONTACT && m.subject.includes('has a question'));
    expect(toRequester!.html).not.toContain('<script>');
    expect(toRequester!.html).toContain('&lt;script&gt;');
    expect(toRequester!.envelope.to).toEqual([CONTACT]);
    await answer(t, id, asked.question_id, `The side one. ${HOSTILE}`);
    const [toOperator] = await smtp.waitFor(1, (m) => m.to === OPERATOR && m.text.includes('The side one.'));
    expect(toOperator!.html).not.toContain('<img src=x');
    expect(toOperator!.html).toContain('&lt;img src=x');
    expect(toOperator!.envelope.to).toEqual([OPERATOR]);
    expect(toOperator!.headerNames).not.toContain('bcc');
    expect(toOperator!.subject).not.toMatch(/[\r\n]/);
  });
});

describe.each(STORES)('questions and answers escaped on the pages on %s', (store) => {
  const t = useTestApp({ store });

  it('the status page, its markdown twin and the console show them as text', async () => {
    const id = await submit(t);
    const asked = await ask(t, id, `Door? ${HOSTILE}`);
    await answer(t, id, asked.question_id, `Side. ${HOSTILE}`);
    await ask(t, id, `Second </textarea><script>alert(3)</script>`);
    const status = await (await fetch(`${t.url}/tasks?id=${id}`)).text();
    expect(status).not.toContain('<script>alert');
    expect(status).not.toContain('<img src=x');
    expect(status).toContain('&lt;script&gt;alert(1)');
    const markdown = await (await fetch(`${t.url}/tasks?id=${id}`, { headers: { accept: 'text/markdown' } })).text();
    expect(markdown).toContain('```');
    const { cookie } = await signIn(t);
    const console = await (await fetch(`${t.url}/operator/tasks/${id}`, { headers: { cookie } })).text();
    expect(console).not.toContain('<script>alert');
    expect(console).not.toContain('<img src=x');
    expect(console).toContain('&lt;/textarea&gt;');
  });
});
