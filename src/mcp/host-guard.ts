import type { FastifyRequest } from 'fastify';
import { AppError } from '../domain/errors.js';

/**
 * DNS-rebinding protection for /mcp, on every deployment. A page on an attacker's domain that
 * re-points its DNS at this server makes a browser send same-origin requests here; those carry the
 * attacker's Host (and Origin). So:
 * - BASE_URL on a loopback name (a local server, the case of advisory GHSA-w48q-cv73-mx4w): Host
 *   and, when present, Origin must be loopback names (localhost, 127.0.0.1, [::1]; any port);
 * - otherwise: Host must be BASE_URL's host (its port too) or one of ALLOWED_HOSTS (any port).
 *   Origin is not checked there: CORS is open app-wide for browser agents on other origins,
 *   whose Host is still this server's.
 * Refused with 403 `forbidden` before the body is read.
 */

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);
const DEFAULT_PORT: Record<string, string> = { 'http:': '80', 'https:': '443' };

interface HostPort {
  hostname: string;
  port: string;
}

/** A Host value as hostname (lower case, brackets kept for IPv6, no trailing dot) and port. */
function parseHost(value: string, defaultPort: string): HostPort | null {
  try {
    const url = new URL(`http://${value}`);
    if (url.username || url.password || url.pathname !== '/' || url.search || url.hash) return null;
    // URL drops :80 for http:, so read the port from the text when it is there.
    const explicit = /:(\d+)$/.exec(value)?.[1];
    return { hostname: url.hostname.toLowerCase().replace(/\.$/, ''), port: explicit ? String(Number(explicit)) : defaultPort };
  } catch {
    return null;
  }
}

/** An Origin value's hostname, or null when it is not an http(s) origin ("null" included). */
function originHostname(value: string): string | null {
  try {
    const url = new URL(value);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return null;
    return url.hostname.toLowerCase().replace(/\.$/, '');
  } catch {
    return null;
  }
}

function shown(value: string | undefined): string {
  return value ? `"${value.replace(/[^\x21-\x7e]/g, '').slice(0, 100)}"` : 'missing';
}

/** The onRequest hook of POST /mcp. */
export function hostGuard(baseUrl: string, allowedHosts: readonly string[] = []): (request: FastifyRequest) => Promise<void> {
  const base = new URL(baseUrl);
  const hostname = base.hostname.toLowerCase().replace(/\.$/, '');
  const port = base.port || (DEFAULT_PORT[base.protocol] ?? '80');
  const loopback = LOOPBACK.has(hostname);
  const extra = new Set(allowedHosts);
  const expected = loopback ? 'a loopback name (localhost, 127.0.0.1 or [::1])' : `"${[base.host.toLowerCase(), ...extra].join('", "')}"`;

  const hostAllowed = (actual: HostPort | null): boolean => {
    if (!actual) return false;
    if (loopback) return LOOPBACK.has(actual.hostname) || extra.has(actual.hostname);
    return (actual.hostname === hostname && actual.port === port) || extra.has(actual.hostname);
  };

  return async (request: FastifyRequest): Promise<void> => {
    // request.host is the Host header, or X-Forwarded-Host only from a trusted proxy (TRUST_PROXY).
    const received = request.host;
    if (!hostAllowed(received ? parseHost(received, port) : null)) {
      throw new AppError('forbidden', 'The Host header does not name this server.', {
        details: [`Host header ${shown(received)} is not ${expected} (BASE_URL, ALLOWED_HOSTS); send MCP requests to ${base.origin}/mcp`],
      });
    }
    const origin = request.headers.origin;
    if (!loopback || origin === undefined) return;
    const originHost = originHostname(origin);
    if (originHost !== null && (LOOPBACK.has(originHost) || extra.has(originHost))) return;
    throw new AppError('forbidden', 'The Origin header does not name this server.', {
      details: [`Origin header ${shown(origin)} is not ${expected}: a web page of another site cannot call this local MCP server`],
    });
  };
}
