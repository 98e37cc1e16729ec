import { describe, expect, it } from 'vitest';
import { connectModern, modernRpc } from './mcp.modern.support.js';
import { call, type Json, useMcpClient } from './mcp.support.js';
import { STORES, useSuiteResource, useTestApp, validTask } from './support/app.js';

/**
 * MCP Apps (contract "MCP Apps: the task in the conversation"): the task card resource on both
 * protocol revisions, the tools that link to it, and hosts without the extension unchanged.
 * The card itself, rendered by the package's own host side, is test/mcp.apps.browser.happy.test.ts.
 */

const URI = 'ui://human-task/task-card.html';
const MIME = 'text/html;profile=mcp-app';
const BASE_URL = 'https://hitl.example-service.dev';

describe.each(STORES)('MCP Apps task card on %s', (store) => {
  const t = useTestApp({ store, env: { BASE_URL, ALLOWED_HOSTS: '127.0.0.1' } });
  const legacy = useMcpClient(t);
  const modern = useSuiteResource(
    () => connectModern(t),
    (client) => client.close(),
  );

  it('is listed and readable on 2025-11-25: one self-contained document of at most 150 KB, its CSP naming only BASE_URL', async () => {
    const listed = await legacy.listResources();
    expect(listed.resources).toEqual([expect.objectContaining({ uri: URI, mimeType: MIME, name: 'task-card' })]);
    const read = await legacy.readResource({ uri: URI });
    expect(read.contents).toHaveLength(1);
    const [doc] = read.contents as { uri: string; mimeType: string; text: string; _meta: Json }[];
    expect(doc?.uri).toBe(URI);
    expect(doc?.mimeType).toBe(MIME);
    expect(doc?._meta).toEqual({ ui: { csp: { connectDomains: [BASE_URL], resourceDomains: [BASE_URL] }, prefersBorder: true } });
    const text = doc?.text ?? '';
    expect(Buffer.byteLength(text, 'utf8')).toBeLessThanOrEqual(150 * 1024);
    expect(text).toMatch(/^<!doctype html>/);
    // Self-contained: no external script, style sheet or font; the style and script are inline.
    expect(text).not.toMatch(/<script[^>]+src=|<link[^>]+stylesheet|@import|@font-face/i);
    expect(text).not.toMatch(/url\(/);
    expect(text).toContain('<style>');
    expect(text).toContain("'ui/initialize'");
    expect(text).toContain(`<meta name="service-origin" content="${BASE_URL}">`);
    expect(text).not.toContain('{{');
  });

  it('is the same document on 2026-07-28', async () => {
    expect((await modern.listResources()).resources.map((resource) => resource.uri)).toEqual([URI]);
    const v2 = await modern.readResource({ uri: URI });
    const v1 = await legacy.readResource({ uri: URI });
    expect(v2.contents).toEqual(v1.contents);
  });

  it('is linked by _meta.ui.resourceUri from submit_human_task, check_task_status and answer_operator_question only', async () => {
    for (const client of [legacy, modern]) {
      const tools = (await client.listTools()).tools;
      const linked = tools.filter((tool) => (tool._meta as { ui?: { resourceUri?: string } } | undefined)?.ui?.resourceUri === URI).map((tool) => tool.name);
      expect(linked).toEqual(['submit_human_task', 'check_task_status', 'answer_operator_question']);
      // The deprecated flat key too, as the package's registerAppTool writes it for older hosts.
      for (const tool of tools.filter((candidate) => linked.includes(candidate.name))) expect(tool._meta?.['ui/resourceUri']).toBe(URI);
    }
  });

  it('leaves the tool results of a host without the extension as they were: the REST body as text and structured content', async () => {
    const submitted = await call(legacy, 'submit_human_task', validTask({ delivery: 'status_poll' }));
    expect(submitted.isError).toBeFalsy();
    expect(submitted.content).toEqual([{ type: 'text', text: JSON.stringify(submitted.structuredContent) }]);
    expect(submitted._meta).toBeUndefined();
    const status = await call(legacy, 'check_task_status', { task_id: submitted.structuredContent.task_id });
    const rest = (await (await fetch(`${t.url}/api/v1/tasks/${String(submitted.structuredContent.task_id)}`)).json()) as Json;
    expect(status.structuredContent).toEqual(rest);
    expect(status.content).toEqual([{ type: 'text', text: JSON.stringify(rest) }]);
  });

  it('answers a raw 2026-07-28 resources/read like the client does', async () => {
    const read = await modernRpc(t, 'resources/read', { uri: URI }, { headers: { 'mcp-name': URI } });
    expect(read.status).toBe(200);
    expect(((read.body.result as Json).contents as Json[])[0]?.mimeType).toBe(MIME);
  });
});
