import { Ajv2020 } from 'ajv/dist/2020.js';
import formats from 'ajv-formats';
import { describe, expect, it } from 'vitest';
import { sampleAnswer } from '../src/domain/answers/sample-answer.js';
import { cannedDelivery } from '../src/services/runtime/dev-operator.js';
import { postJson, useTestApp, validTask } from './support/app.js';
import { waitUntil } from './support/smtp.js';
import { ACCEPT, patchTask, useReceiver } from './webhooks.support.js';

/**
 * The development profile (issue 30, item 1; contract "Agent control and development"):
 * DEV_MODE=true lifts the per-client limits and says so on every response; DEV_AUTO_OPERATOR moves
 * each task on by itself so an agent's own CI runs end to end without a person.
 */

const DEV = { DEV_MODE: 'true', BASE_URL: 'http://localhost:8080' };
type Json = Record<string, unknown>;

async function statusOf(url: string, id: string): Promise<Json> {
  return (await (await fetch(`${url}/api/v1/tasks/${id}`)).json()) as Json;
}

describe('DEV_MODE on the contract limits', () => {
  const t = useTestApp({ limits: 'production', env: DEV });

  it('lifts the per-client limits a developer meets on the second try (status_poll 1/day, 3 tasks/hour)', async () => {
    for (let i = 0; i < 6; i++) {
      const res = await postJson(`${t.url}/api/v1/tasks`, validTask({ delivery: 'status_poll', contact_email: undefined }));
      expect(res.status, `submission ${i + 1}`).toBe(202);
    }
    for (let i = 0; i < 5; i++) {
      const res = await postJson(`${t.url}/api/v1/messages`, { message: `Question number ${i} about my tasks.`, reply_to: 'agent@mail.example-agent.dev' });
      expect(res.status, `message ${i + 1}`).toBe(201);
    }
  });

  it('says X-Dev-Mode: true on every response: accepted, refused, not found, documents, repeated reads', async () => {
    const submitted = await postJson(`${t.url}/api/v1/tasks`, validTask());
    expect(submitted.headers.get('x-dev-mode')).toBe('true');
    const { task_id: id } = (await submitted.json()) as { task_id: string };
    const refused = await postJson(`${t.url}/api/v1/tasks`, { task_type: 'nope' });
    expect(refused.status).toBe(422);
    expect(refused.headers.get('x-dev-mode')).toBe('true');
    const missing = await fetch(`${t.url}/api/v1/tasks/task-2030-${'0'.repeat(32)}`);
    expect(missing.status).toBe(404);
    expect(missing.headers.get('x-dev-mode')).toBe('true');
    expect((await fetch(`${t.url}/openapi.json`)).headers.get('x-dev-mode')).toBe('true');
    // The second and third reads of an unchanged task are answered by the fast lane.
    for (let i = 0; i < 3; i++) {
      const read = await fetch(`${t.url}/api/v1/tasks/${id}`);
      expect(read.headers.get('x-dev-mode'), `read ${i + 1}`).toBe('true');
      const etag = read.headers.get('etag') as string;
      const again = await fetch(`${t.url}/api/v1/tasks/${id}`, { headers: { 'if-none-match': etag } });
      expect(again.status).toBe(304);
      expect(again.headers.get('x-dev-mode'), `304 ${i + 1}`).toBe('true');
    }
    expect(refused.headers.get('access-control-expose-headers')).toContain('X-Dev-Mode');
  });
});

