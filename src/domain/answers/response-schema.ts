/**
 * The response schema an agent may attach to a task (contract "Structured answers"): the subset of
 * JSON Schema 2020-12 the service accepts, checked before anything compiles it. A schema is
 * untrusted input, so this walk is iterative, visits each node of the document once, stops after
 * a bounded number of findings, and measures what the schema would cost once its `$ref`s are
 * expanded (the validator and the console's form both walk the expanded tree).
 */

export const RESPONSE_SCHEMA_MAX_BYTES = 16 * 1024;
/** Schema levels, the root being level 1, counted through `$ref`s. */
export const RESPONSE_SCHEMA_MAX_DEPTH = 10;
/**
 * Subschemas once every `$ref` is expanded. Validating a result visits at most this many schema
 * nodes per value of the result, so a chain of `$defs` each referring twice to the next (which
 * doubles at every step) is refused here instead of costing the validator or the form.
 */
export const RESPONSE_SCHEMA_MAX_EXPANDED = 500;
const MAX_PROBLEMS = 20;

export const RESPONSE_SCHEMA_KEYWORDS = [
  'type',
  'properties',
  'required',
  'additionalProperties',
  'items',
  'prefixItems',
  'minItems',
  'maxItems',
  'enum',
  'const',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'multipleOf',
  'minLength',
  'maxLength',
  'format',
  'title',
  'description',
  'default',
  'examples',
  'oneOf',
  'anyOf',
  '$defs',
  '$ref',
] as const;
const KEYWORDS: ReadonlySet<string> = new Set(RESPONSE_SCHEMA_KEYWORDS);
export const RESPONSE_SCHEMA_FORMATS = ['date', 'date-time', 'time', 'email', 'uri'] as const;
const FORMATS: ReadonlySet<string> = new Set(RESPONSE_SCHEMA_FORMATS);
const TYPES: ReadonlySet<string> = new Set(['object', 'array', 'string', 'number', 'integer', 'boolean', 'null']);
const NUMBER_KEYWORDS = ['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf'];
const COUNT_KEYWORDS = ['minItems', 'maxItems', 'minLength', 'maxLength'];
const REF = /^#\/\$defs\/([^/]+)$/;

export type JsonObject = Record<string, unknown>;

export function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** RFC 6901: `~` and `/` in a key. */
export function pointerSegment(key: string): string {
  return key.replaceAll('~', '~0').replaceAll('/', '~1');
}

function unescapeSegment(segment: string): string {
  return segment.replaceAll('~1', '/').replaceAll('~0', '~');
}

/** The `$defs` name a local reference points at, or undefined for any other reference. */
export function refTarget(ref: unknown): string | undefined {
  const match = typeof ref === 'string' ? REF.exec(ref) : null;
  return match?.[1] === undefined ? undefined : unescapeSegment(match[1]);
}

/** A schema with its `$ref` followed (one hop: definitions never refer back, vetting saw to it). */
export function resolveSchema(schema: unknown, root: JsonObject): JsonObject {
  if (!isJsonObject(schema)) return {};
  const name = refTarget(schema.$ref);
  if (name === undefined) return schema;
  const defs = isJsonObject(root.$defs) ? root.$defs : {};
  const { $ref: _ref, ...siblings } = schema;
  return { ...resolveSchema(defs[name], root), ...siblings };
}

/** The type a field is rendered as: the first non-null of `type`, else guessed from its keywords. */
export function fieldType(schema: JsonObject): string | undefined {
  const types = (Array.isArray(schema.type) ? schema.type : [schema.type]).filter((t): t is string => typeof t === 'string' && t !== 'null');
  if (types[0] !== undefined) return types[0];
  if (isJsonObject(schema.properties)) return 'object';
  if (schema.items !== undefined || Array.isArray(schema.prefixItems)) return 'array';
  return undefined;
}

/** A field's name for people: its `title`, else its key. */
export function fieldTitle(schema: JsonObject, key: string): string {
  return typeof schema.title === 'string' && schema.title !== '' ? schema.title : key;
}

interface Node {
  schema: unknown;
  pointer: string;
  /** The `$defs` entry this node belongs to ('' for the root's own tree). */
  owner: string;
}

