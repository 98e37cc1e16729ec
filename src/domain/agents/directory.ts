import { AppError } from '../errors.js';

/**
 * Verified agents' key directories (docs/verified-agents.md): where a `Signature-Agent` value
 * points, and the host a block or a fetch bound names.
 */

/** The path of a key directory under an origin (draft-meunier-http-message-signatures-directory). */
export const DIRECTORY_PATH = '/.well-known/http-message-signatures-directory';

/**
 * The directory a `Signature-Agent` names: an origin (`https://agent.example`) means its
 * well-known path; a URL with a path is taken as is. Null when it is not an absolute http(s) URL
 * without credentials or fragment.
 */
export function directoryUrlOf(value: string): URL | null {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return null;
  }
  if ((url.protocol !== 'https:' && url.protocol !== 'http:') || url.username !== '' || url.password !== '' || url.hostname === '') return null;
  url.hash = '';
  if (url.pathname === '/' && url.search === '') url.pathname = DIRECTORY_PATH;
  return url;
}

/**
 * The canonical host of a directory, as blocks and the fetch bound name it: lower case, with
 * `:port` only when not the scheme's default. Takes a URL, or a bare `host[:port]` (read as https).
 */
export function directoryHost(value: string): string | null {
  const text = value.trim();
  if (text === '') return null;
  try {
    const url = new URL(text.includes('://') ? text : `https://${text}`);
    if (url.hostname === '' || (!text.includes('://') && `${url.host}`.length === 0)) return null;
    if (!text.includes('://') && !/^[^/?#@\s]+$/.test(text)) return null;
    return url.host;
  } catch {
    return null;
  }
}

/** 400 `invalid_signature` naming why (never 401, never a challenge). */
export function invalidSignature(reason: string): AppError {
  return new AppError('invalid_signature', 'The request signature does not verify; see details.', { details: [`signature: ${reason}`] });
}
