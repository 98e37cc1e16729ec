import { staticAsset } from '../static-assets.js';

/**
 * The console's stylesheet and script: files in src/web/assets/ (console.css, console.js) served
 * from /operator/assets/ under content-hashed names (static-assets.ts), so the pages run under a
 * strict Content-Security-Policy (no inline script or style at all). The script is progressive
 * enhancement only: every form works without it.
 */
export const CONSOLE_CSS = staticAsset('console.css', '/operator/assets');
export const CONSOLE_JS = staticAsset('console.js', '/operator/assets');