export interface SchemaVetting {
  /** Details lines, each `response_schema<pointer>: why`; empty when the schema is acceptable. */
  problems: string[];
  /** Schema nodes of the document (each visited once). */
  nodes: number;
  /** Schema nodes once `$ref`s are expanded (capped just above the limit). */
  expanded: number;
}

/** Checks a response schema against the contract's subset; see SchemaVetting. */
export function vetResponseSchema(schema: unknown): SchemaVetting {
  const problems: string[] = [];
  const report = (pointer: string, why: string) => {
    if (problems.length < MAX_PROBLEMS) problems.push(`response_schema${pointer}: ${why}`);
  };
  const none = { problems, nodes: 0, expanded: 0 };
  if (!isJsonObject(schema)) {
    report('', 'must be a JSON Schema object');
    return none;
  }
  const bytes = Buffer.byteLength(JSON.stringify(schema));
  if (bytes > RESPONSE_SCHEMA_MAX_BYTES) {
    report('', `must be at most ${RESPONSE_SCHEMA_MAX_BYTES} bytes as JSON (this one is ${bytes})`);
    return none;
  }
  if (schema.type !== 'object') report('/type', 'the top level must be "type": "object"');
  const defs = isJsonObject(schema.$defs) ? schema.$defs : {};
  /** For each `$defs` entry (and '' for the root), the entries its tree refers to, with the children of each node. */
  const refsOf = new Map<string, Set<string>>([['', new Set()]]);
  const children = new Map<unknown, unknown[]>();
  const stack: Node[] = [{ schema, pointer: '', owner: '' }];
  let nodes = 0;
  while (stack.length > 0) {
    const { schema: node, pointer, owner } = stack.pop() as Node;
    nodes += 1;
    if (typeof node === 'boolean') continue;
    if (!isJsonObject(node)) {
      report(pointer, 'must be a schema (an object, or true/false)');
      continue;
    }
    const kids: unknown[] = [];
    children.set(node, kids);
    const push = (child: unknown, at: string, childOwner = owner) => {
      stack.push({ schema: child, pointer: at, owner: childOwner });
      if (childOwner === owner) kids.push(child);
    };
    for (const [key, value] of Object.entries(node)) {
      const at = `${pointer}/${pointerSegment(key)}`;
      if (!KEYWORDS.has(key)) {
        report(at, `keyword "${key.slice(0, 64)}" is not supported (supported: ${RESPONSE_SCHEMA_KEYWORDS.join(', ')})`);
        continue;
      }
      switch (key) {
        case 'type': {
          const types = Array.isArray(value) ? value : [value];
          if (types.length === 0 || !types.every((t) => typeof t === 'string' && TYPES.has(t))) {
            report(at, `must be one of ${[...TYPES].join(', ')} (or an array of them)`);
          }
          break;
        }
        case 'properties':
        case '$defs':
          if (!isJsonObject(value)) report(at, 'must be an object of schemas');
          else if (key === '$defs' && pointer !== '') report(at, '$defs is allowed at the top level only');
          else {
            for (const [name, child] of Object.entries(value)) {
              const childAt = `${at}/${pointerSegment(name)}`;
              if (key === '$defs') {
                refsOf.set(name, refsOf.get(name) ?? new Set());
                stack.push({ schema: child, pointer: childAt, owner: name });
              } else push(child, childAt);
            }
          }
          break;
        case 'required':
          if (!Array.isArray(value) || !value.every((v) => typeof v === 'string')) report(at, 'must be an array of property names');
          break;
        case 'additionalProperties':
        case 'items':
          push(value, at);
          break;
        case 'prefixItems':
        case 'oneOf':
        case 'anyOf':
          if (!Array.isArray(value) || value.length === 0) report(at, 'must be a non-empty array of schemas');
          else value.forEach((child, i) => push(child, `${at}/${i}`));
          break;
        case 'enum':
        case 'examples':
          if (!Array.isArray(value) || (key === 'enum' && value.length === 0)) report(at, 'must be a non-empty array');
          break;
        case 'format':
          if (typeof value !== 'string' || !FORMATS.has(value)) report(at, `format must be one of ${RESPONSE_SCHEMA_FORMATS.join(', ')}`);
          break;
        case 'title':
        case 'description':
          if (typeof value !== 'string') report(at, 'must be a string');
          break;
        case '$ref': {
          const name = refTarget(value);
          if (name === undefined) report(at, 'only local references of the form "#/$defs/<name>" are allowed');
          else if (!Object.hasOwn(defs, name)) report(at, `"#/$defs/${name.slice(0, 64)}" is not defined`);
          else {
            const refs = refsOf.get(owner) ?? new Set<string>();
            refsOf.set(owner, refs.add(name));
            kids.push(defs[name]);
          }
          break;
        }
        default:
          if (NUMBER_KEYWORDS.includes(key) && typeof value !== 'number') report(at, 'must be a number');
          if (COUNT_KEYWORDS.includes(key) && !(Number.isInteger(value) && (value as number) >= 0)) report(at, 'must be a non-negative integer');
      }
    }
  }
  if (problems.length > 0) return { problems, nodes, expanded: 0 };
  const cycle = findCycle(refsOf);
  if (cycle !== undefined) {
    report(`/$defs/${pointerSegment(cycle)}`, 'cyclic $ref: a definition must not refer back to itself');
    return { problems, nodes, expanded: 0 };
  }
  const { depth, expanded } = measure(schema, children);
  if (depth > RESPONSE_SCHEMA_MAX_DEPTH) report('', `nests ${depth} levels (counting $ref); at most ${RESPONSE_SCHEMA_MAX_DEPTH} are allowed`);
  if (expanded > RESPONSE_SCHEMA_MAX_EXPANDED) {
    report('', `expands to more than ${RESPONSE_SCHEMA_MAX_EXPANDED} subschemas once its $ref are followed; use fewer references`);
  }
  return { problems, nodes, expanded };
}

