import { createPublicKey, type KeyObject } from 'node:crypto';
import { calculateJwkThumbprint, type JWK } from 'jose';
import type { Logger } from 'pino';
import { invalidSignature } from '../domain/agents/directory.js';
import type { AppError } from '../domain/errors.js';
import type { Clock } from '../domain/time.js';
import { DocumentTooLarge, getDocument } from '../webhooks/send.js';
import type { Target } from '../webhooks/target.js';

/**
 * Agents' key directories (JWKS at `/.well-known/http-message-signatures-directory`), fetched
 * under the webhook SSRF guard (the checked address only, no redirect) and bounded:
 *
 * - at most DIRECTORY_MAX_BYTES (64 KB) and DIRECTORY_TIMEOUT_MS (5 s) per fetch, resolution
 *   included, so a slow directory holds a request at most that long;
 * - cached per URL for its `Cache-Control: max-age`, held at least 60 s and at most 24 h; a
 *   failure is remembered for 60 s;
 * - at most one fetch a minute per directory host:port, whatever URL paths the requests name (a
 *   thousand requests naming a thousand directories on one host cause one fetch); concurrent
 *   requests for one URL share its fetch. A key missing from a cached directory is looked up
 *   again once the directory is a minute old (a rotated key).
 *
 * Each instance keeps its own cache and bound: N instances fetch a directory at most N times a
 * minute (docs/verified-agents.md).
 */

export const DIRECTORY_MAX_BYTES = 64 * 1024;
export const DIRECTORY_TIMEOUT_MS = 5_000;
const MIN_TTL_MS = 60_000;
const MAX_TTL_MS = 86_400_000;
/** One fetch a minute per host. */
const HOST_INTERVAL_MS = 60_000;
/** Directories and hosts remembered; the oldest are dropped beyond. */
const MAX_ENTRIES = 10_000;

interface Entry {
  keys: Map<string, KeyObject>;
  /** Why the directory cannot be used, when it cannot. */
  problem?: AppError | undefined;
  fetchedAt: number;
  expiresAt: number;
}

export interface DirectorySettings {
  resolveTarget: (raw: string) => Promise<Target>;
  clock: Clock;
  log: Logger;
  /** Tests shorten it; production: DIRECTORY_TIMEOUT_MS. */
  timeoutMs?: number;
}

export class AgentDirectories {
  private readonly entries = new Map<string, Entry>();
  private readonly hostFetches = new Map<string, number>();
  private readonly inFlight = new Map<string, Promise<Entry>>();
  /** How many fetches were started (the bench and the tests read it). */
  fetches = 0;

  constructor(private readonly settings: DirectorySettings) {}

  /** The key `keyId` of the directory at `url`, or 400 invalid_signature naming why not. */
  async keyFor(url: URL, keyId: string): Promise<KeyObject> {
    const href = url.href;
    const now = this.settings.clock.now().getTime();
    let entry = this.entries.get(href);
    if (entry !== undefined && now < entry.expiresAt) {
      const key = lookUp(entry, keyId);
      if (key !== undefined) return key;
      // A key missing from a directory fetched over a minute ago may have been added since.
      if (entry.problem !== undefined || now - entry.fetchedAt < HOST_INTERVAL_MS) throw entry.problem ?? notListed(keyId);
    }
    let pending = this.inFlight.get(href);
    if (pending === undefined) {
      const host = url.host;
      const last = this.hostFetches.get(host);
      if (last !== undefined && now - last < HOST_INTERVAL_MS && now >= last) {
        throw entry?.problem ?? invalidSignature(`the key directory host ${host} was fetched less than a minute ago; retry in a minute`);
      }
      remember(this.hostFetches, host, now);
      this.fetches++;
      pending = this.fetch(url).finally(() => this.inFlight.delete(href));
      this.inFlight.set(href, pending);
    }
    entry = await pending;
    remember(this.entries, href, entry);
    const key = lookUp(entry, keyId);
    if (key === undefined) throw entry.problem ?? notListed(keyId);
    return key;
  }

