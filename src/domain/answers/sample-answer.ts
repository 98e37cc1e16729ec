/**
 * A value that satisfies a response schema of the contract's subset (contract, "Structured
 * answers"): what the development profile's stand-in operator delivers, so an agent's own CI can
 * run its parsing end to end. Prefers what the schema itself offers (`const`, `default`,
 * `examples`, the first `enum` value) over made-up values.
 *
 * A schema is the agent's input, so the sample is bounded: it stops once it would pass
 * `maxBytes` of JSON or SAMPLE_MAX_NODES values (strings are built in one step, never grown a
 * piece at a time), first with every declared property filled in, then with only what the schema
 * requires; a schema whose smallest answer is still too large gets no sample at all (undefined).
 * {@link minimumAnswerBytes} is the same measure taken before a task is accepted: the submission
 * refuses a schema no operator could answer within the request body limit.
 */

type Schema = Record<string, unknown>;

const MAX_DEPTH = 12;
const DEV_TEXT = 'Dev auto-operator sample';
/** Values (objects, arrays, strings, numbers…) in one sample. */
export const SAMPLE_MAX_NODES = 10_000;

/** The JSON an answer may take in a delivery: the request body limit less `{"status":"delivered","result":}`. */
export function answerRoom(maxBodyBytes: number): number {
  return maxBodyBytes - 32;
}

class TooLarge extends Error {}

interface Budget {
  /** JSON characters left. */
  chars: number;
  nodes: number;
  /** Only the required properties: the second, smaller try. */
  minimal: boolean;
}

/** The sample answer, or undefined when even the smallest one would pass `maxBytes` (or SAMPLE_MAX_NODES). */
export function sampleAnswer(schema: unknown, maxBytes = 64 * 1024): unknown {
  const root = isObject(schema) ? schema : {};
  for (const minimal of [false, true]) {
    try {
      return sample(root, root, 0, { chars: maxBytes, nodes: SAMPLE_MAX_NODES, minimal });
    } catch (error) {
      if (!(error instanceof TooLarge)) throw error;
    }
  }
  return undefined;
}

