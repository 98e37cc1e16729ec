import { describe, expect, it } from 'vitest';
import { modernRpc } from './mcp.modern.support.js';
import { rpc, useMcpClient } from './mcp.support.js';
import { STORES, useTestApp } from './support/app.js';

/** MCP Apps: a resource that does not exist is the MCP spec's "Resource not found" (-32002) on both revisions, never a 500. */

describe.each(STORES)('MCP Apps resources, bad input, on %s', (store) => {
  const t = useTestApp({ store });
  const legacy = useMcpClient(t);

  it('refuses an unknown resource URI on 2025-11-25 with -32002', async () => {
    await expect(legacy.readResource({ uri: 'ui://human-task/other.html' })).rejects.toMatchObject({ code: -32002 });
    const res = await rpc(t, { jsonrpc: '2.0', id: 7, method: 'resources/read', params: { uri: `ui://${'x'.repeat(5000)}` } });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { error?: { code: number; data?: { uri: string } } };
    expect(body.error?.code).toBe(-32002);
    expect(body.error?.data?.uri.length).toBeLessThanOrEqual(200);
  });

  it('refuses an unknown resource URI on 2026-07-28 as the SDK maps "Resource not found" there (-32602)', async () => {
    const read = await modernRpc(t, 'resources/read', { uri: 'file:///etc/passwd' }, { headers: { 'mcp-name': 'file:///etc/passwd' } });
    expect(read.status).toBe(200);
    expect(read.body.error).toEqual({ code: -32602, message: 'Resource not found' });
  });

  it('refuses resources/read without a uri as invalid params', async () => {
    const read = await modernRpc(t, 'resources/read', {});
    expect(read.body.error).toMatchObject({ code: -32602, message: expect.stringContaining('uri is required') });
  });
});
