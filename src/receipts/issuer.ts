/**
 * The `iss` of a compact JWS receipt, read without verifying it (display only: the status page
 * says when a receipt was issued by another deployment, e.g. one carried over by the import).
 * Null when the payload cannot be read.
 */
export function receiptIssuer(receipt: string): string | null {
  const payload = receipt.split('.')[1];
  if (payload === undefined) return null;
  try {
    const claims: unknown = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    const iss = typeof claims === 'object' && claims !== null ? (claims as { iss?: unknown }).iss : undefined;
    return typeof iss === 'string' ? iss : null;
  } catch {
    return null;
  }
}

/**
 * The one issuer rule, shared with both clients and pinned by `issuer_cases` in
 * docs/receipt-test-vectors.json: a receipt's `iss` names the expected issuer when both are the
 * same origin and path — scheme and port equal (default ports filled in), paths equal without
 * trailing slashes, hosts equal ignoring case — and any two loopback hosts (localhost,
 * 127.0.0.0/8, [::1]) count as one host. A service reached as 127.0.0.1 while its BASE_URL says
 * localhost is the same service; another port or another name is another issuer.
 */
export function sameIssuer(iss: unknown, expected: string): boolean {
  if (typeof iss !== 'string') return false;
  const a = parseIssuer(iss);
  const b = parseIssuer(expected);
  if (a === null || b === null) return stripSlashes(iss) === stripSlashes(expected);
  return a.protocol === b.protocol && a.port === b.port && a.path === b.path && (a.host === b.host || (isLoopbackHost(a.host) && isLoopbackHost(b.host)));
}

const DEFAULT_PORTS: Record<string, string> = { 'http:': '80', 'https:': '443' };

function parseIssuer(value: string): { protocol: string; host: string; port: string; path: string } | null {
  let url: URL;
  try {
    url = new URL(value.trim());
  } catch {
    return null;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return null;
  return { protocol: url.protocol, host: url.hostname.toLowerCase(), port: url.port || (DEFAULT_PORTS[url.protocol] ?? ''), path: stripSlashes(url.pathname) };
}

function isLoopbackHost(host: string): boolean {
  return host === 'localhost' || host === '[::1]' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

function stripSlashes(value: string): string {
  return value.trim().replace(/\/+$/, '');
}
