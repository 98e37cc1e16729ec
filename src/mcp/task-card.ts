import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { escapeHtml } from '../domain/html.js';

/**
 * MCP Apps (extension io.modelcontextprotocol/ui, spec 2026-01-26): the task card, one
 * self-contained HTML document a host renders in a sandboxed frame beside the tool result
 * (docs/mcp-apps.md). Its markup, style and script are files in src/mcp/apps/; they are joined
 * into one document here, once, when this module loads. Where the files are: next to this module
 * in `apps/`: src/mcp/apps/ from source (vitest, tsx), dist/apps/ in the bundle, which
 * scripts/build.mjs copies there (as it does src/web/assets/).
 */

export const TASK_CARD_URI = 'ui://human-task/task-card.html';
/** RESOURCE_MIME_TYPE of @modelcontextprotocol/ext-apps (not imported: its entry point loads its schema library). */
export const MCP_APP_MIME_TYPE = 'text/html;profile=mcp-app';
/**
 * The tool `_meta` that links a tool to the card: `ui.resourceUri`, and the deprecated flat key
 * `ui/resourceUri` beside it for hosts of the extension's drafts, as the package's registerAppTool does.
 */
export const TASK_CARD_TOOL_META = { ui: { resourceUri: TASK_CARD_URI }, 'ui/resourceUri': TASK_CARD_URI } as const;
/** The contract's ceiling on the document (uncompressed bytes). */
export const TASK_CARD_MAX_BYTES = 150 * 1024;

const APPS_DIR = fileURLToPath(new URL('./apps/', import.meta.url));

function part(file: string, closing: string): string {
  const text = readFileSync(`${APPS_DIR}${file}`, 'utf8');
  // Inlined inside <script>/<style>: a closing tag in the file would end the element early.
  if (text.toLowerCase().includes(closing)) throw new Error(`task card: ${file} contains ${closing}`);
  return text;
}

/** The document with `{{origin}}` left for the deployment's BASE_URL origin. */
const TEMPLATE = readFileSync(`${APPS_DIR}task-card.html`, 'utf8')
  .replace('/*{{style}}*/', () => part('task-card.css', '</style'))
  .replace('/*{{script}}*/', () => part('task-card.js', '</script'));

export interface TaskCard {
  /** resources/list entry. */
  readonly listed: { uri: string; name: string; title: string; description: string; mimeType: string };
  /** resources/read answer. */
  readonly contents: { uri: string; mimeType: string; text: string; _meta: Record<string, unknown> };
}

/** The card of one deployment (built once per BASE_URL): its origin is where the card fetches keys and thumbnails, and all its CSP allows. */
export function taskCard(baseUrl: string): TaskCard {
  const known = cards.get(baseUrl);
  if (known) return known;
  const card = buildCard(baseUrl);
  cards.set(baseUrl, card);
  return card;
}

const cards = new Map<string, TaskCard>();

function buildCard(baseUrl: string): TaskCard {
  const origin = new URL(baseUrl).origin;
  const text = TEMPLATE.replace('{{origin}}', escapeHtml(origin));
  return {
    listed: {
      uri: TASK_CARD_URI,
      name: 'task-card',
      title: 'The task, live',
      description:
        "A live card for a task: its status, ETA and deadline, the operator's question with an answer box, the result, photos and the verified receipt.",
      mimeType: MCP_APP_MIME_TYPE,
    },
    contents: {
      uri: TASK_CARD_URI,
      mimeType: MCP_APP_MIME_TYPE,
      text,
      _meta: { ui: { csp: { connectDomains: [origin], resourceDomains: [origin] }, prefersBorder: true } },
    },
  };
}
