import { request as httpRequest } from 'node:http';
import { describe, expect, it } from 'vitest';
import { safeNext } from '../src/web/operator/console-kit.js';
import { MCP_ACCEPT, rpc } from './mcp.support.js';
import { STORES, TEST_ADMIN_KEY, type TestApp, useTestApp, validTask } from './support/app.js';

/**
 * Issue 33, findings 4 and 7: invalid UTF-8 in a JSON body, an empty JSON-RPC batch, a
 * Content-Type with two charsets, and the console's `next=` path resolved before it is checked.
 */

/** POSTs raw bytes (fetch would re-encode a string), answering the status and parsed body. */
function postBytes(t: TestApp, path: string, body: Buffer, contentType = 'application/json'): Promise<{ status: number; body: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const url = new URL(path, t.url);
    const req = httpRequest(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        method: 'POST',
        headers: { 'content-type': contentType, accept: MCP_ACCEPT, 'content-length': body.length },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as Record<string, unknown> }),
        );
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** A valid task body whose description holds the given raw bytes. */
function taskWithBytes(bytes: number[]): Buffer {
  const json = JSON.stringify(validTask({ description: 'Check the opening hours of the bakery: MARK here.' }));
  const [before, after] = json.split('MARK') as [string, string];
  return Buffer.concat([Buffer.from(before, 'utf8'), Buffer.from(bytes), Buffer.from(after, 'utf8')]);
}

describe.each(STORES)('hostile encodings and protocol edges on %s', (store) => {
  const t = useTestApp({ store });

  it('refuses invalid UTF-8 inside a JSON string with 400 invalid_json, on every door that takes JSON', async () => {
    for (const bytes of [
      [0xff, 0xfe, 0xc3],
      [0xc3], // a lone lead byte
      [0xed, 0xa0, 0x80], // an encoded surrogate
      [0xc0, 0xaf], // an overlong "/"
    ]) {
      const res = await postBytes(t, '/api/v1/tasks', taskWithBytes(bytes));
      expect(res.status, bytes.join(' ')).toBe(400);
      expect(res.body.error).toBe('invalid_json');
    }
    const message = await postBytes(
      t,
      '/api/v1/messages',
      Buffer.concat([Buffer.from('{"message":"Hello \xff there, a question.","reply_to":"a@mail.example-agent.dev"}', 'latin1')]),
    );
    expect(message.status).toBe(400);
    expect(message.body.error).toBe('invalid_json');
    const mcp = await postBytes(t, '/mcp', Buffer.from('{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"x":"\xff"}}', 'latin1'));
    expect(mcp.status).toBe(400);
    expect(mcp.body.error).toBe('invalid_json');
    // Valid multi-byte UTF-8 (and a BOM) still passes.
    const fine = await postBytes(t, '/api/v1/tasks', Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), taskWithBytes([...Buffer.from('Café ☕ 🥐', 'utf8')])]));
    expect(fine.status).toBe(202);
  });

  it('refuses a Content-Type that names a charset twice, even utf-8 first', async () => {
    for (const type of [
      'application/json; charset=utf-8; charset=latin1',
      'application/json; charset=utf-8; charset=utf-8',
      'application/json; charset=latin1; charset=utf-8',
    ]) {
      const res = await fetch(`${t.url}/api/v1/tasks`, { method: 'POST', headers: { 'content-type': type }, body: JSON.stringify(validTask()) });
      expect(res.status, type).toBe(415);
      expect(((await res.json()) as { error: string }).error).toBe('unsupported_media_type');
    }
  });

  it('answers an empty JSON-RPC batch with -32600 Invalid Request', async () => {
    const res = await rpc(t, []);
    expect(res.status).toBe(400);
    const body = (await res.json()) as { jsonrpc: string; id: unknown; error: { code: number } };
    expect(body).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32600 } });
  });

  it("resolves the console's next= path before checking it stays in the console", async () => {
    for (const [next, expected] of [
      ['/operator/../../evil', '/operator'],
      ['/operator/%2e%2e/%2E%2E/evil', '/operator'],
      ['/operator/..', '/operator'],
      ['/operator/./tasks/../messages?x=1', '/operator/messages?x=1'],
      ['/operator/tasks/task-2030-0', '/operator/tasks/task-2030-0'],
      ['/operatorx', '/operator'],
      ['//evil.example/operator', '/operator'],
    ] as const) {
      const res = await fetch(`${t.url}/operator/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ key: TEST_ADMIN_KEY, next }).toString(),
        redirect: 'manual',
      });
      expect(res.status).toBe(303);
      expect(res.headers.get('location'), next).toBe(expected);
      expect(safeNext(next)).toBe(expected);
    }
  });
});
