import { describe, expect, it } from 'vitest';
import { RESPONSE_SCHEMA_MAX_EXPANDED, vetResponseSchema } from '../src/domain/answers/response-schema.js';
import { compileResponseSchema, resultProblems } from '../src/domain/answers/response-validator.js';
import { isAppError } from '../src/domain/errors.js';
import { type Json, patch, patchOk, submit } from './operator.support.js';
import { postJson, useTestApp, validTask } from './support/app.js';

/** A seeded generator, so a failure names the case that produced it. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

/** Hostile shapes: deep nesting, wide alternatives, huge enums, reference chains and loops. */
function hostileSchema(rnd: () => number): Json {
  const pick = <T>(items: T[]): T => items[Math.floor(rnd() * items.length)] as T;
  const defs: Json = {};
  const names = Array.from({ length: 1 + Math.floor(rnd() * (rnd() < 0.5 ? 3 : 12)) }, (_, i) => `d${i}`);
  let budget = 40;
  let current = -1;
  // Mostly references to later definitions (acyclic), sometimes to any (a loop to refuse).
  const ref = () => ({ $ref: `#/$defs/${rnd() < 0.995 ? (names[current + 1 + Math.floor(rnd() * (names.length - current - 1))] ?? names[0]) : pick(names)}` });
  const node = (depth: number): unknown => {
    budget -= 1;
    if (depth > (rnd() < 0.5 ? 3 : 14) || budget <= 0 || rnd() < 0.15)
      return pick<unknown>([{ type: 'string' }, true, ref(), { enum: Array.from({ length: rnd() < 0.02 ? 4000 : 3 }, (_, i) => i) }]);
    switch (pick(['object', 'array', 'oneOf', 'anyOf', 'ref', 'prefix'])) {
      case 'object':
        return { type: 'object', properties: { a: node(depth + 1), b: node(depth + 1) }, required: ['a'] };
      case 'array':
        return { type: 'array', items: node(depth + 1), maxItems: 5 };
      case 'oneOf':
      case 'anyOf':
        return { [pick(['oneOf', 'anyOf'])]: Array.from({ length: 1 + Math.floor(rnd() * 6) }, () => node(depth + 1)) };
      case 'prefix':
        return { type: 'array', prefixItems: [node(depth + 1)], minItems: 1, items: false };
      default:
        return ref();
    }
  };
  // Each definition refers to the next ones twice: expansion doubles at every step unless refused.
  for (const [i, name] of names.entries()) {
    current = i;
    budget = 40;
    defs[name] =
      rnd() < 0.5 ? node(1) : i + 1 < names.length ? { anyOf: [{ $ref: `#/$defs/${names[i + 1]}` }, { $ref: `#/$defs/${names[i + 1]}` }] } : { type: 'string' };
  }
  current = -1;
  return { type: 'object', properties: { root: node(1) }, $defs: defs };
}

