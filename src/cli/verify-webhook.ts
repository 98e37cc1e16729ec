import { createPublicKey, type JsonWebKey, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { verifyWebBotAuth, verifyWebhookSignature } from '../webhooks/sign.js';

/**
 * `npm run verify-webhook -- [--headers-file FILE | --id ID --timestamp TS --signature SIG]
 *   [--body-file FILE] [--base-url URL | --jwks-file FILE] [--tolerance SECONDS]`
 *
 * The receiver's counterpart of verify-receipt: checks a webhook's `webhook-signature` (Standard
 * Webhooks, asymmetric `v1a`: Ed25519 over "<webhook-id>.<webhook-timestamp>.<raw body>") against
 * the service's published keys. The body is read from --body-file or stdin, byte for byte. Exits 0
 * when valid, 4 when not, 1 when something could not be read or fetched, 2 on a usage error.
 */

const USAGE =
  'Usage: npm run verify-webhook -- [--headers-file FILE | --id ID --timestamp TS --signature SIG] [--body-file FILE (default stdin)] ' +
  '[--base-url URL | --jwks-file FILE] [--tolerance SECONDS]\n';

const out = (line = '') => process.stdout.write(`${line}\n`);

/** `name: value` lines (a saved request; the request line and blank lines are skipped). */
function parseHeaders(text: string): Map<string, string> {
  const headers = new Map<string, string>();
  for (const line of text.split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon <= 0 || /\s/.test(line.slice(0, colon))) continue;
    headers.set(line.slice(0, colon).toLowerCase(), line.slice(colon + 1).trim());
  }
  return headers;
}

function readStdin(): string {
  return readFileSync(0, 'utf8');
}

async function fetchJwks(baseUrl: string): Promise<unknown> {
  const url = `${baseUrl}/.well-known/jwks.json`;
  let res: Response;
  try {
    res = await fetch(url, { headers: { accept: 'application/json' }, signal: AbortSignal.timeout(15_000) });
  } catch (error) {
    // Name the URL: "fetch failed" alone does not say which address was wrong.
    const cause = error instanceof Error ? ((error.cause as Error | undefined)?.message ?? error.message) : String(error);
    throw new Error(`could not reach ${url} (${cause}). Pass --base-url or --jwks-file, or set BASE_URL or PORT.`);
  }
  if (res.status !== 200) throw new Error(`${url} answered ${res.status}`);
  return res.json();
}

/** The Ed25519 keys of a JWKS by kid (the RFC 7638 thumbprint); anything else in it is skipped. */
function ed25519Keys(jwks: unknown): Map<string, KeyObject> {
  const keys = typeof jwks === 'object' && jwks !== null && Array.isArray((jwks as { keys?: unknown }).keys) ? (jwks as { keys: unknown[] }).keys : [];
  const result = new Map<string, KeyObject>();
  for (const [i, jwk] of keys.entries()) {
    if (typeof jwk !== 'object' || jwk === null || (jwk as { kty?: unknown }).kty !== 'OKP' || (jwk as { crv?: unknown }).crv !== 'Ed25519') continue;
    try {
      const kid = (jwk as { kid?: unknown }).kid;
      result.set(typeof kid === 'string' ? kid : `#${i}`, createPublicKey({ key: jwk as JsonWebKey, format: 'jwk' }));
    } catch {
      // A malformed entry verifies nothing.
    }
  }
  return result;
}

/** What the body says happened: a webhook event `{type, data: task}`, or an A2A push notification (a StreamResponse). */
function describeEvent(event: Record<string, unknown>): string {
  const a2a = ['statusUpdate', 'artifactUpdate', 'task', 'message'].find((kind) => typeof event[kind] === 'object' && event[kind] !== null);
  if (a2a !== undefined) {
    const payload = event[a2a] as { taskId?: unknown; id?: unknown; status?: { state?: unknown } };
    const state = payload.status?.state;
    return `A2A ${a2a} for ${String(payload.taskId ?? payload.id)}${state === undefined ? '' : ` (${String(state)})`}`;
  }
  const data = event.data as { task_id?: unknown; status?: unknown } | undefined;
  return `${String(event.type)} for ${String(data?.task_id)} (${String(data?.status)})`;
}