  private async fetch(url: URL): Promise<Entry> {
    const fetchedAt = this.settings.clock.now().getTime();
    const failed = (reason: string): Entry => ({ keys: new Map(), problem: invalidSignature(reason), fetchedAt, expiresAt: fetchedAt + MIN_TTL_MS });
    const timeoutMs = this.settings.timeoutMs ?? DIRECTORY_TIMEOUT_MS;
    const started = Date.now();
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error('timeout')), timeoutMs);
    });
    try {
      const document = await Promise.race([
        (async () => {
          let target: Target;
          try {
            target = await this.settings.resolveTarget(url.href);
          } catch (error) {
            throw new Refused(`the key directory ${url.host} is refused: ${(error as Error).message.replace(/callback /g, '')}`);
          }
          const left = Math.max(1, timeoutMs - (Date.now() - started));
          return getDocument(target, { accept: 'application/http-message-signatures-directory+json, application/json' }, DIRECTORY_MAX_BYTES, left);
        })(),
        deadline,
      ]);
      if (document.statusCode >= 300 && document.statusCode < 400)
        return failed(`the key directory answered a redirect (${document.statusCode}), which is not followed`);
      if (document.statusCode !== 200) return failed(`the key directory answered ${document.statusCode}`);
      const keys = await directoryKeys(document.body);
      if (typeof keys === 'string') return failed(keys);
      return { keys, fetchedAt, expiresAt: fetchedAt + ttlOf(document.headers['cache-control']) };
    } catch (error) {
      if (error instanceof Refused) return failed(error.message);
      if (error instanceof DocumentTooLarge) return failed(`the key directory is over ${DIRECTORY_MAX_BYTES} bytes`);
      this.settings.log.info({ directory: url.host, err: error }, 'agent key directory unreachable');
      if ((error as Error).message === 'timeout' || /within/.test((error as Error).message)) {
        return failed(`the key directory did not answer within ${timeoutMs / 1000} s`);
      }
      return failed('the key directory could not be reached');
    } finally {
      clearTimeout(timer);
    }
  }
}

class Refused extends Error {}

function lookUp(entry: Entry, keyId: string): KeyObject | undefined {
  return entry.problem === undefined ? entry.keys.get(keyId) : undefined;
}

function notListed(keyId: string): AppError {
  return invalidSignature(`the key ${keyId.slice(0, 43)} is not in the agent's key directory`);
}

function remember<V>(map: Map<string, V>, key: string, value: V): void {
  map.delete(key);
  if (map.size >= MAX_ENTRIES) map.delete(map.keys().next().value as string);
  map.set(key, value);
}

/** `max-age` of Cache-Control, held between 60 s and 24 h (absent, no-store or no-cache: 60 s). */
export function ttlOf(cacheControl: string | undefined): number {
  const match = /(?:^|[,\s])max-age\s*=\s*"?(\d{1,10})"?/i.exec(cacheControl ?? '');
  const seconds = match?.[1] === undefined || /no-store|no-cache/i.test(cacheControl ?? '') ? 0 : Number(match[1]);
  return Math.min(MAX_TTL_MS, Math.max(MIN_TTL_MS, seconds * 1000));
}

/** The Ed25519 keys of a directory by their RFC 7638 thumbprint, or why there are none. */
async function directoryKeys(body: Buffer): Promise<Map<string, KeyObject> | string> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    return 'the key directory is not JSON';
  }
  const list = (parsed as { keys?: unknown } | null)?.keys;
  if (!Array.isArray(list)) return 'the key directory has no "keys" array';
  const keys = new Map<string, KeyObject>();
  for (const item of list.slice(0, 100)) {
    const jwk = item as JWK;
    if (jwk === null || typeof jwk !== 'object' || jwk.kty !== 'OKP' || jwk.crv !== 'Ed25519' || typeof jwk.x !== 'string') continue;
    try {
      const publicJwk = { kty: 'OKP', crv: 'Ed25519', x: jwk.x };
      const key = createPublicKey({ key: publicJwk, format: 'jwk' });
      keys.set(await calculateJwkThumbprint(publicJwk, 'sha256'), key);
    } catch {
      // A malformed key is skipped; the others still count.
    }
  }
  return keys.size === 0 ? 'the key directory has no Ed25519 key' : keys;
}
