import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { IMPORT_MAX_RECORDS } from '../domain/tasks/import-schemas.js';

/**
 * `npm run import -- <file.json|-> [--base-url URL] [--batch N]`
 *
 * Posts task records (a JSON array, or `{"tasks": [...]}` as an export gives them) to a running
 * service's `POST /api/v1/admin/tasks/import`, in batches under the per-call cap, with the
 * operator key from ADMIN_KEY. Prints a progress line per batch (stderr) and a summary (stdout).
 * Exits 0 when every record was imported or skipped, 1 when some records were refused (listed),
 * 2 on a usage error, 3 when the file cannot be read or the service refuses or cannot be reached.
 * Importing twice is harmless: existing ids are skipped.
 */

const USAGE = 'Usage: ADMIN_KEY=… npm run import -- <file.json|-> [--base-url URL (default BASE_URL or http://localhost:$PORT)] [--batch N]\n';
const out = (line = '') => process.stdout.write(`${line}\n`);
const err = (line = '') => process.stderr.write(`${line}\n`);

class Failure extends Error {
  constructor(
    message: string,
    readonly exitCode: number,
  ) {
    super(message);
  }
}

function recordsFrom(text: string): unknown[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new Failure('the file is not valid JSON', 3);
  }
  if (Array.isArray(parsed)) return parsed;
  const tasks = typeof parsed === 'object' && parsed !== null ? (parsed as { tasks?: unknown }).tasks : undefined;
  if (Array.isArray(tasks)) return tasks;
  throw new Failure('the file must hold a JSON array of task records or {"tasks": [...]}', 3);
}

interface BatchResult {
  imported: number;
  skipped: number;
  errors: { index: number; details: string[] }[];
}

async function postBatch(baseUrl: string, key: string, tasks: unknown[]): Promise<BatchResult> {
  let res: Response;
  try {
    res = await fetch(`${baseUrl}/api/v1/admin/tasks/import`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
      body: JSON.stringify({ tasks }),
      signal: AbortSignal.timeout(120_000),
    });
  } catch (error) {
    throw new Failure(`${baseUrl} cannot be reached (${error instanceof Error ? error.message : String(error)})`, 3);
  }
  const body = (await res.json().catch(() => ({}))) as Partial<BatchResult> & { error?: string; message?: string };
  if (res.status !== 200) throw new Failure(`the service answered ${res.status} ${body.error ?? ''}: ${body.message ?? ''}`.trim(), 3);
  return { imported: body.imported ?? 0, skipped: body.skipped ?? 0, errors: body.errors ?? [] };
}

async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { 'base-url': { type: 'string' }, batch: { type: 'string' }, help: { type: 'boolean' } },
  });
  if (values.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  const file = positionals[0];
  const batch = values.batch === undefined ? 500 : Number(values.batch);
  if (file === undefined || positionals.length > 1 || !Number.isInteger(batch) || batch < 1 || batch > IMPORT_MAX_RECORDS) {
    process.stderr.write(USAGE);
    return 2;
  }
  const key = process.env.ADMIN_KEY;
  if (!key) {
    err('ADMIN_KEY is not set: the import needs the operator key.');
    return 2;
  }
  const baseUrl = (values['base-url'] ?? process.env.BASE_URL ?? `http://localhost:${process.env.PORT ?? '8080'}`).replace(/\/+$/, '');
  let text: string;
  try {
    text = readFileSync(file === '-' ? 0 : file, 'utf8');
  } catch {
    throw new Failure(`${file} cannot be read`, 3);
  }
  const records = recordsFrom(text);
  const total: BatchResult = { imported: 0, skipped: 0, errors: [] };
  for (let start = 0; start < records.length; start += batch) {
    const result = await postBatch(baseUrl, key, records.slice(start, start + batch));
    total.imported += result.imported;
    total.skipped += result.skipped;
    for (const e of result.errors) total.errors.push({ index: start + e.index, details: e.details });
    err(
      `${Math.min(start + batch, records.length)}/${records.length} records sent: ${total.imported} imported, ${total.skipped} skipped, ${total.errors.length} refused`,
    );
  }
  out(`Imported ${total.imported}, skipped ${total.skipped} (already there), refused ${total.errors.length} of ${records.length} records.`);
  for (const e of total.errors) {
    const record = records[e.index] as { task_id?: unknown } | undefined;
    const id = typeof record?.task_id === 'string' ? ` (${record.task_id.slice(0, 80)})` : '';
    out(`  record ${e.index}${id}: ${e.details.join('; ')}`);
  }
  return total.errors.length > 0 ? 1 : 0;
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    err(`import: ${error instanceof Error ? error.message : String(error)}`);
    process.exitCode = error instanceof Failure ? error.exitCode : 3;
  },
);
