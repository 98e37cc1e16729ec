import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_ADMIN_KEY, useTestApp, validTask } from './support/app.js';
import { freePort, waitForServer } from './support/net.js';

/**
 * Third-party tools nobody here wrote, run on the generated /openapi.json (issue 14):
 * - Redocly CLI (`recommended` rules): no error. Warnings tolerated, and only these:
 *   `info-license` (the project has chosen no licence to publish) and `no-server-example.com`
 *   (the test deployment's BASE_URL is localhost); `operation-2xx-response` on GET /mcp only.
 * - Spectral (`spectral:oas`): no error and no warning, except `operation-success-response` on
 *   GET /mcp, which by design only ever answers 405 (contract: the MCP server is stateless).
 * - Prism as a validating proxy (`prism proxy --errors`) in front of the running service: happy
 *   and error flows go through it, and no request or response may violate the document.
 * The tools are slow to start, so one app, one document and one Prism serve the whole file.
 */

const run = promisify(execFile);
const BIN = path.resolve('node_modules/.bin');

interface Finding {
  rule: string;
  severity: string;
  where: string;
  message: string;
}

describe('the OpenAPI document through peer tools', () => {
  const t = useTestApp({ env: { STATUS_POLL_LIMIT_PER_DAY: '1' } });
  let dir: string;
  let file: string;
  let prism: ChildProcess | undefined;
  let prismUrl = '';
  let prismLog = '';

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'hts-openapi-'));
    file = path.join(dir, 'openapi.json');
    writeFileSync(file, await (await fetch(`${t.url}/openapi.json`)).text());
    writeFileSync(path.join(dir, '.spectral.yaml'), 'extends: ["spectral:oas"]\n');
    const port = await freePort();
    prismUrl = `http://127.0.0.1:${port}`;
    prism = spawn(path.join(BIN, 'prism'), ['proxy', file, t.url, '--errors', '--cors=false', '-p', String(port), '-h', '127.0.0.1'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    prism.stdout?.on('data', (chunk: Buffer) => {
      prismLog += chunk.toString();
    });
    prism.stderr?.on('data', (chunk: Buffer) => {
      prismLog += chunk.toString();
    });
    await waitForServer(`${prismUrl}/api/v1/health`, 90_000);
  }, 120_000);

  afterAll(async () => {
    prism?.kill('SIGTERM');
    rmSync(dir, { recursive: true, force: true });
  });

  it('Redocly lint: no error, and only the warnings this file allows', async () => {
    const result = await run(path.join(BIN, 'redocly'), ['lint', file, '--format=json'], { cwd: dir, maxBuffer: 16 << 20 }).catch(
      (error: { stdout?: string }) => ({ stdout: error.stdout ?? '' }),
    );
    const report = JSON.parse(result.stdout.slice(result.stdout.indexOf('{'))) as {
      problems: Array<{ ruleId: string; severity: string; message: string; location: Array<{ pointer?: string }> }>;
    };
    const findings: Finding[] = report.problems.map((p) => ({ rule: p.ruleId, severity: p.severity, where: p.location[0]?.pointer ?? '', message: p.message }));
    const allowed = (f: Finding) =>
      f.severity === 'warn' &&
      (f.rule === 'info-license' || f.rule === 'no-server-example.com' || (f.rule === 'operation-2xx-response' && f.where === '#/paths/~1mcp/get/responses'));
    expect(findings.filter((f) => !allowed(f))).toEqual([]);
  }, 90_000);

  it('Spectral spectral:oas: no error and no warning but the one this file allows', async () => {
    const result = await run(path.join(BIN, 'spectral'), ['lint', file, '-r', path.join(dir, '.spectral.yaml'), '-f', 'json', '--quiet'], {
      cwd: dir,
      maxBuffer: 16 << 20,
    }).catch((error: { stdout?: string }) => ({ stdout: error.stdout ?? '' }));
    const report = JSON.parse(result.stdout.trim() || '[]') as Array<{ code: string; severity: number; message: string; path: string[] }>;
    const findings = report.map((p) => ({
      rule: p.code,
      severity: ['error', 'warn', 'info', 'hint'][p.severity] ?? String(p.severity),
      where: p.path.join('.'),
      message: p.message,
    }));
    const allowed = (f: Finding) => f.rule === 'operation-success-response' && f.where === 'paths./mcp.get.responses';
    expect(findings.filter((f) => !allowed(f) && (f.severity === 'error' || f.severity === 'warn'))).toEqual([]);
  }, 90_000);

  /** Sends a request through Prism; fails on any violation Prism reports. */
  async function through(
    method: string,
    route: string,
    init: { body?: unknown; headers?: Record<string, string> } = {},
  ): Promise<{ status: number; body: unknown }> {
    const res = await fetch(`${prismUrl}${route}`, {
      method,
      headers: { accept: 'application/json', ...(init.body === undefined ? {} : { 'content-type': 'application/json' }), ...init.headers },
      ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
    });
    const text = await res.text();
    expect(res.headers.get('sl-violations'), `${method} ${route}: ${res.headers.get('sl-violations')}`).toBeNull();
    expect(text, `${method} ${route}`).not.toContain('stoplight.io/prism/errors');
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      // text documents
    }
    return { status: res.status, body };
  }

  const admin = { authorization: `Bearer ${TEST_ADMIN_KEY}` };

  it('happy flows pass Prism with no violation', async () => {
    expect((await through('GET', '/api/v1/health')).status).toBe(200);
    const submitted = await through('POST', '/api/v1/tasks', { body: validTask({ deadline: null, requester: null, budget_usd: null }) });
    expect(submitted.status).toBe(202);
    const id = (submitted.body as { task_id: string }).task_id;
    expect(
      (
        await through('POST', '/api/v1/tasks', {
          body: { task_type: 'data_collection', description: 'Count the benches in the central park.', delivery: 'status_poll' },
        })
      ).status,
    ).toBe(202);
    expect((await through('GET', `/api/v1/tasks/${id}`)).status).toBe(200);
    expect((await through('POST', '/api/v1/messages', { body: { message: `A question about ${id}.`, reply_to: 'agent@mail.example-agent.dev' } })).status).toBe(
      201,
    );
    const page = await through('GET', '/api/v1/services?limit=2');
    expect(page.status).toBe(200);
    const cursor = (page.body as { next_cursor: string | null }).next_cursor;
    if (cursor) expect((await through('GET', `/api/v1/services?limit=2&cursor=${encodeURIComponent(cursor)}`)).status).toBe(200);
    for (const doc of [
      '/agent.json',
      '/.well-known/human.json',
      '/.well-known/capabilities.json',
      '/.well-known/services.json',
      '/.well-known/jwks.json',
      '/.well-known/mcp',
      '/llms.txt',
      '/api.md',
    ]) {
      expect((await through('GET', doc)).status, doc).toBe(200);
    }
    expect((await through('GET', '/api/v1/admin/tasks', { headers: admin })).status).toBe(200);
    expect((await through('GET', `/api/v1/admin/tasks/${id}`, { headers: admin })).status).toBe(200);
    expect((await through('PATCH', `/api/v1/admin/tasks/${id}`, { headers: admin, body: { status: 'accepted', eta: '2030-03-12T12:00:00Z' } })).status).toBe(
      200,
    );
    expect(
      (await through('PATCH', `/api/v1/tasks/${id}`, { headers: admin, body: { status: 'delivered', operator_notes: 'Open on Sundays from 8 to 12.' } }))
        .status,
    ).toBe(200);
    expect((await through('GET', `/api/v1/tasks/${id}`)).body).toMatchObject({ status: 'delivered' });
    const block = await through('POST', '/api/v1/admin/blocklist', {
      headers: admin,
      body: { kind: 'domain', value: 'spam.example-agent.dev', reason: 'test' },
    });
    expect(block.status).toBe(201);
    expect((await through('GET', '/api/v1/admin/blocklist', { headers: admin })).status).toBe(200);
    expect((await through('DELETE', `/api/v1/admin/blocklist/${(block.body as { id: string }).id}`, { headers: admin })).status).toBe(204);
    expect((await through('GET', '/api/v1/admin/stats', { headers: admin })).status).toBe(200);
    expect((await through('GET', '/api/v1/admin/messages', { headers: admin })).status).toBe(200);
  }, 60_000);

  it('error flows pass Prism with no violation: each error is one the document names for its operation', async () => {
    const task = validTask();
    expect((await through('POST', '/api/v1/tasks', { body: task })).status).toBe(202);
    expect((await through('POST', '/api/v1/tasks', { body: task })).body).toMatchObject({ error: 'duplicate_task' });
    expect((await through('POST', '/api/v1/tasks', { body: validTask({ deadline: '2020-01-01T00:00:00Z' }) })).status).toBe(422);
    expect(
      (
        await through('POST', '/api/v1/tasks', {
          body: { task_type: 'data_collection', description: 'Count the lamp posts on Elm Road.', delivery: 'status_poll' },
        })
      ).body,
    ).toMatchObject({ error: 'rate_limited' });
    expect((await through('GET', `/api/v1/tasks/task-2030-${'0'.repeat(32)}`)).body).toMatchObject({ error: 'task_not_found' });
    expect((await through('GET', '/api/v1/services?cursor=forged.cursor')).body).toMatchObject({ error: 'invalid_cursor' });
    expect((await through('GET', '/mcp')).body).toMatchObject({ error: 'method_not_allowed' });
    expect((await through('DELETE', '/api/v1/admin/blocklist/no-such-entry', { headers: admin })).body).toMatchObject({ error: 'not_found' });
    expect((await through('PATCH', `/api/v1/admin/tasks/task-2030-${'0'.repeat(32)}`, { headers: admin, body: { status: 'accepted' } })).body).toMatchObject({
      error: 'task_not_found',
    });
    const open = (await through('POST', '/api/v1/tasks', { body: validTask() })).body as { task_id: string };
    expect(
      (await through('PATCH', `/api/v1/tasks/${open.task_id}`, { headers: admin, body: { status: 'delivered', operator_notes: 'x' } })).body,
    ).toMatchObject({ error: 'invalid_transition' });
  }, 60_000);

  it('Prism enforces the document: a task without contact_email and without status_poll is refused before the service', async () => {
    const res = await fetch(`${prismUrl}/api/v1/tasks`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ task_type: 'data_collection', description: 'Count the benches in the park.' }),
    });
    expect(res.status).toBe(422);
    expect(await res.text()).toContain('stoplight.io/prism/errors#UNPROCESSABLE_ENTITY');
    expect(prismLog).not.toMatch(/Violation|VIOLATIONS/);
  });
});