function isObject(value: unknown): value is Schema {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function charge(budget: Budget, chars: number, nodes = 1): void {
  budget.chars -= chars;
  budget.nodes -= nodes;
  if (budget.chars < 0 || budget.nodes < 0) throw new TooLarge();
}

/** A value the schema names itself, charged at its JSON size. */
function given(value: unknown, budget: Budget): unknown {
  charge(budget, JSON.stringify(value ?? null).length);
  return value;
}

function resolve(schema: Schema, root: Schema): Schema {
  const ref = schema.$ref;
  if (typeof ref !== 'string' || !ref.startsWith('#/$defs/')) return schema;
  const defs = isObject(root.$defs) ? root.$defs : {};
  const target = defs[decodeURIComponent(ref.slice('#/$defs/'.length)).replace(/~1/g, '/').replace(/~0/g, '~')];
  return isObject(target) ? { ...target, ...withoutKey(schema, '$ref') } : {};
}

function typeOf(schema: Schema): unknown {
  return Array.isArray(schema.type) ? (schema.type.find((t) => t !== 'null') ?? schema.type[0]) : schema.type;
}

function sample(input: Schema, root: Schema, depth: number, budget: Budget): unknown {
  const schema = resolve(input, root);
  if (depth > MAX_DEPTH) return given(null, budget);
  if ('const' in schema) return given(schema.const, budget);
  if ('default' in schema) return given(schema.default, budget);
  if (Array.isArray(schema.examples) && schema.examples.length > 0) return given(schema.examples[0], budget);
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return given(schema.enum[0], budget);
  for (const key of ['oneOf', 'anyOf'] as const) {
    const branches = schema[key];
    if (Array.isArray(branches) && branches.length > 0 && isObject(branches[0]))
      return sample({ ...withoutKey(schema, key), ...branches[0] }, root, depth + 1, budget);
  }
  switch (typeOf(schema)) {
    case 'object':
      return sampleObject(schema, root, depth, budget);
    case 'array':
      return sampleArray(schema, root, depth, budget);
    case 'string':
      return given(sampleString(schema, budget), budget);
    case 'integer':
      return given(sampleNumber(schema, true), budget);
    case 'number':
      return given(sampleNumber(schema, false), budget);
    case 'boolean':
      return given(true, budget);
    case 'null':
      return given(null, budget);
    default:
      return isObject(schema.properties) ? sampleObject(schema, root, depth, budget) : given(DEV_TEXT, budget);
  }
}

function withoutKey(schema: Schema, key: string): Schema {
  return Object.fromEntries(Object.entries(schema).filter(([k]) => k !== key));
}

function requiredOf(schema: Schema): Set<string> {
  return new Set(Array.isArray(schema.required) ? schema.required.filter((name): name is string => typeof name === 'string') : []);
}

function sampleObject(schema: Schema, root: Schema, depth: number, budget: Budget): Record<string, unknown> {
  charge(budget, 2);
  const properties = isObject(schema.properties) ? schema.properties : {};
  const required = requiredOf(schema);
  const result: Record<string, unknown> = {};
  // Every declared property is filled in on the first try: a fuller answer exercises the agent's
  // parsing more. The second try keeps only the required ones.
  for (const [name, sub] of Object.entries(properties)) {
    if (!isObject(sub) || (budget.minimal && !required.has(name))) continue;
    charge(budget, JSON.stringify(name).length + 2, 0);
    result[name] = sample(sub, root, depth + 1, budget);
  }
  return result;
}

function sampleArray(schema: Schema, root: Schema, depth: number, budget: Budget): unknown[] {
  charge(budget, 2);
  const prefix = Array.isArray(schema.prefixItems) ? schema.prefixItems.filter(isObject) : [];
  const items = isObject(schema.items) ? schema.items : undefined;
  const min = typeof schema.minItems === 'number' ? schema.minItems : 0;
  const max = typeof schema.maxItems === 'number' ? schema.maxItems : Number.POSITIVE_INFINITY;
  const wanted = Math.min(budget.minimal ? min : Math.max(min, prefix.length, items ? 1 : 0), max);
  const result: unknown[] = [];
  for (let i = 0; i < wanted; i++) {
    const sub = prefix[i] ?? items;
    if (sub === undefined) break;
    charge(budget, 1, 0);
    result.push(sample(sub, root, depth + 1, budget));
  }
  return result;
}

const FORMATS: Record<string, string> = {
  date: '2026-01-02',
  'date-time': '2026-01-02T09:00:00Z',
  time: '09:00:00Z',
  email: 'someone@example.com',
  uri: 'https://example.com/',
};

function sampleString(schema: Schema, budget: Budget): string {
  const format = typeof schema.format === 'string' ? FORMATS[schema.format] : undefined;
  if (format !== undefined) return format;
  const min = typeof schema.minLength === 'number' ? schema.minLength : 0;
  const max = typeof schema.maxLength === 'number' ? schema.maxLength : Number.POSITIVE_INFINITY;
  // Checked before anything is built: a minLength of millions costs nothing.
  if (min > budget.chars) throw new TooLarge();
  const filler = ' sample';
  const text = min <= DEV_TEXT.length ? DEV_TEXT : DEV_TEXT + filler.repeat(Math.ceil((min - DEV_TEXT.length) / filler.length));
  return text.length > max ? text.slice(0, max) : text;
}

function sampleNumber(schema: Schema, integer: boolean): number {
  const num = (key: string) => (typeof schema[key] === 'number' ? (schema[key] as number) : undefined);
  const step = num('multipleOf') ?? (integer ? 1 : undefined);
  let low = num('minimum') ?? (num('exclusiveMinimum') !== undefined ? (num('exclusiveMinimum') as number) + (step ?? 1) : undefined);
  const high = num('maximum') ?? (num('exclusiveMaximum') !== undefined ? (num('exclusiveMaximum') as number) - (step ?? 1) : undefined);
  low ??= high !== undefined ? Math.min(0, high) : 0;
  let value = low;
  if (step !== undefined) value = Math.ceil(value / step) * step;
  if (num('exclusiveMinimum') !== undefined && value <= (num('exclusiveMinimum') as number)) value += step ?? 1;
  if (integer) value = Math.ceil(value);
  return value;
}

/**
 * A lower bound of the JSON size of any value valid against the schema, saturating at `cap`: what
 * its smallest answer costs. Counts only what the schema forces (required properties, minItems,
 * minLength, const and enum values); follows `$ref`s; bounded by the vetted schema's depth and
 * expansion (response-schema.ts), and never builds anything.
 */
export function minimumAnswerBytes(schema: unknown, cap: number): number {
  const root = isObject(schema) ? schema : {};
  return Math.min(minimumOf(root, root, 0, cap), cap);
}

function minimumOf(input: Schema, root: Schema, depth: number, cap: number): number {
  const schema = resolve(input, root);
  if (depth > MAX_DEPTH) return 0;
  if ('const' in schema) return jsonLength(schema.const, cap);
  let bound = 0;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) bound = Math.min(...schema.enum.map((value) => jsonLength(value, cap)));
  for (const key of ['oneOf', 'anyOf'] as const) {
    const branches = schema[key];
    if (Array.isArray(branches) && branches.length > 0) {
      const rest = withoutKey(schema, key);
      bound = Math.max(bound, Math.min(...branches.map((branch) => (isObject(branch) ? minimumOf({ ...rest, ...branch }, root, depth + 1, cap) : 0))));
      return bound;
    }
  }
  const types = Array.isArray(schema.type) ? schema.type : schema.type === undefined ? [isObject(schema.properties) ? 'object' : undefined] : [schema.type];
  return Math.max(bound, Math.min(...types.map((type) => minimumOfType(type, schema, root, depth, cap))));
}

function minimumOfType(type: unknown, schema: Schema, root: Schema, depth: number, cap: number): number {
  const count = (key: string) => (typeof schema[key] === 'number' ? (schema[key] as number) : 0);
  switch (type) {
    case 'string':
      return Math.min(count('minLength') + 2, cap);
    case 'array': {
      const prefix = Array.isArray(schema.prefixItems) ? schema.prefixItems : [];
      const items = isObject(schema.items) ? schema.items : {};
      const n = count('minItems');
      let size = 2 + Math.max(n - 1, 0);
      for (let i = 0; i < Math.min(n, prefix.length) && size < cap; i++) {
        const sub = prefix[i];
        size += isObject(sub) ? minimumOf(sub, root, depth + 1, cap) : 0;
      }
      if (n > prefix.length && size < cap) size += (n - prefix.length) * minimumOf(items, root, depth + 1, cap);
      return Math.min(size, cap);
    }
    case 'object': {
      const properties = isObject(schema.properties) ? schema.properties : {};
      const extra = isObject(schema.additionalProperties) ? schema.additionalProperties : {};
      let size = 2;
      for (const name of requiredOf(schema)) {
        if (size >= cap) break;
        const sub = Object.hasOwn(properties, name) ? properties[name] : extra;
        size += JSON.stringify(name).length + 2 + (isObject(sub) ? minimumOf(sub, root, depth + 1, cap) : 0);
      }
      return Math.min(size, cap);
    }
    case 'null':
    case 'boolean':
      return 4;
    default:
      return 1;
  }
}

function jsonLength(value: unknown, cap: number): number {
  return Math.min(JSON.stringify(value ?? null).length, cap);
}