describe('DEV_MODE out of the way of a re-run and of a local webhook receiver', () => {
  const receiver = useReceiver();
  const t = useTestApp({ limits: 'production', background: true, env: { ...DEV, MAIL_POLL_MS: '50' } });

  it('accepts the same submission again (no 409 duplicate_task): a re-run of the same script', async () => {
    const body = validTask({ description: 'Check whether the bakery at 12 Main Street is open on Sunday mornings.' });
    for (let i = 0; i < 3; i++) expect((await postJson(`${t.url}/api/v1/tasks`, body)).status, `run ${i + 1}`).toBe(202);
  });

  it('delivers webhooks to a receiver on loopback (http://127.0.0.1) without WEBHOOK_ALLOW_PRIVATE', async () => {
    const res = await postJson(`${t.url}/api/v1/tasks`, validTask({ callback_url: `${receiver.url}/ok-dev` }));
    expect(res.status).toBe(202);
    const { task_id: id } = (await res.json()) as { task_id: string };
    await patchTask(t, id, ACCEPT);
    const [received] = await waitUntil(async () => (receiver.to('/ok-dev').length > 0 ? receiver.to('/ok-dev') : undefined), 10_000, 'the webhook');
    expect(JSON.parse(received?.body ?? '{}')).toMatchObject({ type: 'task.accepted', data: { task_id: id } });
  });
});

describe('DEV_MODE with duplicate detection and the webhook guard set explicitly', () => {
  const t = useTestApp({ limits: 'production', env: { ...DEV, DUPLICATE_WINDOW_HOURS: '24', WEBHOOK_ALLOW_PRIVATE: 'false' } });

  it('keeps them: the second identical submission is 409, a loopback callback_url 422', async () => {
    const body = validTask({ description: 'Check whether the bakery at 14 Main Street is open on Sunday mornings.' });
    expect((await postJson(`${t.url}/api/v1/tasks`, body)).status).toBe(202);
    expect((await postJson(`${t.url}/api/v1/tasks`, body)).status).toBe(409);
    const local = await postJson(`${t.url}/api/v1/tasks`, validTask({ callback_url: 'http://127.0.0.1:9/hook' }));
    expect(local.status).toBe(422);
  });
});

describe('without DEV_MODE (production behaviour)', () => {
  const t = useTestApp({ limits: 'production' });

  it('sends no X-Dev-Mode header and keeps the contract limits', async () => {
    const first = await postJson(`${t.url}/api/v1/tasks`, validTask({ delivery: 'status_poll', contact_email: undefined }));
    expect(first.status).toBe(202);
    expect(first.headers.get('x-dev-mode')).toBeNull();
    const second = await postJson(`${t.url}/api/v1/tasks`, validTask({ delivery: 'status_poll', contact_email: undefined }));
    expect(second.status).toBe(429);
  });
});

describe('DEV_AUTO_OPERATOR=deliver', () => {
  const t = useTestApp({ background: true, env: { ...DEV, DEV_AUTO_OPERATOR: 'deliver', DEV_AUTO_OPERATOR_DELAY_MS: '0' } });

  it('accepts, then delivers with a canned answer and a receipt, through the operator path', async () => {
    const res = await postJson(`${t.url}/api/v1/tasks`, validTask({ delivery: 'status_poll', contact_email: undefined }));
    const { task_id: id } = (await res.json()) as { task_id: string };
    const task = await waitUntil(
      async () => {
        const now = await statusOf(t.url, id);
        return now.status === 'delivered' ? now : undefined;
      },
      15_000,
      'the stand-in delivery',
    );
    expect(String(task.operator_notes)).toContain('development stand-in operator');
    expect(typeof task.receipt).toBe('string');
    expect((task.status_history as { status: string }[]).map((h) => h.status)).toEqual(['submitted', 'accepted', 'delivered']);
  });
});