async function main(argv: string[]): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        'headers-file': { type: 'string' },
        id: { type: 'string' },
        timestamp: { type: 'string' },
        signature: { type: 'string' },
        'body-file': { type: 'string' },
        'base-url': { type: 'string' },
        'jwks-file': { type: 'string' },
        tolerance: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (error) {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n${USAGE}`);
    return 2;
  }
  if (values.help) {
    out(USAGE.trimEnd());
    return 0;
  }
  let headers: Map<string, string>;
  let body: string;
  try {
    headers = values['headers-file'] !== undefined ? parseHeaders(readFileSync(values['headers-file'], 'utf8')) : new Map();
    body = values['body-file'] !== undefined ? readFileSync(values['body-file'], 'utf8') : readStdin();
  } catch (error) {
    out(`Cannot verify: ${error instanceof Error ? error.message : String(error)}`);
    return 1;
  }
  const id = values.id ?? headers.get('webhook-id');
  const timestamp = values.timestamp ?? headers.get('webhook-timestamp');
  const signature = values.signature ?? headers.get('webhook-signature');
  if (id === undefined || timestamp === undefined || signature === undefined) {
    process.stderr.write(`webhook-id, webhook-timestamp and webhook-signature are all needed (flags or --headers-file).\n${USAGE}`);
    return 2;
  }
  const tolerance = values.tolerance !== undefined ? Number(values.tolerance) : undefined;
  if (tolerance !== undefined && !(Number.isInteger(tolerance) && tolerance > 0)) {
    process.stderr.write(`--tolerance must be a whole number of seconds.\n${USAGE}`);
    return 2;
  }

  const baseUrl = (values['base-url'] ?? process.env.BASE_URL ?? `http://localhost:${process.env.PORT ?? '8080'}`).replace(/\/+$/, '');
  let byKid: Map<string, KeyObject>;
  let keys: KeyObject[];
  try {
    const jwks = values['jwks-file'] !== undefined ? (JSON.parse(readFileSync(values['jwks-file'], 'utf8')) as unknown) : await fetchJwks(baseUrl);
    byKid = ed25519Keys(jwks);
    keys = [...byKid.values()];
    if (keys.length === 0) throw new Error('the key set holds no Ed25519 key');
  } catch (error) {
    out(`Cannot verify: ${error instanceof Error ? error.message : String(error)}`);
    return 1;
  }
  out(`Webhook ${id}, keys from ${values['jwks-file'] ?? `${baseUrl}/.well-known/jwks.json`} (${keys.length} Ed25519 key${keys.length === 1 ? '' : 's'})`);

  const valid = verifyWebhookSignature(id, timestamp, body, signature, keys);
  out(
    `  ${valid ? '✓' : '✗'} signature   ${valid ? 'v1a Ed25519 over id.timestamp.body verifies with a published key' : 'no v1a signature verifies with the published keys'}`,
  );
  // The Web Bot Auth signature, when the saved request carries it (and its Host, the @authority signed).
  let botAuth = true;
  const host = headers.get('host');
  if (headers.has('signature-input') && host !== undefined) {
    const checked = await verifyWebBotAuth(host, headers, byKid, Math.floor(Date.now() / 1000));
    botAuth = checked.valid;
    out(`  ${botAuth ? '✓' : '✗'} web bot auth ${checked.reason}`);
  }
  let fresh = true;
  if (tolerance !== undefined) {
    const age = Math.floor(Date.now() / 1000) - Number(timestamp);
    fresh = /^\d+$/.test(timestamp) && Math.abs(age) <= tolerance;
    out(`  ${fresh ? '✓' : '✗'} timestamp   ${fresh ? `within ${tolerance} s` : `outside ${tolerance} s of now (a replay?)`}`);
  }
  try {
    out(`  event         ${describeEvent(JSON.parse(body) as Record<string, unknown>)}`);
  } catch {
    out('  event         the body is not JSON');
  }
  if (!valid || !fresh || !botAuth) {
    out('INVALID: do not act on this webhook.');
    return 4;
  }
  out('VALID: sent by the service.');
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`Verification failed to run: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  },
);
