import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { html } from '../../../domain/html.js';
import { staticAsset } from '../../static-assets.js';

/**
 * The scripts of the passkey ceremonies, served from the console's own origin (its CSP allows
 * scripts from 'self' only): SimpleWebAuthn's browser bundle, read once from the installed package,
 * and the few lines that drive it from the invite and sign-in pages.
 */

/** @simplewebauthn/browser's UMD bundle (window.SimpleWebAuthnBrowser), from node_modules as installed. */
export function webauthnBrowserBundle(): string {
  const entry = createRequire(import.meta.url).resolve('@simplewebauthn/browser');
  // entry: <package>/script/index.js; the bundle sits in <package>/dist/bundle.
  return readFileSync(path.join(path.dirname(entry), '..', 'dist', 'bundle', 'index.umd.min.js'), 'utf8');
}

/**
 * Progressive: the passkey buttons stay hidden without this script (the key form still works).
 * `data-passkey-register` holds the invite's base path; `data-passkey-signin` the page to go to after.
 */
export const PASSKEY_JS = staticAsset('passkey.js', '/operator/assets');

/** The script tags of a page with a passkey button (the invite page, the sign-in page). */
export const PASSKEY_SCRIPTS = html`<script src="/operator/assets/webauthn.js" defer></script><script src="${PASSKEY_JS.url}" defer></script>`;