describe('hostile response schemas', () => {
  it('are refused or stay within the bounds of their size, never crashing the validator (fuzz, 200 cases)', () => {
    let accepted = 0;
    for (let seed = 1; seed <= 200; seed++) {
      const schema = hostileSchema(random(seed));
      const vetting = vetResponseSchema(schema);
      // Each node of the document is visited once, however its references fan out.
      expect(vetting.nodes, `seed ${seed}`).toBeLessThanOrEqual(JSON.stringify(schema).length);
      expect(vetting.expanded, `seed ${seed}`).toBeLessThanOrEqual(RESPONSE_SCHEMA_MAX_EXPANDED + 1);
      try {
        const validate = compileResponseSchema(schema);
        accepted += 1;
        expect(vetting.problems, `seed ${seed}`).toEqual([]);
        expect(vetting.expanded, `seed ${seed}`).toBeLessThanOrEqual(RESPONSE_SCHEMA_MAX_EXPANDED);
        validate({ root: { a: [1, 'x', { a: null }], b: 'y' } });
        expect(resultProblems(schema, 'not an object')).toContain('result: must be an object');
      } catch (error) {
        if (!isAppError(error)) throw error;
        if (process.env.FUZZ_DEBUG) process.stderr.write(`${seed} ${(error.extras.details as string[])[0]}\n`);
        expect(error.code).toBe('validation_failed');
        expect((error.extras.details as string[]).every((d) => d.startsWith('response_schema'))).toBe(true);
      }
    }
    // The generator is hostile, not hopeless: some schemas pass and are exercised above.
    expect(accepted).toBeGreaterThan(0);
  });

  it('refuses a doubling chain of references by its expanded size, before compiling it', () => {
    const defs: Json = {};
    for (let i = 0; i < 40; i++)
      defs[`d${i}`] = i === 39 ? { type: 'string' } : { type: 'object', properties: { l: { $ref: `#/$defs/d${i + 1}` }, r: { $ref: `#/$defs/d${i + 1}` } } };
    const vetting = vetResponseSchema({ type: 'object', properties: { x: { $ref: '#/$defs/d0' } }, $defs: defs });
    expect(vetting.problems.join('\n')).toMatch(/nests|expands to more than/);
    expect(vetting.nodes).toBeLessThan(200);
  });

  it('refuses self-references of every shape', () => {
    for (const defs of [
      { a: { $ref: '#/$defs/a' } },
      { a: { items: { $ref: '#/$defs/b' } }, b: { oneOf: [{ $ref: '#/$defs/a' }] } },
      { 'a/b': { $ref: '#/$defs/a~1b' } },
    ]) {
      const { problems } = vetResponseSchema({
        type: 'object',
        properties: { x: { $ref: `#/$defs/${Object.keys(defs)[0]?.replace('/', '~1')}` } },
        $defs: defs,
      });
      expect(problems.join('\n')).toContain('cyclic $ref');
    }
  });
});

describe('hostile schemas and results through HTTP', () => {
  const t = useTestApp({ store: 'sqlite' });

  it('answers a huge enum, deep nesting and a __proto__ key with 422 or a working task, never a 500', async () => {
    const cases: unknown[] = [
      { type: 'object', properties: { e: { enum: Array.from({ length: 3000 }, (_, i) => i) } } },
      { type: 'object', properties: { a: { type: 'object', properties: { constructor: { const: { toString: 1 } } } } } },
      { type: 'object', default: { a: 1 }, examples: [{}], title: '<script>alert(1)</script>' },
      { type: 'object', properties: { n: { type: 'number', multipleOf: 1e-300 } } },
    ];
    for (const schema of cases) {
      const res = await postJson(`${t.url}/api/v1/tasks`, validTask({ response_schema: schema }));
      expect([202, 422]).toContain(res.status);
    }
    // A __proto__ key is refused by the JSON parser itself (400 invalid_json), before any schema code.
    const proto = await postJson(
      `${t.url}/api/v1/tasks`,
      JSON.stringify(validTask({ response_schema: { type: 'object' } })).replace('"type"', '"__proto__":{},"type"'),
    );
    expect(proto.status).toBe(400);
  });

  it('validates a result whose keys shadow Object.prototype as ordinary properties', async () => {
    const id = await submit(t, {
      response_schema: { type: 'object', properties: { constructor: { type: 'integer' }, toString: { type: 'integer' } }, additionalProperties: false },
    });
    await patchOk(t, id, { status: 'accepted' });
    const bad = await patch(t, id, { status: 'delivered', result: { hasOwnProperty: 1, constructor: 'x' } });
    // Before ownProperties, Ajv also read the inherited toString and refused it as "must be an integer".
    const details = ((await bad.json()) as Json).details as string[];
    expect([...details].sort()).toEqual(['result/constructor: must be an integer', 'result/hasOwnProperty: is not a property of the schema']);
    const done = await patchOk(t, id, { status: 'delivered', result: { constructor: 3, toString: 4 } });
    expect(done.result).toEqual({ constructor: 3, toString: 4 });
  });
});
