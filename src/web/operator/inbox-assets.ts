import { staticAsset } from '../static-assets.js';

/**
 * The inbox's console assets (docs/inbox.md), served beside console.css and console.js (auth/auth-routes.ts) under the same
 * strict CSP: a stylesheet for the toolbar and lists, and the keyboard shortcuts. Progressive
 * enhancement only: every action stays a link or a form without them.
 */

export const INBOX_CSS = staticAsset('inbox.css', '/operator/assets');

/**
 * j/k move through the queue, o opens, / searches, g goes back to the queue, ? shows the list. On
 * a task page: a accepts, r goes to the reply (or question) box, d to the deliverable, x to the
 * reject reason, u undoes a held action; Ctrl+Enter sends the form being typed in. Keys are ignored
 * while typing in a field.
 */
export const KEYS_JS = staticAsset('keys.js', '/operator/assets');

/**
 * Templates without a reload: "Use" puts the chosen template's text into the box it is for (the
 * deliverable, or the reply box of the sender's latest message) and focuses it; the box's own
 * script (the live hash of the deliverable) hears an input event. Without this script "Use"
 * reloads the page with the box filled by the server.
 */
export const TEMPLATES_JS = staticAsset('templates.js', '/operator/assets');
