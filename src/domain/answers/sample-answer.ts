/**
 * A value that satisfies a response schema of the contract's subset (contract, "Structured
 * answers"): what the development profile's stand-in operator delivers, so an agent's own CI can
 * run its parsing end to end. Pure and bounded: `$ref`s are followed to a fixed depth, arrays get
 * their minimum number of items. Prefers what the schema itself offers (`const`, `default`,
 * `examples`, the first `enum` value) over made-up values.
 */

type Schema = Record<string, unknown>;

const MAX_DEPTH = 12;
const DEV_TEXT = 'Dev auto-operator sample';

export function sampleAnswer(schema: unknown): unknown {
  const root = isObject(schema) ? schema : {};
  return sample(root, root, 0);
}

function isObject(value: unknown): value is Schema {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function resolve(schema: Schema, root: Schema): Schema {
  const ref = schema.$ref;
  if (typeof ref !== 'string' || !ref.startsWith('#/$defs/')) return schema;
  const defs = isObject(root.$defs) ? root.$defs : {};
  const target = defs[decodeURIComponent(ref.slice('#/$defs/'.length)).replace(/~1/g, '/').replace(/~0/g, '~')];
  return isObject(target) ? { ...target, ...Object.fromEntries(Object.entries(schema).filter(([k]) => k !== '$ref')) } : {};
}

function sample(input: Schema, root: Schema, depth: number): unknown {
  const schema = resolve(input, root);
  if (depth > MAX_DEPTH) return null;
  if ('const' in schema) return schema.const;
  if ('default' in schema) return schema.default;
  if (Array.isArray(schema.examples) && schema.examples.length > 0) return schema.examples[0];
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
  for (const key of ['oneOf', 'anyOf'] as const) {
    const branches = schema[key];
    if (Array.isArray(branches) && branches.length > 0 && isObject(branches[0])) return sample({ ...withoutKey(schema, key), ...branches[0] }, root, depth + 1);
  }
  const type = Array.isArray(schema.type) ? (schema.type.find((t) => t !== 'null') ?? schema.type[0]) : schema.type;
  switch (type) {
    case 'object':
      return sampleObject(schema, root, depth);
    case 'array':
      return sampleArray(schema, root, depth);
    case 'string':
      return sampleString(schema);
    case 'integer':
      return sampleNumber(schema, true);
    case 'number':
      return sampleNumber(schema, false);
    case 'boolean':
      return true;
    case 'null':
      return null;
    default:
      return isObject(schema.properties) ? sampleObject(schema, root, depth) : DEV_TEXT;
  }
}

function withoutKey(schema: Schema, key: string): Schema {
  return Object.fromEntries(Object.entries(schema).filter(([k]) => k !== key));
}

function sampleObject(schema: Schema, root: Schema, depth: number): Record<string, unknown> {
  const properties = isObject(schema.properties) ? schema.properties : {};
  const result: Record<string, unknown> = {};
  // Every declared property is filled in: a fuller answer exercises the agent's parsing more.
  for (const [name, sub] of Object.entries(properties)) if (isObject(sub)) result[name] = sample(sub, root, depth + 1);
  return result;
}

function sampleArray(schema: Schema, root: Schema, depth: number): unknown[] {
  const prefix = Array.isArray(schema.prefixItems) ? schema.prefixItems.filter(isObject) : [];
  const items = isObject(schema.items) ? schema.items : undefined;
  const min = typeof schema.minItems === 'number' ? schema.minItems : 1;
  const max = typeof schema.maxItems === 'number' ? schema.maxItems : Number.POSITIVE_INFINITY;
  const result = prefix.map((sub) => sample(sub, root, depth + 1));
  const wanted = Math.min(Math.max(min, result.length, items ? 1 : 0), max, 100);
  while (items && result.length < wanted) result.push(sample(items, root, depth + 1));
  return result.slice(0, Math.min(result.length, max));
}

const FORMATS: Record<string, string> = {
  date: '2026-01-02',
  'date-time': '2026-01-02T09:00:00Z',
  time: '09:00:00Z',
  email: 'someone@example.com',
  uri: 'https://example.com/',
};

function sampleString(schema: Schema): string {
  const format = typeof schema.format === 'string' ? FORMATS[schema.format] : undefined;
  let text = format ?? DEV_TEXT;
  const min = typeof schema.minLength === 'number' ? schema.minLength : 0;
  const max = typeof schema.maxLength === 'number' ? schema.maxLength : Number.POSITIVE_INFINITY;
  if (format === undefined) {
    while ([...text].length < min) text += ' sample';
    if ([...text].length > max) text = [...text].slice(0, max).join('');
  }
  return text;
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