describe('DEV_AUTO_OPERATOR=deliver with a test task', () => {
  const t = useTestApp({ background: true, env: { ...DEV, DEV_AUTO_OPERATOR: 'deliver', DEV_AUTO_OPERATOR_DELAY_MS: '0' } });

  it('delivers a task marked "test" like any other, and its notes say it was one', async () => {
    const res = await postJson(
      `${t.url}/api/v1/tasks`,
      validTask({ delivery: 'status_poll', contact_email: undefined, description: 'Webhook test: check whether the bakery on Main Street opens on Sunday.' }),
    );
    expect(res.status).toBe(202);
    const submitted = (await res.json()) as { task_id: string; message: string };
    expect(submitted.message).toContain('test task');
    const task = await waitUntil(
      async () => {
        const now = await statusOf(t.url, submitted.task_id);
        return now.status === 'delivered' ? now : undefined;
      },
      10_000,
      'the stand-in delivery of a test task',
    );
    expect(String(task.operator_notes)).toContain('development stand-in operator');
    expect(String(task.operator_notes)).toContain('test task');
    expect(typeof task.receipt).toBe('string');
  });
});

describe('DEV_AUTO_OPERATOR=deliver with a response schema', () => {
  const t = useTestApp({ background: true, env: { ...DEV, DEV_AUTO_OPERATOR: 'deliver', DEV_AUTO_OPERATOR_DELAY_MS: '0' } });

  it("delivers a result valid against the task's schema, bound by the receipt like any structured answer", async () => {
    const schema = {
      type: 'object',
      required: ['open', 'hours'],
      properties: { open: { type: 'boolean' }, hours: { type: 'string', minLength: 5 }, days: { type: 'array', minItems: 2, items: { enum: ['Mon', 'Sun'] } } },
      additionalProperties: false,
    };
    const res = await postJson(`${t.url}/api/v1/tasks`, validTask({ delivery: 'status_poll', contact_email: undefined, response_schema: schema }));
    expect(res.status).toBe(202);
    const { task_id: id } = (await res.json()) as { task_id: string };
    const task = await waitUntil(async () => ((await statusOf(t.url, id)).status === 'delivered' ? statusOf(t.url, id) : undefined), 15_000, 'the delivery');
    expect(task.result).toEqual({ open: true, hours: 'Dev auto-operator sample', days: ['Mon', 'Mon'] });
    expect(task.operator_notes).toBe(JSON.stringify(task.result));
  });
});

describe('DEV_AUTO_OPERATOR=ask', () => {
  const t = useTestApp({ background: true, env: { ...DEV, DEV_AUTO_OPERATOR: 'ask', DEV_AUTO_OPERATOR_DELAY_MS: '0' } });

  it('asks a question, waits for the answer, then accepts and delivers', async () => {
    const res = await postJson(`${t.url}/api/v1/tasks`, validTask({ delivery: 'status_poll', contact_email: undefined }));
    const { task_id: id } = (await res.json()) as { task_id: string };
    const asked = await waitUntil(async () => ((await statusOf(t.url, id)).awaiting_answer === true ? statusOf(t.url, id) : undefined), 15_000, 'the question');
    const [question] = asked.questions as { question_id: string; question: string }[];
    expect(question?.question).toContain('DEV_AUTO_OPERATOR=ask');
    await new Promise((r) => setTimeout(r, 400));
    expect((await statusOf(t.url, id)).status).toBe('submitted');
    const answered = await postJson(`${t.url}/api/v1/tasks/${id}/questions/${question?.question_id}/answer`, { answer: 'Use the side entrance.' });
    expect(answered.status).toBe(200);
    const task = await waitUntil(async () => ((await statusOf(t.url, id)).status === 'delivered' ? statusOf(t.url, id) : undefined), 15_000, 'the delivery');
    expect((task.questions as { answer: string }[])[0]?.answer).toBe('Use the side entrance.');
  });
});

