import path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { build } from 'esbuild';
import type { BrowserContext, Frame, Page } from 'playwright-core';
import type { TestApp } from './support/app.js';

/**
 * A host for the MCP Apps task card in Chromium, built on the package's own host side: AppBridge
 * and PostMessageTransport of @modelcontextprotocol/ext-apps, bundled for the browser here. The
 * card runs in a sandboxed srcdoc frame under the CSP its resource declares; its tools/call
 * requests go, through AppBridge, to the official MCP client in this process and on to the app.
 */

const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');

const HOST_SOURCE = `
import { AppBridge, PostMessageTransport } from '@modelcontextprotocol/ext-apps/app-bridge';
window.startCard = async (html, toolInput, toolResult, hostContext) => {
  const frame = document.createElement('iframe');
  frame.setAttribute('sandbox', 'allow-scripts');
  frame.title = 'Task card';
  document.body.appendChild(frame);
  const bridge = new AppBridge(null, { name: 'test-host', version: '1.0.0' }, { serverTools: {} }, { hostContext });
  bridge.oncalltool = (params) => window.hostCallTool(params);
  bridge.oninitialized = async () => {
    await bridge.sendToolInput({ arguments: toolInput });
    window.toolResultSentAt = performance.timeOrigin + performance.now();
    await bridge.sendToolResult(toolResult);
  };
  window.bridge = bridge;
  await bridge.connect(new PostMessageTransport(frame.contentWindow, frame.contentWindow));
  frame.srcdoc = html;
};
`;

const HOST_URL = 'http://127.0.0.1:9/host';

let hostBundle: Promise<string> | undefined;

/** AppBridge and the host script as one browser script (built once per run). */
export function hostScript(): Promise<string> {
  hostBundle ??= build({
    stdin: { contents: HOST_SOURCE, resolveDir: ROOT, loader: 'js' },
    bundle: true,
    format: 'iife',
    platform: 'browser',
    write: false,
    logLevel: 'silent',
  }).then((out) => out.outputFiles[0]?.text ?? '');
  return hostBundle;
}

/** The card as the host frames it: the resource's document under the CSP its `_meta.ui.csp` declares. */
export function framedCard(text: string, csp: { connectDomains: string[]; resourceDomains: string[] }): string {
  const policy = `default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src ${csp.connectDomains.join(' ')}; img-src ${csp.resourceDomains.join(' ')}`;
  return text.replace('<head>', `<head>\n<meta http-equiv="Content-Security-Policy" content="${policy}">`);
}

/** Requests to BASE_URL (where the card fetches keys and thumbnails) answered by the test app. */
export async function routeBaseUrl(context: BrowserContext, baseUrl: string, t: TestApp): Promise<void> {
  await context.route(`${baseUrl}/**`, async (route) => {
    const url = new URL(route.request().url());
    const res = await fetch(`${t.url}${url.pathname}${url.search}`);
    // fetch has decoded the body: its encoding and length headers no longer describe it.
    const headers = Object.fromEntries([...res.headers].filter(([name]) => name !== 'content-encoding' && name !== 'content-length'));
    await route.fulfill({ status: res.status, headers, body: Buffer.from(await res.arrayBuffer()) });
  });
}

export const LIGHT = {
  theme: 'light',
  styles: { variables: { '--color-background-primary': '#ffffff', '--color-text-primary': '#1f1f1f', '--font-sans': 'system-ui, sans-serif' } },
} as const;
export const DARK = {
  theme: 'dark',
  styles: { variables: { '--color-background-primary': '#1b1b1c', '--color-text-primary': '#f0f0f0', '--font-sans': 'system-ui, sans-serif' } },
} as const;

/** Opens the host page and starts the card with one tool call's input and result; returns the card's frame. `calls` records the card's tools/call names. */
export async function openCard(
  page: Page,
  client: Client,
  card: { text: string; csp: { connectDomains: string[]; resourceDomains: string[] } },
  toolInput: Record<string, unknown>,
  toolResult: unknown,
  hostContext: object,
  calls: string[] = [],
): Promise<Frame> {
  await page.exposeFunction('hostCallTool', (params: { name: string; arguments?: Record<string, unknown> }) => {
    calls.push(params.name);
    return client.callTool(params);
  });
  // The host page on a loopback address: a secure context, as a real host's https page is (WebCrypto needs one).
  await page.route(HOST_URL, (route) =>
    route.fulfill({
      contentType: 'text/html',
      body: '<!doctype html><html lang="en"><head><title>Host</title><style>body{margin:0}iframe{border:0;width:100%;height:1400px}</style></head><body></body></html>',
    }),
  );
  await page.goto(HOST_URL);
  await page.addScriptTag({ content: await hostScript() });
  await page.evaluate(
    ([html, input, result, context]) => (window as unknown as { startCard: (...args: unknown[]) => Promise<void> }).startCard(html, input, result, context),
    [framedCard(card.text, card.csp), toolInput, toolResult, hostContext] as const,
  );
  const handle = await page.waitForSelector('iframe');
  const frame = await handle.contentFrame();
  if (!frame) throw new Error('no card frame');
  return frame;
}

/** A host page that frames the card and never answers it (no AppBridge). */
export async function openSilentHost(page: Page, card: { text: string; csp: { connectDomains: string[]; resourceDomains: string[] } }): Promise<Frame> {
  await page.route(HOST_URL, (route) =>
    route.fulfill({ contentType: 'text/html', body: '<!doctype html><html lang="en"><head><title>Host</title></head><body></body></html>' }),
  );
  await page.goto(HOST_URL);
  await page.evaluate(
    (html) => {
      const frame = document.createElement('iframe');
      frame.setAttribute('sandbox', 'allow-scripts');
      frame.title = 'Task card';
      frame.srcdoc = html;
      document.body.appendChild(frame);
    },
    framedCard(card.text, card.csp),
  );
  const frame = await (await page.waitForSelector('iframe')).contentFrame();
  if (!frame) throw new Error('no card frame');
  return frame;
}
