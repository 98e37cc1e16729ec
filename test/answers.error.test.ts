import { describe, expect, it } from 'vitest';
import { EXAMPLE_RESPONSE_SCHEMA, EXAMPLE_RESULT } from '../src/domain/answers/answer-example.js';
import { type Json, patch, patchOk, submit } from './operator.support.js';
import { postJson, STORES, useTestApp, validTask } from './support/app.js';

function nested(levels: number): Json {
  let schema: Json = { type: 'string' };
  for (let i = 1; i < levels; i++) schema = { type: 'object', properties: { inner: schema } };
  return schema;
}

describe.each(STORES)('structured answers refused on %s', (store) => {
  const t = useTestApp({ store });

  async function refusal(schema: unknown): Promise<string[]> {
    const res = await postJson(`${t.url}/api/v1/tasks`, validTask({ response_schema: schema }));
    const body = (await res.json()) as Json;
    expect(res.status, JSON.stringify(body)).toBe(422);
    expect(body.error).toBe('validation_failed');
    return body.details as string[];
  }

  it.each([
    ['not an object', 'a string', 'response_schema must be an object'],
    ['a top level that is not an object', { type: 'array' }, 'response_schema/type: the top level must be "type": "object"'],
    ['pattern', { type: 'object', properties: { code: { type: 'string', pattern: '^a+$' } } }, 'response_schema/properties/code/pattern: keyword "pattern"'],
    ['an unknown keyword', { type: 'object', propertyNames: { maxLength: 3 } }, 'response_schema/propertyNames: keyword "propertyNames"'],
    [
      'a remote $ref',
      { type: 'object', properties: { a: { $ref: 'https://example.com/s.json' } } },
      'response_schema/properties/a/$ref: only local references',
    ],
    ['a $ref to the root', { type: 'object', properties: { a: { $ref: '#' } } }, 'response_schema/properties/a/$ref: only local references'],
    ['a $ref to nothing', { type: 'object', properties: { a: { $ref: '#/$defs/none' } } }, 'response_schema/properties/a/$ref: "#/$defs/none" is not defined'],
    [
      'a cyclic $ref',
      {
        type: 'object',
        properties: { a: { $ref: '#/$defs/a' } },
        $defs: { a: { type: 'object', properties: { b: { $ref: '#/$defs/b' } } }, b: { anyOf: [{ $ref: '#/$defs/a' }] } },
      },
      'response_schema/$defs/a: cyclic $ref',
    ],
    [
      'an unknown format',
      { type: 'object', properties: { a: { type: 'string', format: 'ipv4' } } },
      'response_schema/properties/a/format: format must be one of',
    ],
    ['too deep', nested(11), 'response_schema: nests 11 levels'],
    ['too big', { type: 'object', description: 'x'.repeat(17_000) }, 'response_schema: must be at most 16384 bytes'],
    ['a keyword Ajv refuses in strict mode', { type: 'object', properties: { a: { type: 'string', minimum: 3 } } }, 'response_schema'],
  ])('refuses a schema with %s, naming response_schema and the keyword', async (_, schema, expected) => {
    const details = await refusal(schema);
    expect(
      details.some((d) => d.startsWith(expected)),
      details.join('\n'),
    ).toBe(true);
  });

  it('accepts ten levels and keys that need escaping in pointers', async () => {
    await submit(t, { response_schema: nested(10) });
    const details = await refusal({ type: 'object', properties: { 'a/b': { type: 'string', pattern: 'x' } } });
    expect(details).toContain(
      'response_schema/properties/a~1b/pattern: keyword "pattern" is not supported (supported: type, properties, required, additionalProperties, items, prefixItems, minItems, maxItems, enum, const, minimum, maximum, exclusiveMinimum, exclusiveMaximum, multipleOf, minLength, maxLength, format, title, description, default, examples, oneOf, anyOf, $defs, $ref)',
    );
  });

  it('lists every violation of a result with its JSON pointer, and changes nothing', async () => {
    const id = await submit(t, {
      response_schema: {
        type: 'object',
        properties: {
          count: { type: 'integer' },
          when: { type: 'string', format: 'date' },
          tags: { type: 'array', items: { enum: ['a', 'b'] } },
          seen: { type: 'boolean' },
        },
        required: ['count', 'seen'],
        additionalProperties: false,
      },
    });
    await patchOk(t, id, { status: 'accepted' });
    const res = await patch(t, id, { status: 'delivered', result: { count: 1.5, when: 'tomorrow', tags: ['a', 'c'], extra: 1 } });
    expect(res.status).toBe(422);
    const body = (await res.json()) as Json;
    expect(body.error).toBe('validation_failed');
    expect(body.details).toEqual(
      expect.arrayContaining([
        'result/seen: is required',
        'result/extra: is not a property of the schema',
        'result/count: must be an integer',
        'result/when: must be a date (YYYY-MM-DD)',
        'result/tags/1: must be one of: "a", "b"',
      ]),
    );
    const task = (await (await fetch(`${t.url}/api/v1/tasks/${id}`)).json()) as Json;
    expect(task.status).toBe('accepted');
    expect(task.result).toBeNull();
    const notObject = await patch(t, id, { status: 'delivered', result: [1] });
    expect(((await notObject.json()) as Json).details).toEqual(['result: must be an object']);
  });

  it('says which to send: result on a task without a schema, operator_notes on one with a schema', async () => {
    const plain = await submit(t);
    await patchOk(t, plain, { status: 'accepted' });
    const withResult = await patch(t, plain, { status: 'delivered', result: { open: true } });
    expect(withResult.status).toBe(422);
    expect(((await withResult.json()) as Json).details).toEqual([expect.stringContaining('send operator_notes')]);

    const typed = await submit(t, { response_schema: EXAMPLE_RESPONSE_SCHEMA });
    await patchOk(t, typed, { status: 'accepted' });
    const withNotes = await patch(t, typed, { status: 'delivered', operator_notes: 'It is open.' });
    expect(withNotes.status).toBe(422);
    expect(((await withNotes.json()) as Json).details).toEqual([expect.stringContaining('send result')]);
    const both = await patch(t, typed, { status: 'delivered', operator_notes: 'It is open.', result: EXAMPLE_RESULT });
    expect(both.status).toBe(422);
    const early = await patch(t, typed, { result: EXAMPLE_RESULT });
    expect(((await early.json()) as Json).details).toEqual(['result is sent with status "delivered" (it is the deliverable)']);
    // Working notes on an open task with a schema are still notes.
    await patchOk(t, typed, { operator_notes: 'Calling them at noon.' });
    const done = await patchOk(t, typed, { status: 'delivered', result: EXAMPLE_RESULT });
    expect(done.result).toEqual(EXAMPLE_RESULT);
  });
});
