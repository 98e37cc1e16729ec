import type { FastifyRequest } from 'fastify';
import { AppError } from '../domain/errors.js';

/**
 * DNS-rebinding protection for /mcp. A page on an attacker's domain that re-points its DNS at this
 * server can make a browser send same-origin requests here; those carry the attacker's Host. So
 * when BASE_URL names a public host, /mcp only answers requests addressed to that host.
 * Loopback deployments (a local dev server) are reached under many names and are not checked.
 * Cross-origin browser clients are unaffected: their Host is still this server's.
 */

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]', '::1']);
const DEFAULT_PORT: Record<string, string> = { 'http:': '80', 'https:': '443' };

interface HostPort {
  hostname: string;
  port: string;
}

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

/** Returns an onRequest hook, or undefined when BASE_URL's host is a loopback name. */
export function hostGuard(baseUrl: string): ((request: FastifyRequest) => Promise<void>) | undefined {
  const base = new URL(baseUrl);
  const hostname = base.hostname.toLowerCase().replace(/\.$/, '');
  if (LOOPBACK.has(hostname)) return undefined;
  const port = base.port || (DEFAULT_PORT[base.protocol] ?? '80');
  const expected = base.host.toLowerCase();

  return async (request: FastifyRequest): Promise<void> => {
    // request.host is the Host header, or X-Forwarded-Host only from a trusted proxy (TRUST_PROXY).
    const received = request.host;
    const actual = received ? parseHost(received, port) : null;
    if (actual && actual.hostname === hostname && actual.port === port) return;
    const shown = received ? `"${received.replace(/[^\x21-\x7e]/g, '').slice(0, 100)}"` : 'missing';
    throw new AppError('malformed_request', 'The Host header does not match this server.', {
      details: [`Host header ${shown} does not match this server's host "${expected}" (BASE_URL); send MCP requests to ${base.origin}/mcp`],
    });
  };
}
