import { staticAsset } from '../static-assets.js';

/**
 * The public pages' one stylesheet and one small script, as files in src/web/assets/ served under
 * content-hashed names (static-assets.ts). The script is progressive enhancement only: every page
 * reads and every form works without it.
 */
export const PAGES_CSS = staticAsset('pages.css');
export const PAGES_JS = staticAsset('pages.js');

// Only the service's own files: no inline style or script, nothing from elsewhere.
export const CONTENT_SECURITY_POLICY =
  "default-src 'none'; style-src 'self'; script-src 'self'; connect-src 'self'; img-src 'self' data:; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";