/** A `$defs` entry on a reference cycle, if any (iterative depth-first search). */
function findCycle(refsOf: Map<string, Set<string>>): string | undefined {
  const state = new Map<string, 'open' | 'done'>();
  for (const start of refsOf.keys()) {
    if (state.has(start)) continue;
    const path: { name: string; next: Iterator<string> }[] = [{ name: start, next: (refsOf.get(start) ?? new Set()).values() }];
    state.set(start, 'open');
    while (path.length > 0) {
      const top = path[path.length - 1] as { name: string; next: Iterator<string> };
      const step = top.next.next();
      if (step.done) {
        state.set(top.name, 'done');
        path.pop();
        continue;
      }
      const seen = state.get(step.value);
      if (seen === 'open') return step.value;
      if (seen === undefined) {
        state.set(step.value, 'open');
        path.push({ name: step.value, next: (refsOf.get(step.value) ?? new Set()).values() });
      }
    }
  }
  return undefined;
}

/**
 * Depth and expanded size of an acyclic schema, each node computed once (memoized, in reverse
 * topological order without recursion); sizes saturate just above the limit so no number grows
 * with the doubling a hostile chain of references would produce.
 */
function measure(root: unknown, children: Map<unknown, unknown[]>): { depth: number; expanded: number } {
  const memo = new Map<unknown, { depth: number; expanded: number }>();
  const stack: { node: unknown; expandedKids: boolean }[] = [{ node: root, expandedKids: false }];
  while (stack.length > 0) {
    const top = stack[stack.length - 1] as { node: unknown; expandedKids: boolean };
    const kids = children.get(top.node) ?? [];
    if (!top.expandedKids) {
      top.expandedKids = true;
      for (const kid of kids) if (!memo.has(kid)) stack.push({ node: kid, expandedKids: false });
      continue;
    }
    stack.pop();
    let depth = 0;
    let expanded = 1;
    for (const kid of kids) {
      const m = memo.get(kid) ?? { depth: 1, expanded: 1 };
      depth = Math.max(depth, m.depth);
      expanded = Math.min(expanded + m.expanded, RESPONSE_SCHEMA_MAX_EXPANDED + 1);
    }
    memo.set(top.node, { depth: depth + 1, expanded });
  }
  return memo.get(root) ?? { depth: 1, expanded: 1 };
}
