import { describe, expect, it } from 'vitest';
import { answerRoom, minimumAnswerBytes, SAMPLE_MAX_NODES, sampleAnswer } from '../src/domain/answers/sample-answer.js';
import { postJson, useTestApp, validTask } from './support/app.js';
import { waitUntil } from './support/smtp.js';

/**
 * Hostile response schemas against the development profile's stand-in operator (issue 49, item 5):
 * its sample answer is bounded (characters and values, strings built in one step), and a schema
 * whose smallest answer is larger than the request body limit is refused at submission.
 */

const DEV = { DEV_MODE: 'true', BASE_URL: 'http://localhost:8080' };
type Json = Record<string, unknown>;

/** Four arrays nested, each of at least `n` items: n⁴ values at the bottom. */
function nestedArrays(n: number): Json {
  let inner: Json = { type: 'integer' };
  for (let i = 0; i < 4; i++) inner = { type: 'array', minItems: n, items: inner };
  return { type: 'object', required: ['grid'], properties: { grid: inner } };
}

const HUGE_STRING = { type: 'object', required: ['text'], properties: { text: { type: 'string', minLength: 300_000 } } };

describe('submission of a schema no delivery could carry', () => {
  const t = useTestApp({ env: DEV });

  for (const [name, schema] of [
    ['a string of at least 300,000 characters', HUGE_STRING],
    ['four nested arrays of at least 100 items', nestedArrays(100)],
    [
      'two required strings of 40,000 characters each',
      { type: 'object', required: ['a', 'b'], properties: { a: { type: 'string', minLength: 40_000 }, b: { type: 'string', minLength: 40_000 } } },
    ],
    [
      'a required $ref to an array of 70,000 nulls',
      { type: 'object', required: ['x'], $defs: { n: { type: 'array', minItems: 70_000, items: { type: 'null' } } }, properties: { x: { $ref: '#/$defs/n' } } },
    ],
  ] as const) {
    it(`is 422 validation_failed naming response_schema and the body limit: ${name}`, async () => {
      const res = await postJson(`${t.url}/api/v1/tasks`, validTask({ delivery: 'status_poll', contact_email: undefined, response_schema: schema }));
      expect(res.status).toBe(422);
      const body = (await res.json()) as { error: string; details: string[] };
      expect(body.error).toBe('validation_failed');
      expect(body.details.join('\n')).toMatch(/^response_schema: its smallest valid answer is more than \d+ bytes.*request body limit is 65536 bytes/m);
    });
  }

  it('accepts a large schema whose smallest answer fits (optional parts do not count)', async () => {
    const schema = {
      type: 'object',
      required: ['text'],
      properties: {
        text: { type: 'string', minLength: 30_000 },
        extra: { type: 'string', minLength: 1_000_000 },
        rows: { type: 'array', minItems: 1000, items: { type: 'string' } },
      },
    };
    const res = await postJson(`${t.url}/api/v1/tasks`, validTask({ delivery: 'status_poll', contact_email: undefined, response_schema: schema }));
    expect(res.status).toBe(202);
  });
});

describe('the sample answer of a hostile schema', () => {
  it('gives up at once on a 300,000-character minimum, and on four nested arrays of 100 (no answer fits)', () => {
    expect(sampleAnswer(HUGE_STRING, 65_000)).toBeUndefined();
    expect(sampleAnswer(nestedArrays(100), 65_000)).toBeUndefined();
    expect(sampleAnswer({ type: 'object', required: ['s'], properties: { s: { type: 'string', minLength: 50_000_000 } } }, 65_000)).toBeUndefined();
  });

  it('stays within the node bound where each value is tiny', () => {
    // 100⁴ nulls would fit no budget: the node bound stops it long before the characters do.
    const tiny = nestedArrays(100);
    expect(sampleAnswer(tiny, Number.MAX_SAFE_INTEGER)).toBeUndefined();
    const fits = nestedArrays(9); // 6,561 integers, under SAMPLE_MAX_NODES
    const answer = sampleAnswer(fits, Number.MAX_SAFE_INTEGER) as { grid: number[][][][] };
    expect(answer.grid.flat(3)).toHaveLength(9 ** 4);
    expect(9 ** 4).toBeLessThan(SAMPLE_MAX_NODES);
  });

  it('falls back to the required properties when the fuller answer would pass the limit', () => {
    const schema = {
      type: 'object',
      required: ['text'],
      properties: { text: { type: 'string', minLength: 30_000 }, extra: { type: 'string', minLength: 40_000 } },
    };
    const answer = sampleAnswer(schema, 65_000) as Json;
    expect(Object.keys(answer)).toEqual(['text']);
    expect(String(answer.text).length).toBeGreaterThanOrEqual(30_000);
    expect(JSON.stringify(answer).length).toBeLessThanOrEqual(65_000);
  });

  it('measures the smallest answer without building it, saturating at the cap', () => {
    expect(minimumAnswerBytes(nestedArrays(100), 1_000_000)).toBe(1_000_000);
    expect(minimumAnswerBytes(HUGE_STRING, 10_000_000)).toBeGreaterThan(300_000);
    expect(minimumAnswerBytes({ type: 'object', properties: { a: { type: 'string', minLength: 1e9 } } }, 100)).toBe(2);
    expect(answerRoom(65_536)).toBeLessThan(65_536);
  });
});

describe('DEV_AUTO_OPERATOR=deliver on a schema at the edge of the limit', () => {
  const t = useTestApp({ background: true, env: { ...DEV, DEV_AUTO_OPERATOR: 'deliver', DEV_AUTO_OPERATOR_DELAY_MS: '0' } });

  it('delivers a valid answer (the required part only) promptly', async () => {
    const schema = {
      type: 'object',
      required: ['text'],
      properties: { text: { type: 'string', minLength: 60_000 }, more: { type: 'string', minLength: 10_000 } },
    };
    const res = await postJson(`${t.url}/api/v1/tasks`, validTask({ delivery: 'status_poll', contact_email: undefined, response_schema: schema }));
    expect(res.status).toBe(202);
    const { task_id: id } = (await res.json()) as { task_id: string };
    const task = await waitUntil(
      async () => {
        const now = (await (await fetch(`${t.url}/api/v1/tasks/${id}`)).json()) as Json;
        return now.status === 'delivered' ? now : undefined;
      },
      10_000,
      'the delivery',
    );
    const result = task.result as { text: string };
    expect(Object.keys(result)).toEqual(['text']);
    expect(result.text.length).toBeGreaterThanOrEqual(60_000);
  });
});