describe('DEV_AUTO_OPERATOR=reject and =accept', () => {
  const rejecting = useTestApp({ background: true, env: { ...DEV, DEV_AUTO_OPERATOR: 'reject', DEV_AUTO_OPERATOR_DELAY_MS: '0' } });
  const accepting = useTestApp({ background: true, env: { ...DEV, DEV_AUTO_OPERATOR: 'accept', DEV_AUTO_OPERATOR_DELAY_MS: '0' } });

  it('rejects with a reason that says who rejected it', async () => {
    const res = await postJson(`${rejecting.url}/api/v1/tasks`, validTask());
    const { task_id: id } = (await res.json()) as { task_id: string };
    const task = await waitUntil(
      async () => ((await statusOf(rejecting.url, id)).status === 'rejected' ? statusOf(rejecting.url, id) : undefined),
      15_000,
      'the rejection',
    );
    expect(String(task.operator_notes)).toContain('DEV_AUTO_OPERATOR=reject');
  });

  it('accepts with an ETA and goes no further', async () => {
    const res = await postJson(`${accepting.url}/api/v1/tasks`, validTask());
    const { task_id: id } = (await res.json()) as { task_id: string };
    const task = await waitUntil(
      async () => ((await statusOf(accepting.url, id)).status === 'accepted' ? statusOf(accepting.url, id) : undefined),
      15_000,
      'the acceptance',
    );
    expect(task.eta).toBeTruthy();
    await new Promise((r) => setTimeout(r, 600));
    expect((await statusOf(accepting.url, id)).status).toBe('accepted');
  });
});

describe('the canned answer against a response schema', () => {
  const ajv = new Ajv2020({ strict: true, allErrors: true });
  // ajv-formats is CommonJS: its default export is the plugin under Node's ESM interop.
  (formats as unknown as { default: (a: Ajv2020) => void }).default(ajv);

  const schemas: Record<string, Json> = {
    'the shop example': {
      type: 'object',
      required: ['open', 'hours'],
      properties: {
        open: { type: 'boolean', description: 'Is the shop open?' },
        hours: { type: 'string', minLength: 3, maxLength: 40 },
        checked_on: { type: 'string', format: 'date' },
      },
      additionalProperties: false,
    },
    'numbers, enums and consts': {
      type: 'object',
      required: ['count', 'price', 'mood', 'kind', 'ratio'],
      properties: {
        count: { type: 'integer', minimum: 3, maximum: 9, multipleOf: 3 },
        price: { type: 'number', exclusiveMinimum: 10, exclusiveMaximum: 20 },
        mood: { enum: ['happy', 'sad'] },
        kind: { const: 'storefront' },
        ratio: { type: 'number', maximum: -5 },
      },
    },
    'nested, arrays, $defs and oneOf': {
      type: 'object',
      required: ['visits', 'place', 'choice', 'pair'],
      $defs: { stamp: { type: 'object', required: ['at'], properties: { at: { type: 'string', format: 'date-time' }, note: { type: 'string' } } } },
      properties: {
        visits: { type: 'array', minItems: 2, maxItems: 3, items: { $ref: '#/$defs/stamp' } },
        place: {
          type: 'object',
          required: ['street', 'email'],
          properties: { street: { type: 'string', default: '12 Main Street' }, email: { type: 'string', format: 'email' } },
        },
        choice: { oneOf: [{ type: 'string', format: 'uri' }, { type: 'integer' }] },
        pair: { type: 'array', minItems: 2, prefixItems: [{ type: 'string', format: 'time' }, { type: 'boolean' }], items: false },
      },
    },
  };

  for (const [name, schema] of Object.entries(schemas)) {
    it(`is valid for ${name}`, () => {
      const answer = sampleAnswer(schema);
      const validate = ajv.compile(schema);
      expect(validate(answer), JSON.stringify(validate.errors)).toBe(true);
    });
  }

  it('the deliver step sends result for a task with a schema and a canned text for one without', () => {
    const base = { task_id: 'task-2030-x', response_schema: null, is_test: false } as unknown as Parameters<typeof cannedDelivery>[0];
    expect(cannedDelivery({ ...base, response_schema: schemas['the shop example'] } as typeof base, 65_000)).toMatchObject({
      status: 'delivered',
      result: { open: true },
    });
    expect(cannedDelivery(base, 65_000)).toMatchObject({ status: 'delivered', operator_notes: expect.stringContaining('canned answer') });
  });
});
