/**
 * A reader for the YAML subset the repository's compose.yaml uses (block mappings, block
 * sequences of scalars, flow sequences of scalars, quoted and plain scalars, comments). No YAML
 * parser is a declared dependency, and this is enough to check the file's structure; anything
 * outside the subset (anchors, multi-line scalars, sequences of mappings) throws, so the test
 * fails rather than misreading.
 */
export type Yaml = string | Yaml[] | { [key: string]: Yaml };

interface Line {
  indent: number;
  text: string;
  number: number;
}

export function parseYaml(source: string): Yaml {
  const lines: Line[] = [];
  source.split('\n').forEach((raw, index) => {
    const text = stripComment(raw).trimEnd();
    if (text.trim() === '') return;
    if (/^\s*(&|\*|<<|\||>)/.test(text.trim()) || /:\s*[&*|>]/.test(text)) throw new Error(`line ${index + 1}: outside the supported YAML subset`);
    lines.push({ indent: text.length - text.trimStart().length, text: text.trim(), number: index + 1 });
  });
  let position = 0;

  function block(indent: number): Yaml {
    const first = lines[position];
    if (!first || first.indent < indent) return '';
    return first.text.startsWith('- ') ? sequence(first.indent) : mapping(first.indent);
  }

  function sequence(indent: number): Yaml[] {
    const items: Yaml[] = [];
    for (let line = lines[position]; line && line.indent === indent && line.text.startsWith('- '); line = lines[position]) {
      const item = line.text.slice(2).trim();
      if (/^[^"'[]*:\s/.test(item) || item.endsWith(':')) throw new Error(`line ${line.number}: sequences of mappings are outside the subset`);
      items.push(scalarOrFlow(item, line.number));
      position++;
    }
    return items;
  }

  function mapping(indent: number): { [key: string]: Yaml } {
    const out: { [key: string]: Yaml } = {};
    for (let line = lines[position]; line && line.indent === indent; line = lines[position]) {
      const match = /^("[^"]*"|'[^']*'|[^:]+?):(?:\s+(.*))?$/.exec(line.text);
      if (!match) throw new Error(`line ${line.number}: expected "key: value"`);
      const key = unquote(match[1] ?? '');
      if (key in out) throw new Error(`line ${line.number}: duplicate key ${key}`);
      position++;
      const value = match[2];
      if (value !== undefined && value !== '') {
        out[key] = scalarOrFlow(value, line.number);
      } else {
        const next = lines[position];
        out[key] = next && next.indent > indent ? block(next.indent) : next && next.indent === indent && next.text.startsWith('- ') ? sequence(indent) : '';
      }
    }
    const stray = lines[position];
    if (stray && stray.indent > indent) throw new Error(`line ${stray.number}: unexpected indentation`);
    return out;
  }

  const result = block(0);
  if (position < lines.length) throw new Error(`line ${lines[position]?.number}: unexpected content`);
  return result;
}

function scalarOrFlow(value: string, number: number): Yaml {
  if (!value.startsWith('[')) return unquote(value);
  if (!value.endsWith(']')) throw new Error(`line ${number}: unterminated flow sequence`);
  const items = value.slice(1, -1).match(/"(?:[^"\\]|\\.)*"|'[^']*'|[^,\s][^,]*/g) ?? [];
  return items.map((item) => unquote(item.trim()));
}

function unquote(value: string): string {
  if (value.startsWith('"') && value.endsWith('"')) return JSON.parse(value) as string;
  if (value.startsWith("'") && value.endsWith("'")) return value.slice(1, -1).replaceAll("''", "'");
  return value;
}

/** Drops a `#` comment that is not inside quotes. */
function stripComment(line: string): string {
  let quote: string | undefined;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (quote) {
      if (c === quote) quote = undefined;
    } else if (c === '"' || c === "'") {
      quote = c;
    } else if (c === '#' && (i === 0 || /\s/.test(line[i - 1] ?? ''))) {
      return line.slice(0, i);
    }
  }
  return line;
}
